package ssa

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/jsonvalue"
)

// prepared is an intent ready to send, encoded once.
type prepared struct {
	// unchanged is true when applying would change nothing: nothing is sent.
	unchanged bool
	// body is the request body.
	body []byte
	// content is the intent as unstructured content (the general path).
	content map[string]any
	// ac is the intent as sent, in its own type (the typed path).
	ac     any
	acType reflect.Type
	// yield is what contested fields are left out against, under a yielding policy.
	yield *yieldBasis
}

// asUnstructured returns the intent as content the caller may modify.
func (p *prepared) asUnstructured() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(p.body); err != nil {
		return nil, fmt.Errorf("decoding the intent: %w", err)
	}
	return u, nil
}

// prepareTyped builds the intent in its apply configuration type, tb.Type, as
// a copy of the owned form edited by the mutators, and tells whether it
// changes anything. Every build edits a copy of its own: what the mutators put
// in or keep never reaches another build or the state. built is what tb
// reported; with a nil intent and no error (a type without object metadata,
// owned content the type cannot hold, an intent tb declined) Func builds it.
func (a *Applier) prepareTyped(t Target, st *ownedState, obs client.Object, tb *TypedBuild, mode Mode, built *Built) (*prepared, error) {
	st.mu.Lock()
	owned := st.last
	st.mu.Unlock()
	var lay *acLayout
	if owned != nil && owned.typ == tb.Type {
		// The form asked for last: its layout is the type's.
		lay = owned.lay
	} else {
		if lay = a.layouts.shared(tb.Type); lay == nil {
			return nil, nil
		}
		var err error
		if owned, err = st.form(t, tb, lay, obs.GetUID()); err != nil {
			return nil, err
		}
		if owned == nil {
			// The type cannot hold what the manager owns.
			built.Declined = true
			return nil, nil
		}
	}
	var ac any
	var err error
	if mode == Incremental {
		// Copied by reflection, since generated types have no DeepCopy.
		ac = deepCopyValue(reflect.ValueOf(owned.ac)).Interface()
		if *built, err = tb.Mutate(ac, obs); err != nil || built.Declined {
			return nil, err
		}
		if equalValue(reflect.ValueOf(ac), reflect.ValueOf(owned.ac)) {
			// As the API server accepted it: nothing to send or check.
			return a.unchanged, nil
		}
	} else {
		if ac, err = newACFrom(tb.Type, lay, withIdentity(t, nil)); err != nil {
			return nil, err
		}
		lay.setUID(ac, obs.GetUID())
		if *built, err = tb.Mutate(ac, obs); err != nil || built.Declined {
			return nil, err
		}
		if equalAC(ac, owned.ac) {
			return a.unchanged, nil
		}
	}
	if err := checkIdentity(t, ac); err != nil {
		return nil, err
	}
	// Empty structs a mutator left are not sent: compared again without them.
	pruneEmptyStructs(reflect.ValueOf(ac))
	if equalAC(ac, owned.ac) {
		return a.unchanged, nil
	}
	if conds, has := lay.statusConditions(ac); has && len(conds) > 0 {
		ownedConds, _ := lay.statusConditions(owned.ac)
		if err := a.checkConditions(t, conds, ownedConds, nil, nil); err != nil {
			return nil, err
		}
	}
	lay.setUID(ac, obs.GetUID())
	body, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("encoding the apply configuration: %w", err)
	}
	if owned.encodesAs(body) {
		return a.unchanged, nil
	}
	if a.mustTypeIntent(t, ac) {
		if err := a.checkIntentSchemaAC(t, ac, body); err != nil {
			return nil, err
		}
	}
	return &prepared{body: body, ac: ac, acType: tb.Type}, nil
}

