package ssa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/batching"
	"github.com/statusapply/statusapply/internal/jsonvalue"
)

// prepared is an intent ready to send: its request body, encoded once, and
// what the Applier remembers of it once applied.
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
	// yield is what contested fields are left out against; set on intents
	// built under a yielding policy.
	yield *yieldBasis
}

// asUnstructured returns the intent as unstructured content the caller may
// modify.
func (p *prepared) asUnstructured() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(p.body); err != nil {
		return nil, fmt.Errorf("decoding the intent: %w", err)
	}
	return u, nil
}

// prepare builds t's intent on st, checks it, and tells whether it changes
// anything. The typed path is taken when b has one, nothing needs the
// intent as unstructured content (a guarded apply rebuilds it, a yielding
// policy edits it) and its Mutate does not decline (ErrBuildUntyped).
//
// built, when not nil, is the intent lookRemembered built on the form it
// names and found changed: it is sent rather than built again when st still
// has that form.
func (a *Applier) prepare(ctx context.Context, t Target, st *ownedState, obs client.Object, b Build, opts ApplyOptions,
	policy conflicts.Policy, res *Result, built *builtIntent) (*prepared, error) {
	if a.typedPath(b.typed, &opts, policy) {
		if lay := a.layouts.shared(b.typed.Type); lay != nil {
			p, err := a.prepareTyped(t, st, obs, b.typed, lay, opts.Mode, built)
			if !errors.Is(err, batching.ErrBuildUntyped) {
				return p, err
			}
		}
	}
	return a.prepareUnstructured(ctx, t, st, obs, b.Func, opts, policy, res)
}

