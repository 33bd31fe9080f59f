package batcher

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/conditionac"
	"github.com/statusapply/statusapply/internal/jsonvalue"
	"github.com/statusapply/statusapply/internal/kindschema"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
)

// Status Edits mostly set metav1 conditions, so such entries get a typed build
// (conditionsIntent, as typed Mutators have) that must agree with the editor:
// it declines (ssa.Built.Declined) unless the intent holds only identity
// and conditions and re-encodes to its content, the edits changed only the
// conditions (as Go values), the schema keys them by type alone in a
// []metav1.Condition without repeated types, and no changed condition lost
// its observedGeneration (the editor would release that alone) or lacks a
// lastTransitionTime.

// conditionsIntent is a status intent of conditions only. Its JSON is the
// editor's intent, up to key order: a status only with a conditions list,
// even [] (left when the last one is removed); a status without conditions
// is never sent (the Applier prunes empty structs).
type conditionsIntent struct {
	metav1ac.TypeMetaApplyConfiguration    `json:",inline"`
	*metav1ac.ObjectMetaApplyConfiguration `json:"metadata,omitempty"`
	Status                                 *conditionsStatus `json:"status,omitempty"`
}

type conditionsStatus struct {
	Conditions []metav1ac.ConditionApplyConfiguration `json:"conditions"`
}

var conditionsIntentType = reflect.TypeFor[*conditionsIntent]()

// conditionsFromContent is the typed build's ssa.TypedBuild.FromContent: the
// owned content as a conditionsIntent, which fits unless encoding it again
// gives other content (unknown fields, nulls, odd time forms, a status
// without a conditions list).
func conditionsFromContent(content map[string]any) (ac any, fits bool, err error) {
	data, err := json.Marshal(content)
	if err != nil {
		return nil, false, fmt.Errorf("encoding the owned content: %w", err)
	}
	in := &conditionsIntent{}
	if json.Unmarshal(data, in) != nil || in.Status != nil && in.Status.Conditions == nil {
		return nil, false, nil
	}
	again, err := json.Marshal(in)
	if err != nil {
		return nil, false, nil //nolint:nilerr // content this form cannot hold is built the unstructured way
	}
	var want, got any
	if json.Unmarshal(data, &want) != nil || json.Unmarshal(again, &got) != nil || !jsonvalue.Equal(want, got) {
		return nil, false, nil
	}
	return in, true, nil
}

var conditionsType = reflect.TypeFor[[]metav1.Condition]()

// conditionsKeyedByType reports whether the kind's schema keys
// status.conditions by type alone, as the typed build merges them.
func conditionsKeyedByType(tc managedfields.TypeConverter, t ssa.Target) bool {
	ks, err := kindschema.Lookup(tc, t.GVK)
	return err == nil && ks.Conditions.KeyedByType && !holdsKeyedList(ks.Schema, ks.Conditions.Item, 0)
}

// editTypedBuild returns the typed build of status Edits of one typed object
// that keeps metav1 conditions; nil otherwise.
func editTypedBuild(t ssa.Target, tc managedfields.TypeConverter, contribs []contribution) *ssa.TypedBuild {
	if t.Subresource != ssa.StatusSubresource {
		return nil
	}
	typ := contribs[0].call.observedType()
	for i := range contribs {
		if !contribs[i].call.isEdit() || contribs[i].call.observedType() != typ {
			return nil
		}
	}
	shape, ok := objects.FindStatusList(typ, "conditions", conditionsType)
	if !ok {
		return nil
	}
	return &ssa.TypedBuild{Type: conditionsIntentType, FromContent: conditionsFromContent, Mutate: func(ac any, observed client.Object) (ssa.Built, error) {
		in, _ := ac.(*conditionsIntent)
		if in == nil {
			return ssa.Built{Declined: true}, nil
		}
		// An observation read again is unstructured: the edits take it as
		// their type, as the editor gives it to them.
		obs, err := observedAs(observed, typ, t.GVK)
		if err != nil {
			return ssa.Built{}, err
		}
		typed, ok := obs.(client.Object)
		if !ok {
			return ssa.Built{Declined: true}, nil
		}
		return editConditions(t, tc, shape, contribs, in, typed)
	}}
}