// prepareUnstructured builds the intent as unstructured content; built is
// what build reported.
func (a *Applier) prepareUnstructured(ctx context.Context, t Target, st *ownedState, obs client.Object, build BuildFunc,
	opts ApplyOptions, policy conflicts.Policy, takesBack bool, res *Result, built *Built) (*prepared, error) {
	owned, err := st.ownedContent()
	if err != nil {
		return nil, err
	}
	intent := &unstructured.Unstructured{Object: map[string]any{}}
	if opts.Mode == Incremental {
		intent.Object = runtime.DeepCopyJSON(owned)
	}
	intent.SetGroupVersionKind(t.GVK)
	intent.SetName(t.Name)
	intent.SetNamespace(t.Namespace)
	if *built, err = build(intent, obs); err != nil {
		return nil, err
	}
	if got := intent.GroupVersionKind(); got != t.GVK || intent.GetName() != t.Name || intent.GetNamespace() != t.Namespace {
		return nil, invalidf("the apply configuration names %s %s/%s, not the object it was queued for",
			got.Kind, intent.GetNamespace(), intent.GetName())
	}
	withoutConditions(intent.Object, opts.RemovedConditions)
	pruneEmpty(intent.Object)
	if conds, has, _ := unstructured.NestedFieldNoCopy(intent.Object, "status", "conditions"); has {
		ownedConds, _, _ := unstructured.NestedFieldNoCopy(owned, "status", "conditions")
		if err := a.checkConditions(t, nil, nil, conds, ownedConds); err != nil {
			return nil, err
		}
	}
	var basis *yieldBasis
	if policy.Yields() {
		if basis, err = a.yieldBasisOf(t, st, owned); err != nil {
			return nil, err
		}
		nothing, err := a.yieldPredicted(ctx, t, obs, intent, basis, res, policy, takesBack)
		if err != nil {
			return nil, err
		}
		if nothing {
			return a.unchanged, nil
		}
	}
	if unchangedIntent(intent.Object, owned) {
		// Unless only the response can tell whether a removal took effect.
		confirm, err := confirmsRemovals(opts.RemovedConditions, obs)
		if err != nil {
			return nil, err
		}
		if !confirm {
			return a.unchanged, nil
		}
	}
	if err := a.checkIntentSchema(t, intent.Object); err != nil {
		return nil, err
	}
	if uid := obs.GetUID(); uid != "" {
		// A main-resource apply never recreates a deleted object; the API server
		// ignores a status apply's uid on a re-created one (guard for that).
		intent.SetUID(uid)
	}
	if opts.Guarded {
		intent.SetResourceVersion(obs.GetResourceVersion())
	}
	body, err := intent.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the apply configuration: %w", err)
	}
	return &prepared{body: body, content: intent.Object, yield: basis}, nil
}

// checkConditions refuses conditions the API server would: any in an atomic
// list and, for metav1.Condition, each invalid one the manager does not own as is.
func (a *Applier) checkConditions(t Target, acConds, acOwned []metav1ac.ConditionApplyConfiguration, items, owned any) error {
	ks, err := a.tc.Kind(t.GVK)
	if err != nil {
		return err
	}
	if ks.Conditions.Atomic {
		return invalidf("%s: status.conditions of %s is an atomic list, so every writer would own the whole list "+
			"and a second writer conflicts with the first; declare it a map list (+listType=map, +listMapKey=type)", t, t.GVK.Kind)
	}
	if !ks.Conditions.Metav1 {
		return nil
	}
	// Checked here, where every way of writing a condition ends, since one bad
	// condition fails the whole apply (422); Apply's *Error names t.
	if acConds != nil {
		return validateACConditions(acConds, acOwned)
	}
	return validateConditionItems(items, owned)
}

// yieldBasis is what the manager owned when its intent was built.
type yieldBasis struct {
	// fields are the leaves of the manager's entry: a yield keeps the key of a
	// list element they hold (see conflicts.RemoveFields).
	fields *fieldpath.Set
	// content is what the manager owns, without identity.
	content map[string]any
}