// prepareTyped builds the intent in its apply configuration type: a copy of
// what the manager owns in that type (kept with the owned state), edited by
// the mutators, compared with the original before it is even encoded, and
// encoded once for both the final comparison and the request. Every build
// edits a copy of its own, which nothing else holds: whatever the mutators
// put into it, or keep of it, never reaches another build or the owned
// state.
func (a *Applier) prepareTyped(t Target, st *ownedState, obs client.Object, tb *batching.TypedBuild, lay *acLayout, mode Mode,
	built *builtIntent) (*prepared, error) {
	owned, err := st.form(t, tb.Type, lay, obs.GetUID())
	if err != nil {
		return nil, err
	}
	var ac any
	switch {
	case built != nil && built.form == owned && built.typed == tb && mode == Incremental:
		ac = built.ac // the mutators ran on this copy already
	case mode == Incremental:
		var same bool
		if ac, same, err = owned.edit(tb, obs); err != nil {
			return nil, err
		}
		if same {
			// What the manager owns, as the API server accepted it:
			// nothing to send and nothing to check.
			return a.unchanged, nil
		}
	default:
		if ac, err = newACFrom(tb.Type, lay, withIdentity(t, nil)); err != nil {
			return nil, err
		}
		lay.setUID(ac, obs.GetUID())
		if err := tb.Mutate(ac, obs); err != nil {
			return nil, err
		}
	}
	if err := checkIdentity(t, ac); err != nil {
		return nil, err
	}
	if lay.equalAC(ac, owned.ac) || pruneEmptyStructs(reflect.ValueOf(ac)) || lay.equalAC(ac, owned.ac) {
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
	return &prepared{body: body, ac: ac, acType: tb.Type}, nil
}

// prepareUnstructured builds the intent as unstructured content.
func (a *Applier) prepareUnstructured(ctx context.Context, t Target, st *ownedState, obs client.Object, build BuildFunc,
	opts ApplyOptions, policy conflicts.Policy, res *Result) (*prepared, error) {
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
	if err := build(intent, obs); err != nil {
		return nil, err
	}
	if got := intent.GroupVersionKind(); got != t.GVK || intent.GetName() != t.Name || intent.GetNamespace() != t.Namespace {
		return nil, invalidf("the apply configuration names %s %s/%s, not the object it was queued for",
			got.Kind, intent.GetNamespace(), intent.GetName())
	}
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
		nothing, err := a.yieldPredicted(ctx, t, obs, intent, basis, res, policy)
		if err != nil {
			return nil, err
		}
		if nothing {
			return a.unchanged, nil
		}
	}
	if unchangedIntent(intent.Object, owned) {
		return a.unchanged, nil
	}
	if uid := obs.GetUID(); uid != "" {
		// A deleted object is not recreated by a main-resource apply, and a
		// status apply to it fails. (The API server ignores the uid of a
		// status apply to a re-created object: guard when that matters.)
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

// checkConditions refuses conditions the API server would refuse: any in a
// list the schema declares atomic, and, where the kind's conditions are
// metav1.Condition, every invalid one the manager does not already own as it
// is. Typed intents pass their conditions and the owned ones in the same
// type, others their unstructured items.
func (a *Applier) checkConditions(t Target, acConds, acOwned []metav1ac.ConditionApplyConfiguration, items, owned any) error {
	ks, err := a.schemaOf(t.GVK)
	if err != nil {
		return err
	}
	if ks.conditions.atomic {
		return invalidf("%s: status.conditions of %s is an atomic list, so every writer would own the whole list "+
			"and a second writer conflicts with the first; declare it a map list (+listType=map, +listMapKey=type)", t, t.GVK.Kind)
	}
	if !ks.conditions.metav1 {
		return nil
	}
	// Checked after the mutators ran, because every way of writing a
	// condition (SetCondition, an Edit, a Mutator, unstructured content) ends
	// here: one bad condition would otherwise make the API server refuse the
	// whole apply with a 422. The error names t through Apply's *Error.
	if acConds != nil {
		return validateACConditions(acConds, acOwned)
	}
	return validateConditionItems(items, owned)
}

// yieldBasis is what a yield leaves contested fields out against: what the
// manager owned when its intent was built.
type yieldBasis struct {
	// fields are the leaves of the manager's Apply entry: in a list element
	// they hold, a yield leaves out only the contested fields, and keeps the
	// element's key (see conflicts.RemovalTarget).
	fields *fieldpath.Set
	// content is what the manager owns, without identity: an intent a yield
	// leaves equal to it changes nothing.
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

// withoutContested leaves paths out of intent, by the rule of every yield,
// predicted or answered: conflicts.RemoveFields with the fields the manager
// owns. It reports whether what is left is not to be sent: it claims nothing
// (an apply of it would give up everything the manager owns, which leaving
// out contested fields never means), or it holds only what the manager owns
// already, with the same values (an apply of it would change nothing).
func withoutContested(intent map[string]any, basis *yieldBasis, paths []fieldpath.Path) (sendNothing bool, err error) {
	if _, err := conflicts.RemoveFields(intent, basis.fields, paths...); err != nil {
		return false, fmt.Errorf("yielding %v: %w", paths, err)
	}
	return jsonvalue.IsEmpty(withoutIdentity(intent)) || unchangedIntent(intent, basis.content), nil
}

// yieldPredicted leaves out of intent the fields that, judging by observed's
// managedFields, another manager owns with a different value: the apply the
// API server would refuse is not sent. It reports whether what is left is not
// to be sent either (see withoutContested). It only helps when observed is
// current; a conflict it cannot foresee is still handled by resolve.
func (a *Applier) yieldPredicted(ctx context.Context, t Target, observed client.Object, intent *unstructured.Unstructured, basis *yieldBasis,
	res *Result, policy conflicts.Policy) (sendNothing bool, err error) {
	predicted, err := conflicts.Predict(observed, a.tc, t.Manager, string(t.Subresource), intent)
	if err != nil || len(predicted) == 0 {
		return false, nil //nolint:nilerr // prediction is an optimisation; the API server still decides
	}
	d := policy.Decide(predicted)
	if d.Action != conflicts.ActionRetryWithout {
		return false, nil
	}
	sendNothing, err = withoutContested(intent.Object, basis, d.Paths)
	if err != nil {
		return false, err
	}
	conflicts.Record(a.cfg.recorder, observed, t.Manager, d)
	res.Yielded = d.Conflicts
	a.logger(ctx).Info("yielded fields predicted to be contested", "target", t.String(), "fields", d.Paths, "sent", !sendNothing)
	return sendNothing, nil
}

// typedPath reports whether an intent is built in its own apply
// configuration type: it has a typed build, and nothing needs the intent as
// unstructured content (a guarded apply rebuilds it on a fresh read, a
// yielding policy edits it). It is decided here alone, for lookRemembered
// and for the run.
func (a *Applier) typedPath(typed *batching.TypedBuild, opts *ApplyOptions, policy conflicts.Policy) bool {
	return typed != nil && !opts.Guarded && !policy.Yields()
}

// pruneEmptyStructs sets to nil every pointer to an apply configuration
// struct below v that holds nothing once its own fields are pruned, as
// pruneEmpty removes empty objects from unstructured content: an apply must
// not claim an empty struct no mutator filled (a status whose last condition
// was removed). It reports whether v itself holds nothing. Structs with
// unexported fields (a time) are values, never pruned.
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
				empty = empty && f.Len() == 0 // omitempty leaves an empty list out
			case !f.IsZero():
				empty = false
			}
		}
		return empty
	}
	return v.IsZero()
}

// prunable reports whether t is a struct of exported fields alone, as apply
// configurations are.
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