// editConditions runs contribs on a copy of observed and merges the changed
// conditions into in as the editor would, or declines.
func editConditions(t ssa.Target, tc managedfields.TypeConverter, shape objects.StatusList, contribs []contribution,
	in *conditionsIntent, observed client.Object) (ssa.Built, error) {
	work, ok := observed.DeepCopyObject().(client.Object)
	if !ok {
		return ssa.Built{Declined: true}, nil
	}
	for i := range contribs {
		if err := contribs[i].call.edit(contribs[i].fn, work); err != nil {
			return ssa.Built{}, fmt.Errorf("edit %d of %d: %w", i+1, len(contribs), err)
		}
	}
	before, okBefore := shape.StatusOf(reflect.ValueOf(observed))
	after, okAfter := shape.StatusOf(reflect.ValueOf(work))
	if !okBefore || !okAfter {
		return ssa.Built{Declined: true}, nil
	}
	for i := range before.NumField() {
		if i != shape.List && !reflect.DeepEqual(before.Field(i).Interface(), after.Field(i).Interface()) {
			return ssa.Built{Declined: true}, nil
		}
	}
	was, _ := before.Field(shape.List).Interface().([]metav1.Condition)
	now, _ := after.Field(shape.List).Interface().([]metav1.Condition)
	d, ok := diffConditions(was, now)
	if !ok {
		return ssa.Built{Declined: true}, nil
	}
	if len(d.claimed) == 0 && len(d.removed) == 0 {
		return ssa.Built{}, nil
	}
	if !conditionsKeyedByType(tc, t) {
		return ssa.Built{Declined: true}, nil
	}
	if len(d.removed) > 0 {
		removed := fieldpath.NewSet()
		for _, typ := range d.removed {
			removed.Insert(ownership.ConditionPath(typ))
		}
		e := &editor{target: t, observed: observed}
		if built, err := e.checkRemovals(removed); err != nil {
			return built, fmt.Errorf("edits %d to %d of %d: %w", 1, len(contribs), len(contribs), err)
		}
	}
	d.mergeInto(in)
	return ssa.Built{}, nil
}

// conditionsDiff is what edits did to a list of conditions.
type conditionsDiff struct {
	claimed []*metav1.Condition // added or changed, in the edited list's order
	removed []string            // types no longer there
}

// diffConditions compares conditions by type as their JSON compares; ok is
// false where the editor would do more than claim and release whole ones.
func diffConditions(was, now []metav1.Condition) (d conditionsDiff, ok bool) {
	if len(was) == len(now) {
		same := true
		for i := range was {
			if !conditionac.Same(&was[i], &now[i]) {
				same = false
				break
			}
		}
		if same {
			return d, !hasDuplicateTypes(was)
		}
	}
	if len(was) == 0 || len(now) == 0 || hasDuplicateTypes(was) || hasDuplicateTypes(now) {
		// The list itself comes or goes (omitted when empty), which the
		// editor claims or releases whole.
		return d, false
	}
	byType := make(map[string]*metav1.Condition, len(was))
	for i := range was {
		byType[was[i].Type] = &was[i]
	}
	for i := range now {
		c := &now[i]
		prev, had := byType[c.Type]
		switch {
		case had && conditionac.Same(prev, c):
			continue
		case had && prev.ObservedGeneration != 0 && c.ObservedGeneration == 0:
			return d, false // the editor releases observedGeneration alone
		case c.LastTransitionTime.IsZero():
			return d, false // encodes as null, which the editor keeps
		}
		d.claimed = append(d.claimed, c)
	}
	if len(now) != len(was) || len(d.claimed) > 0 {
		kept := make(map[string]bool, len(now))
		for i := range now {
			kept[now[i].Type] = true
		}
		for i := range was {
			if !kept[was[i].Type] {
				d.removed = append(d.removed, was[i].Type)
			}
		}
	}
	return d, true
}

func hasDuplicateTypes(conds []metav1.Condition) bool {
	if len(conds) < 2 {
		return false
	}
	seen := make(map[string]struct{}, len(conds))
	for i := range conds {
		if _, dup := seen[conds[i].Type]; dup {
			return true
		}
		seen[conds[i].Type] = struct{}{}
	}
	return false
}

// mergeInto claims and releases d's conditions in in as the editor merges
// paths: in place, else appended in path order (the editor's set order).
func (d *conditionsDiff) mergeInto(in *conditionsIntent) {
	if in.Status == nil {
		in.Status = &conditionsStatus{}
	}
	conds := in.Status.Conditions
	var added []*metav1.Condition
	for _, c := range d.claimed {
		if i := conditionac.Index(conds, c.Type); i >= 0 {
			conds[i] = conditionac.Of(*c)
		} else {
			added = append(added, c)
		}
	}
	if len(added) > 1 {
		slices.SortStableFunc(added, func(a, b *metav1.Condition) int {
			return ownership.ConditionPath(a.Type).Compare(ownership.ConditionPath(b.Type))
		})
	}
	if conds == nil && len(added) > 0 {
		conds = make([]metav1ac.ConditionApplyConfiguration, 0, len(added))
	}
	for _, c := range added {
		conds = append(conds, conditionac.Of(*c))
	}
	for _, typ := range d.removed {
		if i := conditionac.Index(conds, typ); i >= 0 {
			conds = append(conds[:i:i], conds[i+1:]...)
		}
	}
	in.Status.Conditions = conds
}