// yieldBasisOf returns what t's manager owns by st, whose content is owned.
func (a *Applier) yieldBasisOf(t Target, st *ownedState, owned map[string]any) (*yieldBasis, error) {
	b := &yieldBasis{fields: fieldpath.NewSet(), content: owned}
	if st.entry != nil {
		f, err := a.entries.fields(st.entry)
		if err != nil {
			return nil, fmt.Errorf("extracting what %q owns: %w", t.Manager, err)
		}
		b.fields = f.leaves
	}
	return b, nil
}

// withoutContested leaves paths out of intent, as every yield does, and reports
// whether nothing is to be sent: what is left claims nothing (that would release
// all the manager owns) or only what it owns already.
func withoutContested(intent map[string]any, basis *yieldBasis, paths []fieldpath.Path) (sendNothing bool, err error) {
	if _, err := conflicts.RemoveFields(intent, basis.fields, paths...); err != nil {
		return false, fmt.Errorf("yielding %v: %w", paths, err)
	}
	return jsonvalue.IsEmpty(withoutIdentity(intent)) || unchangedIntent(intent, basis.content), nil
}

// yieldPredicted leaves out the fields observed's managedFields show contested,
// reporting as withoutContested; a conflict it cannot foresee is left to resolve.
// When takesBack, before-first-apply is no writer to yield to: the fields only it
// contests stay in the intent, for the Applier to take back (see recoverBefore).
func (a *Applier) yieldPredicted(ctx context.Context, t Target, observed client.Object, intent *unstructured.Unstructured, basis *yieldBasis,
	res *Result, policy conflicts.Policy, takesBack bool) (sendNothing bool, err error) {
	predicted, err := conflicts.Predict(observed, a.tc, t.Manager, string(t.Subresource), intent)
	if err != nil {
		return false, nil //nolint:nilerr // prediction is an optimisation; the API server still decides
	}
	if takesBack {
		predicted = slices.DeleteFunc(predicted, ownedBeforeFirstApply)
	}
	if len(predicted) == 0 {
		return false, nil
	}
	d := policy.Decide(predicted)
	if d.Action != conflicts.ActionRetryWithout {
		return false, nil
	}
	sendNothing, err = withoutContested(intent.Object, basis, d.Paths)
	if err != nil {
		return false, err
	}
	recordDecision(a.cfg.recorder, observed, t.Manager, d)
	res.Yielded = d.Conflicts
	a.logger(ctx).Info("yielded fields predicted to be contested", "target", t.String(), "fields", d.Paths, "sent", !sendNothing)
	return sendNothing, nil
}

// pruneEmptyStructs nils each pointer below v to an apply configuration struct
// left empty once pruned (an apply must not claim an empty status), reporting
// whether v is empty. Structs with unexported fields (a time) are kept.
func pruneEmptyStructs(v reflect.Value) (empty bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
		if !prunable(v.Type().Elem()) || !pruneEmptyStructs(v.Elem()) {
			return false
		}
		if v.CanSet() {
			v.SetZero()
		}
		return true
	case reflect.Map:
		if v.Len() > 0 {
			return false
		}
		if v.CanSet() {
			v.SetZero() // an empty map is an empty object
		}
		return true
	case reflect.Struct:
		empty = true
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case f.Kind() == reflect.Pointer || f.Kind() == reflect.Map || f.Kind() == reflect.Struct && prunable(f.Type()):
				empty = pruneEmptyStructs(f) && empty
			case f.Kind() == reflect.Slice:
				// omitempty leaves an empty list out; without it, only nil is nothing.
				empty = empty && f.Len() == 0 && (f.IsNil() || omitsEmpty(v.Type().Field(i)))
			case !f.IsZero():
				empty = false
			}
		}
		return empty
	}
	return v.IsZero()
}

// omitsEmpty reports whether f's JSON tag has omitempty.
func omitsEmpty(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	return slices.Contains(strings.Split(opts, ","), "omitempty")
}

// prunable reports whether t is a struct of exported fields only.
func prunable(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			return false
		}
	}
	return true
}
