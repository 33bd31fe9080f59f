package ctrlbatch

import (
	"context"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/config/crd"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/schemas/crdschema"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// newApplier returns an Applier for the example API through a client whose
// requests are counted.
func newApplier(opts ...ssa.Option) (*ssa.Applier, *apiserver.Requests) {
	c, requests, err := env.CountingClient()
	Expect(err).NotTo(HaveOccurred())
	a, err := widgets.NewApplier(c, opts...)
	Expect(err).NotTo(HaveOccurred())
	return a, requests
}

func createWidget(ctx context.Context, ns, name string) *v1alpha1.Widget {
	w, err := widgets.Create(ctx, env.Client, ns, name)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return w
}

func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	w, err := widgets.Get(ctx, env.Client, key)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return w
}

func request(w client.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(w)}
}

// conditionedWidget is a Widget with conditions accessors, as Cluster API
// and Flux types have: the conditions helpers take any such type. It is
// registered under the Widget's kind in a scheme of its own.
type conditionedWidget struct {
	v1alpha1.Widget `json:",inline"`
}

func (w *conditionedWidget) GetConditions() []metav1.Condition  { return w.Status.Conditions }
func (w *conditionedWidget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }
func (w *conditionedWidget) DeepCopyObject() runtime.Object {
	return &conditionedWidget{Widget: *w.DeepCopy()}
}

type conditionedWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []conditionedWidget `json:"items"`
}

func (l *conditionedWidgetList) DeepCopyObject() runtime.Object {
	out := &conditionedWidgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*conditionedWidget))
	}
	return out
}

// newConditionedApplier returns an Applier and a client whose scheme maps
// the Widget kind to conditionedWidget. The generated type converter finds
// schemas by Go type, so the Applier's come from the example CRDs.
func newConditionedApplier() (*ssa.Applier, client.Client) {
	s := runtime.NewScheme()
	Expect(clientgoscheme.AddToScheme(s)).To(Succeed())
	gv := v1alpha1.SchemeGroupVersion
	s.AddKnownTypeWithName(gv.WithKind("Widget"), &conditionedWidget{})
	s.AddKnownTypeWithName(gv.WithKind("WidgetList"), &conditionedWidgetList{})
	metav1.AddToGroupVersion(s, gv)
	c, err := client.New(env.Config, client.Options{Scheme: s})
	Expect(err).NotTo(HaveOccurred())
	crds, err := crd.CRDs()
	Expect(err).NotTo(HaveOccurred())
	tc, err := crdschema.FromCRDs(crds...)
	Expect(err).NotTo(HaveOccurred())
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))
	Expect(err).NotTo(HaveOccurred())
	return a, c
}

// acWidget is the Widget's apply configuration, for inline mutators.
type acWidget = acv1alpha1.WidgetApplyConfiguration
