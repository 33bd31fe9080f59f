package ssa

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
)

// ErrRemovesForeignField is wrapped when an apply would remove a field (such
// as a condition) that another field manager owns: a writer can only release
// what it owns, and the API server keeps a field while any manager owns it, so
// the removal would not happen. A removal is a condition RemovingConditions
// declares, a condition the manager owns that an incremental intent leaves out
// (a Mutator dropped it from its apply configuration, an Edit from its
// object), or a field an Edit removes. The error names each field and its owners; the
// *Error around it names the object. It is refused before any request when the
// observed managedFields show the owner, else from the response of a dry run of
// the apply, sent first, that still holds the field; either way nothing is
// written. An apply whose own response still holds the field (another manager
// took it meanwhile) is refused the same way once sent. A batch keeps the entry
// queued, as for any error.
var ErrRemovesForeignField = errors.New("removes a field another field manager owns")

// RemovingConditions declares that the apply removes the status conditions of
// types: they are left out of the intent whatever the build puts in, and the
// apply is refused with ErrRemovesForeignField, naming the owner, when another
// field manager owns one of them (alone or with this one), which would keep
// it: before any request when the observed managedFields show it, else from
// the response of a dry run sent first. An object read without any
// managedFields, where the manager owns nothing, is first made to store the
// API server's attribution to before-first-apply instead (an apply claiming
// nothing, guarded by uid and resourceVersion; not in a dry run): what
// before-first-apply alone holds is then taken back and removed. In a batch entry the removals of every
// contribution add up; see batcher.RemoveCondition. An incremental intent
// that leaves out a condition the manager owns (a Mutator dropped it from its
// apply configuration, an Edit from its object) removes it too, and is
// refused the same way; a condition only another manager owns is not in a
// Mutator's apply configuration, so only RemovingConditions can name it.
func RemovingConditions(types ...string) ApplyOption { return removedConditions(types) }

type removedConditions []string

func (r removedConditions) ApplyToApply(o *ApplyOptions) {
	for _, t := range r {
		if !slices.Contains(o.RemovedConditions, t) {
			o.RemovedConditions = append(o.RemovedConditions, t)
		}
	}
}

// checkRemovedConditions refuses empty condition types, before any request.
func checkRemovedConditions(types []string) error {
	if slices.Contains(types, "") {
		return invalidf("a removed condition has an empty type")
	}
	return nil
}

// withoutConditions removes the conditions of types from content's
// status.conditions, leaving the list out once empty.
func withoutConditions(content map[string]any, types []string) {
	items, found, _ := unstructured.NestedFieldNoCopy(content, "status", "conditions")
	list, ok := items.([]any)
	if !found || !ok {
		return
	}
	kept := slices.DeleteFunc(slices.Clone(list), func(item any) bool {
		return slices.Contains(types, conditionType(item))
	})
	if len(kept) == len(list) {
		return
	}
	if len(kept) == 0 {
		unstructured.RemoveNestedField(content, "status", "conditions")
		return
	}
	_ = unstructured.SetNestedField(content, kept, "status", "conditions")
}

func conditionType(item any) string {
	m, _ := item.(map[string]any)
	t, _ := m["type"].(string)
	return t
}

// heldConditions returns the types of obj's status conditions among types.
func heldConditions(obj client.Object, types []string) ([]string, error) {
	content, err := objects.Content(obj, []string{"status"})
	if err != nil {
		return nil, err
	}
	items, _, _ := unstructured.NestedFieldNoCopy(content, "status", "conditions")
	list, _ := items.([]any)
	var held []string
	for _, item := range list {
		if t := conditionType(item); t != "" && slices.Contains(types, t) && !slices.Contains(held, t) {
			held = append(held, t)
		}
	}
	return held, nil
}

// confirmsRemovals reports whether the apply must be tried even when it
// changes nothing the manager owns, so that a response tells whether the
// removals would take effect: obs, without managedFields, does not say who
// owns a condition it holds.
func confirmsRemovals(types []string, obs client.Object) (bool, error) {
	if len(types) == 0 || ownership.HasManagedFields(obs) {
		return false, nil
	}
	held, err := heldConditions(obs, types)
	return len(held) > 0, err
}

// refuseRemovals refuses, before any request, removing conditions another
// manager owns on obs. Without managedFields nothing is known: the response
// decides (see refuseKept). held, with the refusal, are the conditions'
// paths when before-first-apply alone holds them: no writer does, and the
// Applier takes them back (see recoverRemoved).
func refuseRemovals(t Target, types []string, obs client.Object) (held *fieldpath.Set, err error) {
	if len(types) == 0 || !ownership.HasManagedFields(obs) {
		return nil, nil
	}
	owners, err := ownership.Inspect(obs)
	if err != nil {
		return nil, err
	}
	foreign, beforeFirstApplyAlone := foreignOwners(t, types, owners)
	if len(foreign) == 0 {
		return nil, nil
	}
	err = fmt.Errorf("%w: %s", ErrRemovesForeignField, strings.Join(foreign, "; "))
	if beforeFirstApplyAlone {
		held = fieldpath.NewSet()
		for _, condType := range types {
			held.Insert(ownership.ConditionPath(condType))
		}
	}
	return held, err
}

