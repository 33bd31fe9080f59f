package conflicts_test

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
)

// updateOwnerConflict is the 409 kube-apiserver returns when manager
// "network-controller" applies a Ready condition that "legacy-controller" set
// with a merge patch.
func updateOwnerConflict() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: `Apply failed with 1 conflict: conflict with "legacy-controller" using demo.statusapply.io/v1alpha1: .status.conditions[type="Ready"].status`,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
			Type:    metav1.CauseTypeFieldManagerConflict,
			Message: `conflict with "legacy-controller" using demo.statusapply.io/v1alpha1`,
			Field:   `.status.conditions[type="Ready"].status`,
		}}},
	}}
}

func ExampleClassify() {
	stale := apierrors.NewConflict(schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}, "w1",
		errors.New("the object has been modified; please apply your changes to the latest version and try again"))

	fmt.Println(conflicts.Classify(nil))
	fmt.Println(conflicts.Classify(stale))
	fmt.Println(conflicts.Classify(fmt.Errorf("flush: %w", updateOwnerConflict())))
	fmt.Println(conflicts.Classify(errors.Join(stale, updateOwnerConflict())))
	// Output:
	// None
	// Stale
	// FieldManagerConflict
	// FieldManagerConflict
}

func ExampleFromError() {
	widget := ownership.ObjectRef{
		GVK:       schema.GroupVersionKind{Group: "demo.statusapply.io", Version: "v1alpha1", Kind: "Widget"},
		Namespace: "ns", Name: "w1",
	}
	cerr, ok := conflicts.FromError(updateOwnerConflict(), "network-controller", widget)
	fmt.Println(ok)
	fmt.Println(cerr)
	c := cerr.Conflicts[0]
	fmt.Println(c.Manager, c.Operation, c.APIVersion, c.ConditionType)
	fmt.Println(apierrors.IsConflict(cerr))
	// Output:
	// true
	// manager network-controller cannot change .status.conditions[type="Ready"].status of Widget ns/w1: owned by legacy-controller (Update)
	// legacy-controller Update demo.statusapply.io/v1alpha1 Ready
	// true
}

func ExamplePolicy_Decide() {
	found, _ := conflicts.Parse(updateOwnerConflict())

	fmt.Println(conflicts.Fail().Decide(found).Action)

	yield := conflicts.Yield().Decide(found)
	fmt.Println(yield.Action, yield.Paths)

	take := conflicts.TakeDeclared(conflicts.Declaration{ConditionTypes: []string{"Ready"}})
	fmt.Println(take.Decide(found).Action)

	other := conflicts.TakeDeclared(conflicts.Declaration{ConditionTypes: []string{"Reachable"}})
	d := other.Decide(found)
	fmt.Println(d.Action, d.Conflicts[0])
	// Output:
	// Fail
	// RetryWithout [.status.conditions[type="Ready"].status]
	// Force
	// Fail .status.conditions[type="Ready"].status owned by legacy-controller (Update)
}

func ExampleRemoveFields() {
	intent := func() map[string]interface{} {
		return map[string]interface{}{
			"status": map[string]interface{}{
				"endpoint": "10.0.0.1",
				"conditions": []interface{}{
					map[string]interface{}{"type": "Ready", "status": "False", "reason": "Down"},
					map[string]interface{}{"type": "Degraded", "status": "True", "reason": "Slow"},
				},
			},
		}
	}
	contested := []fieldpath.Path{
		conflicts.MustParsePath(`.status.conditions[type="Ready"].status`),
		conflicts.MustParsePath(`.status.conditions[type="Ready"].reason`),
	}

	// A writer that never applied Ready gives it up whole.
	first := intent()
	removed, err := conflicts.RemoveFields(first, nil, contested...)
	fmt.Println(removed, err)
	fmt.Println(first["status"])

	// A writer that applied Ready before still owns its key: the key stays,
	// so the condition stays on the object with its new owner's values.
	owned := fieldpath.NewSet(fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Ready"), "type"))
	again := intent()
	removed, err = conflicts.RemoveFields(again, owned, contested...)
	fmt.Println(removed, err)
	fmt.Println(again["status"])
	// Output:
	// [.status.conditions[type="Ready"]] <nil>
	// map[conditions:[map[reason:Slow status:True type:Degraded]] endpoint:10.0.0.1]
	// [.status.conditions[type="Ready"].status .status.conditions[type="Ready"].reason] <nil>
	// map[conditions:[map[type:Ready] map[reason:Slow status:True type:Degraded]] endpoint:10.0.0.1]
}

func ExampleRequeueAfter() {
	if d, ok := conflicts.RequeueAfter(updateOwnerConflict()); ok {
		fmt.Println("requeue after", d)
	}
	// Output:
	// requeue after 30s
}
