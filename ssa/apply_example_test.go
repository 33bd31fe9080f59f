package ssa_test

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ssa"
)

// One field manager's intent, built as unstructured content (Func) and, for
// the applies that can take it, in its generated apply configuration type
// (Typed), which spares the detour through content. A build reports nothing
// beyond its error here: the zero Built.
func ExampleApplier_Apply() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	tc := applyconfiguration.NewTypeConverter(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithTypeConverters(tc).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "demo"}}).
		Build()
	applier, _ := ssa.NewApplier(c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))

	w := &v1alpha1.Widget{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "w1"}, w)
	target, _ := applier.TargetFor(w, ssa.StatusSubresource, "networking")
	build := ssa.Build{
		Func: func(intent *unstructured.Unstructured, _ client.Object) (ssa.Built, error) {
			return ssa.Built{}, unstructured.SetNestedField(intent.Object, "10.0.0.7", "status", "endpoint")
		},
		Typed: &ssa.TypedBuild{
			Type: reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration](),
			Mutate: func(ac any, _ client.Object) (ssa.Built, error) {
				ac.(*acv1alpha1.WidgetApplyConfiguration).WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("10.0.0.7"))
				return ssa.Built{}, nil
			},
		},
	}
	res, err := applier.Apply(ctx, target, w, build)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sent:", res.Sent, "attempts:", res.Attempts)
	fmt.Println("endpoint:", res.Object.(*v1alpha1.Widget).Status.Endpoint)
	// Output:
	// sent: true attempts: 1
	// endpoint: 10.0.0.7
}
