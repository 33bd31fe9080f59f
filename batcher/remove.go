package batcher

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/ssa"
)

// RemoveCondition queues the removal of obj's status condition of condType by
// manager. At Flush the manager's apply leaves the condition out, whatever the
// entry's other contributions set, and the API server deletes it. A removal
// that cannot take effect, because another field manager owns the condition
// (alone, or with manager), is refused with ssa.ErrRemovesForeignField naming
// the owner, with nothing written: before any request when the observation's
// managedFields show the owner, else from the response of a dry run of the
// apply that still holds the condition. Either way the entry stays queued.
// A condition only before-first-apply holds (managedFields were lost) is
// taken back and removed instead, also on an object without any
// managedFields (see ssa.RemovingConditions), but in a dry run.
//
// A Mutator's apply configuration holds only what the manager owns: dropping
// a condition from it is checked the same way, but a condition only another
// manager owns is not there to drop. RemoveCondition is the entry's
// ssa.RemovingConditions(condType); an Edit's removals are checked the same way.
func RemoveCondition[O client.Object](b *Batch, obj O, manager, condType string, opts ...ssa.ApplyOption) error {
	var invalid error
	if condType == "" {
		invalid = fmt.Errorf("%w: empty condition type", ssa.ErrInvalidInput)
	}
	// Removed in queue order too, so that a later Mutator of the entry sees it gone.
	remove := func(ac *unstructured.Unstructured, _ O) error {
		removeCondition(ac.Object, condType)
		return nil
	}
	c := contribution{fn: Mutator[O, *unstructured.Unstructured](remove), call: mutatorCaller[O, *unstructured.Unstructured]{}}
	opts = append(slices.Clip(opts), ssa.RemovingConditions(condType))
	return contributeWith(b, obj, ssa.StatusSubresource, manager, opts, c, invalid)
}

// removeCondition removes condType's condition from content's
// status.conditions, leaving the list out once empty, as a typed apply
// configuration's omitempty does.
func removeCondition(content map[string]any, condType string) {
	conds, found, err := unstructured.NestedSlice(content, "status", "conditions")
	if !found || err != nil {
		return
	}
	kept := slices.DeleteFunc(conds, func(item any) bool {
		m, ok := item.(map[string]any)
		return ok && m["type"] == condType
	})
	if len(kept) == 0 {
		unstructured.RemoveNestedField(content, "status", "conditions")
		return
	}
	_ = unstructured.SetNestedSlice(content, kept, "status", "conditions")
}
