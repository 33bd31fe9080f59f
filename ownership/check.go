package ownership

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// CheckPlan tells, before anything is written, whether plan means something
// for objs, the objects a migration is about to run on as read from the API
// server (managedFields included). A plan that names a manager nobody has
// would otherwise "succeed" on every object, changing nothing: a misspelled
// name on a run over hundreds of objects looks like a finished migration.
//
// The error wraps ErrPlanMismatch (and so ErrInvalidPlan) and names every
// problem at once:
//
//   - a Managers source that is a legacy writer (see Entry.Legacy) on none of
//     the objects: present only as an Apply manager, or absent while its
//     destination is no Apply manager anywhere either;
//   - a Conditions type that no entry of any object holds, or that only
//     managers other than its destination hold without a legacy writer
//     holding it anywhere;
//   - a destination, of Managers or Conditions, that is a legacy writer on
//     some object, except a legacy manager handed to its own name (the usual
//     csaupgrade move of one controller from Update to Apply).
//
// An object without managedFields counts as held by before-first-apply, the
// manager the API server will attribute its status to when it is seeded.
// So that running a finished migration again stays a no-op, a source that
// is gone while its destination applies, and a condition type held by its
// destination alone, are accepted.
// No objects, nothing to check: nil.
func CheckPlan[T metav1.Object](plan Plan, objs []T) error {
	if err := plan.Validate(); err != nil {
		return err
	}
	if len(objs) == 0 {
		return nil
	}
	type seen struct{ legacy, other int }
	managers := map[string]*seen{}
	note := func(name string, legacy bool) {
		s := managers[name]
		if s == nil {
			s = &seen{}
			managers[name] = s
		}
		if legacy {
			s.legacy++
		} else {
			s.other++
		}
	}
	// conditions maps a condition type to the managers holding it, legacy
	// ones marked, over all objects.
	conditions := map[string]map[string]bool{}
	holds := func(condType, manager string, legacy bool) {
		if conditions[condType] == nil {
			conditions[condType] = map[string]bool{}
		}
		conditions[condType][manager] = conditions[condType][manager] || legacy
	}
	for _, obj := range objs {
		if len(obj.GetManagedFields()) == 0 {
			note(BeforeFirstApplyManager, true)
			for _, t := range statusConditionTypes(obj) {
				holds(t, BeforeFirstApplyManager, true)
			}
			continue
		}
		o, err := Inspect(obj)
		if err != nil {
			return err
		}
		perObject := map[string]bool{}
		for _, e := range o.Entries {
			perObject[e.Manager] = perObject[e.Manager] || e.Legacy()
			for _, t := range e.ConditionTypes() {
				holds(t, e.Manager, e.Legacy())
			}
		}
		for name, legacy := range perObject {
			note(name, legacy)
		}
	}

	n := len(objs)
	var errs []error
	for _, from := range slices.Sorted(maps.Keys(plan.Managers)) {
		to := plan.Managers[from]
		switch s := managers[from]; {
		case s == nil && managers[to] != nil && managers[to].other > 0:
			// Gone, and its successor applies: migrated by an earlier run.
		case s == nil:
			errs = append(errs, fmt.Errorf("--from %s: no manager of that name on any of the %d objects", from, n))
		case s.legacy == 0:
			errs = append(errs, fmt.Errorf("--from %s: not a legacy writer (Update) on any of the %d objects, "+
				"it is an Apply manager on %d: only legacy ownership is migrated", from, n, s.other))
		}
	}
	for _, condType := range slices.Sorted(maps.Keys(plan.Conditions)) {
		to := plan.Conditions[condType]
		holders := conditions[condType]
		switch {
		case len(holders) == 0:
			errs = append(errs, fmt.Errorf("--condition %s: no manager holds that condition type on any of the %d objects", condType, n))
		case !anyLegacy(holders) && !holdsOnly(holders, to):
			errs = append(errs, fmt.Errorf("--condition %s: no legacy writer holds it on any of the %d objects (held by %v)",
				condType, n, slices.Sorted(maps.Keys(holders))))
		}
	}
	destinations := map[string][]string{} // destination -> the flags naming it
	for from, to := range plan.Managers {
		if from != to {
			destinations[to] = append(destinations[to], "--from "+from+"="+to)
		}
	}
	for condType, to := range plan.Conditions {
		destinations[to] = append(destinations[to], "--condition "+condType+"="+to)
	}
	for _, to := range slices.Sorted(maps.Keys(destinations)) {
		if s := managers[to]; s != nil && s.legacy > 0 {
			slices.Sort(destinations[to])
			errs = append(errs, fmt.Errorf("%v: %s is a legacy writer (Update) on %d of the %d objects; "+
				"hand its fields to an apply manager's name, or upgrade it to its own name with --from %s=%s",
				destinations[to], to, s.legacy, n, to, to))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrPlanMismatch, errors.Join(errs...))
}

// anyLegacy reports whether a legacy writer is among holders (manager ->
// whether it holds the condition as a legacy writer).
func anyLegacy(holders map[string]bool) bool {
	for _, legacy := range holders {
		if legacy {
			return true
		}
	}
	return false
}

// holdsOnly reports whether manager is the only holder in holders.
func holdsOnly(holders map[string]bool, manager string) bool {
	_, ok := holders[manager]
	return ok && len(holders) == 1
}

// statusConditionTypes lists the types in obj's .status.conditions, read
// from its content; for objects without managedFields only.
func statusConditionTypes(obj metav1.Object) []string {
	list, _, _ := unstructured.NestedSlice(contentOf(obj), "status", "conditions")
	var out []string
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			if t, ok := m["type"].(string); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// contentOf returns obj as unstructured content: the object itself for an
// *unstructured.Unstructured, a converted copy for typed objects, nil when
// it cannot be converted.
func contentOf(obj metav1.Object) map[string]any {
	switch o := any(obj).(type) {
	case *unstructured.Unstructured:
		return o.Object
	case runtime.Object:
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil
		}
		return content
	}
	return nil
}
