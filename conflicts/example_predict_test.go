package conflicts_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
)

func ExamplePredict() {
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	tc := applyconfiguration.NewTypeConverter(scheme)

	// The Widget as read from the API server: "legacy" set the phase with a
	// merge patch of status.
	observed := &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "legacy", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
			APIVersion: "demo.statusapply.io/v1alpha1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:phase":{}}}`),
		}}},
		Status: v1alpha1.WidgetStatus{Phase: "Running"},
	}

	// What "network" is about to apply.
	ac := acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().
		WithPhase("Degraded").
		WithConditions(metav1ac.Condition().WithType("Reachable").WithStatus(metav1.ConditionFalse).
			WithReason("NoRoute").WithMessage("no route").WithLastTransitionTime(metav1.Now())))
	intent, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(ac)

	found, err := conflicts.Predict(observed, tc, "network", "status", &unstructured.Unstructured{Object: intent})
	fmt.Println(found, err)
	// Output:
	// [.status.phase owned by legacy (Update, subresource status)] <nil>
}
