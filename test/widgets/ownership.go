package widgets

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
)

// OwnsCondition reports whether manager's Apply entry on w's status owns the
// condition of condType itself, the list element and not only some of its
// fields. It fails on managedFields that do not decode, and on an object
// without any (read through a cache that strips them), rather than answer
// false for an object it cannot tell about.
func OwnsCondition(w *v1alpha1.Widget, manager, condType string) (bool, error) {
	o, err := ownership.Inspect(w)
	if err != nil {
		return false, err
	}
	for _, e := range o.Managers(manager) {
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ownership.StatusSubresource {
			return e.Owns(ownership.ConditionPath(condType)), nil
		}
	}
	return false, nil
}
