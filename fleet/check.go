package fleet

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/statusapply/statusapply/internal/components"
	"github.com/statusapply/statusapply/ownership"
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
//     the objects: absent while legacy writers still hold status fields on
//     them (the error names those writers), or present only as an Apply
//     manager under another name than its destination's;
//   - a Conditions type that no entry of any object holds, or that only
//     managers other than its destination hold without a legacy writer
//     holding it anywhere;
//   - a destination, of Managers or Conditions, that is a legacy writer on
//     some object, except a legacy manager handed to its own name (the usual
//     csaupgrade move of one controller from Update to Apply).
//
// An entry owning an atomic conditions list whole holds every condition type
// in it. An object without managedFields counts as held by before-first-apply, the
// manager the API server will attribute its status to when it is seeded.
// So that running a finished migration again stays a no-op, a source that
// is gone (or, for a manager handed to its own name, that applies) while no
// legacy writer holds a status field on any of the objects, and a condition
// type held by its destination alone, are accepted. AllowMissingSources
// accepts the first two kinds of problem whatever the objects hold.
// No objects, nothing to check: nil.
//
// A destination nobody applies yet is not a mismatch: it is how a new field
// manager starts. NewDestinations lists them, for callers that want to warn
// about a misspelling.
func CheckPlan[T metav1.Object](plan Plan, objs []T, opts ...CheckOption) error {
	var o checkOptions
	for _, opt := range opts {
		opt(&o)
	}
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
	// legacyLeft counts, per legacy writer, the objects on which it still
	// holds status fields: what a --from must name while any is left.
	legacyLeft := map[string]int{}
	holds := func(condType, manager string, legacy bool) {
		if conditions[condType] == nil {
			conditions[condType] = map[string]bool{}
		}
		conditions[condType][manager] = conditions[condType][manager] || legacy
	}
	for _, obj := range objs {
		if len(obj.GetManagedFields()) == 0 {
			note(ownership.BeforeFirstApplyManager, true)
			for _, t := range statusConditionTypes(obj) {
				holds(t, ownership.BeforeFirstApplyManager, true)
			}
			if hasStatus(obj) {
				legacyLeft[ownership.BeforeFirstApplyManager]++
			}
			continue
		}
		o, err := ownership.Inspect(obj)
		if err != nil {
			return err
		}
		perObject := map[string]bool{}
		holdsStatus := map[string]bool{}
		for _, e := range o.Entries {
			perObject[e.Manager] = perObject[e.Manager] || e.Legacy()
			for _, t := range e.ConditionTypes() {
				holds(t, e.Manager, e.Legacy())
			}
			if o.OwnsWholeConditionsList(e) {
				// An atomic list owned whole: every condition in it.
				for _, t := range statusConditionTypes(obj) {
					holds(t, e.Manager, e.Legacy())
				}
			}
			if e.Legacy() && !components.IsKubernetes(e.Manager) && !e.StatusFields().Empty() {
				holdsStatus[e.Manager] = true
			}
		}
		for name, legacy := range perObject {
			note(name, legacy)
		}
		for name := range holdsStatus {
			legacyLeft[name]++
		}
	}

	n := len(objs)
	var errs []error
	for _, from := range slices.Sorted(maps.Keys(plan.Managers)) {
		to := plan.Managers[from]
		switch s := managers[from]; {
		case s != nil && s.legacy > 0:
		case s != nil && from != to:
			errs = append(errs, fmt.Errorf("--from %s: not a legacy writer (Update) on any of the %d objects, "+
				"it is an Apply manager on %d: only legacy ownership is migrated", from, n, s.other))
		case o.allowMissingSources || len(legacyLeft) == 0:
			// Gone (or upgraded to its own name), and nothing legacy is
			// left to hand over: migrated by an earlier run.
		case s == nil:
			errs = append(errs, fmt.Errorf("--from %s: no manager of that name on any of the %d objects, "+
				"while legacy writers still hold status fields on them: %s; "+
				"name one of them, or give --allow-missing-source if %s is gone on purpose",
				from, n, countedNames(legacyLeft), from))
		default:
			errs = append(errs, fmt.Errorf("--from %s=%s: %s is an Apply manager on %d of the %d objects and a legacy writer on none, "+
				"while legacy writers still hold status fields on them: %s; name one of them, or give --allow-missing-source",
				from, to, from, s.other, n, countedNames(legacyLeft)))
		}
	}
	for _, condType := range slices.Sorted(maps.Keys(plan.Conditions)) {
		to := plan.Conditions[condType]
		holders := conditions[condType]
		switch {
		case o.allowMissingSources:
		case len(holders) == 0:
			errs = append(errs, fmt.Errorf("--condition %s: no manager holds that condition type on any of the %d objects%s",
				condType, n, legacyConditionsHint(conditions)))
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

// CheckOption tunes CheckPlan.
type CheckOption func(*checkOptions)

type checkOptions struct {
	allowMissingSources bool
}

// AllowMissingSources makes CheckPlan accept a Managers source that is a
// legacy writer on none of the objects, and a Conditions type that no legacy
// writer holds, even while other legacy writers hold status fields: for a
// plan kept for several fleets, some of which lack one of its writers. The
// other checks still apply.
func AllowMissingSources() CheckOption {
	return func(o *checkOptions) { o.allowMissingSources = true }
}

// NewDestinations returns, sorted, the destinations of plan that are an
// Apply manager on none of objs: a field manager that has not applied yet,
// or a misspelling, which a migration would make the owner of fields
// nobody writes. A legacy manager handed to its own name is left out: it is
// the writer itself. No objects, nil.
func NewDestinations[T metav1.Object](plan Plan, objs []T) []string {
	if len(objs) == 0 {
		return nil
	}
	wanted := map[string]bool{}
	for from, to := range plan.Managers {
		if from != to {
			wanted[to] = true
		}
	}
	for _, to := range plan.Conditions {
		wanted[to] = true
	}
	for _, obj := range objs {
		for _, mf := range obj.GetManagedFields() {
			if mf.Operation == metav1.ManagedFieldsOperationApply {
				delete(wanted, mf.Manager)
			}
		}
	}
	return slices.Sorted(maps.Keys(wanted))
}

// countedNames renders manager -> object count as "a (3 objects), b (1
// object)", by name.
func countedNames(counts map[string]int) string {
	parts := make([]string, 0, len(counts))
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		noun := "objects"
		if counts[name] == 1 {
			noun = "object"
		}
		parts = append(parts, fmt.Sprintf("%s (%d %s)", name, counts[name], noun))
	}
	return strings.Join(parts, ", ")
}

// legacyConditionsHint names the condition types legacy writers hold, for
// an error about a condition type nobody holds; "" when they hold none.
func legacyConditionsHint(conditions map[string]map[string]bool) string {
	var types []string
	for t, holders := range conditions {
		if anyLegacy(holders) {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return ""
	}
	slices.Sort(types)
	return "; legacy writers hold " + strings.Join(types, ", ")
}

// hasStatus reports whether obj has a non-empty status, read from its
// content; for objects without managedFields only.
func hasStatus(obj metav1.Object) bool {
	status, _, _ := unstructured.NestedMap(contentOf(obj), "status")
	return len(status) > 0
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
// from its content: what an object without managedFields, or an entry
// owning an atomic list whole, holds.
func statusConditionTypes(obj metav1.Object) []string {
	return statusConditionTypesOf(contentOf(obj))
}

// contentOf returns obj as unstructured content: the object itself for an
// *unstructured.Unstructured, a converted copy for typed objects, nil for
// metadata alone and when it cannot be converted.
func contentOf(obj metav1.Object) map[string]any {
	switch o := any(obj).(type) {
	case *unstructured.Unstructured:
		return o.Object
	case *metav1.PartialObjectMetadata:
		return nil // metadata alone: the content is unknown, not empty
	case runtime.Object:
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil
		}
		return content
	}
	return nil
}