// refuseKept refuses a sent apply whose response, resp, still holds a
// removed condition, naming its owners from the response's managedFields.
func refuseKept(t Target, types []string, resp client.Object) error {
	held, err := heldConditions(resp, types)
	if err != nil || len(held) == 0 {
		return err
	}
	var foreign []string
	if ownership.HasManagedFields(resp) {
		owners, err := ownership.Inspect(resp)
		if err != nil {
			return err
		}
		foreign, _ = foreignOwners(t, held, owners)
	}
	for _, condType := range held {
		p := ownership.ConditionPath(condType).String()
		if !slices.ContainsFunc(foreign, func(s string) bool { return strings.HasPrefix(s, p+" ") }) {
			foreign = append(foreign, p+" is owned by a manager the response does not name")
		}
	}
	sort.Strings(foreign)
	return fmt.Errorf("%w: the API server kept it: %s", ErrRemovesForeignField, strings.Join(foreign, "; "))
}

// foreignOwners lists, sorted, "<condition> is owned by <entry>" for each
// entry that owns part of a condition of types, but for the one t's apply
// releases (see ownership.Entry.AppliedBy): the API server keeps a condition
// while any other entry owns part of it. It also reports whether every entry
// listed is before-first-apply's, which the manager may take back.
func foreignOwners(t Target, types []string, owners *ownership.Ownership) (foreign []string, beforeFirstApplyAlone bool) {
	beforeFirstApplyAlone = true
	for _, condType := range types {
		for _, e := range owners.ConditionOwners(condType) {
			if !e.AppliedBy(t.Manager, string(t.Subresource)) {
				foreign = append(foreign, fmt.Sprintf("%s is owned by %s", ownership.ConditionPath(condType), e))
				beforeFirstApplyAlone = beforeFirstApplyAlone && e.BeforeFirstApply()
			}
		}
	}
	sort.Strings(foreign)
	return foreign, beforeFirstApplyAlone
}

// releasedConditions returns the types of the status conditions the
// manager owns (st) that in, an incremental intent, leaves out, but for those
// RemovingConditions declares. The apply configuration a Mutator or an Edit
// is handed starts from what the manager owns, so leaving a condition out is
// a removal, checked as a declared one is. A declarative intent states all
// it keeps: what it leaves out is released, not removed.
func (r *applyRun) releasedConditions(st *ownedState, in *prepared) ([]string, error) {
	if r.opts.Mode != Incremental {
		return nil, nil
	}
	var owned, kept []string
	if in.ac != nil {
		f := st.lastForm()
		lay := r.layouts.shared(in.acType)
		if f == nil || f.typ != in.acType || lay == nil {
			// prepareTyped built in on st's form of its type: not reached.
			return nil, fmt.Errorf("no owned form of %v to compare the intent with", in.acType)
		}
		ownedConds, _ := lay.statusConditions(f.ac)
		keptConds, _ := lay.statusConditions(in.ac)
		owned, kept = acConditionTypes(ownedConds), acConditionTypes(keptConds)
	} else {
		content, err := st.ownedContent()
		if err != nil {
			return nil, err
		}
		owned, kept = contentConditionTypes(content), contentConditionTypes(in.content)
	}
	return releasedTypes(owned, kept, r.opts.RemovedConditions), nil
}

// releasedTypes returns the types of owned that are neither in kept nor in
// declared, in owned's order.
func releasedTypes(owned, kept, declared []string) []string {
	var released []string
	for _, t := range owned {
		if !slices.Contains(kept, t) && !slices.Contains(declared, t) && !slices.Contains(released, t) {
			released = append(released, t)
		}
	}
	return released
}

func acConditionTypes(conds []metav1ac.ConditionApplyConfiguration) []string {
	types := make([]string, 0, len(conds))
	for _, c := range conds {
		if c.Type != nil && *c.Type != "" {
			types = append(types, *c.Type)
		}
	}
	return types
}

func contentConditionTypes(content map[string]any) []string {
	items, _, _ := unstructured.NestedFieldNoCopy(content, "status", "conditions")
	list, _ := items.([]any)
	types := make([]string, 0, len(list))
	for _, item := range list {
		if t := conditionType(item); t != "" {
			types = append(types, t)
		}
	}
	return types
}

// responseObject is res's object after a sent apply: decoded, or decoded now
// from the response kept as JSON.
func responseObject(res *Result) (client.Object, error) {
	if res.Object != nil {
		return res.Object, nil
	}
	return decodeResponse(res.Response)
}

func decodeResponse(raw []byte) (client.Object, error) {
	u := &unstructured.Unstructured{}
	if err := objects.Decode(raw, u); err != nil {
		return nil, err
	}
	return u, nil
}
