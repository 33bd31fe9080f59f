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
	"sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/statusapply/statusapply/internal/jsonvalue"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ssa"
)

// Status Edits are, in the common case, edits of metav1 conditions: a
// status function sets a few conditions with meta.SetStatusCondition. For
// that case the entry is built in a typed form, conditionsIntent, on the
// typed path Mutators of generated apply configurations take (see
// ssa.TypedBuild), instead of converting, comparing and encoding the status
// as unstructured content. The typed build is the unstructured one (editor)
// restricted to where the two provably agree; everywhere else it declines
// with ssa.ErrBuildUntyped and the editor builds the intent:
//
//   - the intent holds nothing but the object's identity and status
//     conditions, and encodes to the content it was decoded from (what the
//     manager owns is only conditions, and none holds a field the typed form
//     would drop or rewrite);
//   - the edits changed no status field but the conditions (compared as Go
//     values: a difference that would not show in JSON declines too);
//   - the kind's schema keys status.conditions by type alone, the Go type
//     is []metav1.Condition, and no condition type occurs twice;
//   - no changed condition lost its observedGeneration (the editor would
//     release that field alone) or has no lastTransitionTime.
//
// Within those bounds the editor's rules come out the same: a condition the
// edits added or changed (as its JSON would compare) is claimed whole, in
// place when the intent holds it, appended in the editor's order otherwise;
// a condition they removed is released, after the same check for other
// owners; an edit that changes nothing leaves the intent as it was.

// conditionsIntent is a status intent made of conditions only, in a form the
// typed path can copy, compare and encode without reflection over
// unstructured content.
type conditionsIntent struct {
	metav1ac.TypeMetaApplyConfiguration    `json:",inline"`
	*metav1ac.ObjectMetaApplyConfiguration `json:"metadata,omitempty"`
	Status                                 *conditionsStatus `json:"status,omitempty"`
	// Untyped is set when the content the intent was decoded from does not
	// fit this form: the typed build then declines.
	Untyped bool `json:"-"`
}

// conditionsStatus is the status of a conditionsIntent.
type conditionsStatus struct {
	Conditions []metav1ac.ConditionApplyConfiguration `json:"conditions,omitempty"`
}

var conditionsIntentType = reflect.TypeFor[*conditionsIntent]()

// conditionsWire is how a conditionsIntent encodes: as the editor's
// unstructured intent would, a status only when it has a conditions list,
// even an empty one (the editor leaves [] when it removes the last one).
type conditionsWire struct {
	metav1ac.TypeMetaApplyConfiguration `json:",inline"`
	Metadata                            *metav1ac.ObjectMetaApplyConfiguration `json:"metadata,omitempty"`
	Status                              *conditionsWireStatus                  `json:"status,omitempty"`
}

type conditionsWireStatus struct {
	Conditions []metav1ac.ConditionApplyConfiguration `json:"conditions"`
}

// MarshalJSON encodes the intent as the editor's unstructured intent of the
// same content would encode (up to the order of object keys).
func (in *conditionsIntent) MarshalJSON() ([]byte, error) {
	w := conditionsWire{TypeMetaApplyConfiguration: in.TypeMetaApplyConfiguration, Metadata: in.ObjectMetaApplyConfiguration}
	if in.Status != nil && in.Status.Conditions != nil {
		w.Status = &conditionsWireStatus{Conditions: in.Status.Conditions}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes content (what a manager owns, with the object's
// identity) and marks the intent Untyped unless encoding it again gives the
// same content: unknown fields, nulls, times not in the form the API server
// writes them, anything but conditions in the status.
func (in *conditionsIntent) UnmarshalJSON(data []byte) error {
	var w conditionsWire
	if err := json.Unmarshal(data, &w); err != nil {
		*in = conditionsIntent{Untyped: true}
		return nil //nolint:nilerr // content this form cannot hold is built the unstructured way
	}
	*in = conditionsIntent{TypeMetaApplyConfiguration: w.TypeMetaApplyConfiguration, ObjectMetaApplyConfiguration: w.Metadata}
	if w.Status != nil {
		in.Status = &conditionsStatus{Conditions: w.Status.Conditions}
	}
	again, err := in.MarshalJSON()
	if err != nil {
		in.Untyped = true
		return nil //nolint:nilerr // as above
	}
	var want, got any
	if json.Unmarshal(data, &want) != nil || json.Unmarshal(again, &got) != nil || !jsonvalue.Equal(want, got) {
		in.Untyped = true
	}
	return nil
}

// conditionsShape is where a typed object keeps its status and, in it, its
// metav1 conditions: the struct field indexes, found once per build.
type conditionsShape struct {
	status     int  // the object's status field
	statusPtr  bool // the status field is a pointer to the struct
	conditions int  // the status struct's conditions field
}

var conditionsType = reflect.TypeFor[[]metav1.Condition]()

// conditionsShapeOf finds the status and its conditions in objects of typ;
// ok is false unless the status is a struct (or pointer to one) tagged
// json:"status" holding []metav1.Condition tagged json:"conditions", with no
// inlined fields whose content could mix with them.
func conditionsShapeOf(typ reflect.Type) (conditionsShape, bool) {
	var shape conditionsShape
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return shape, false
	}
	st := typ.Elem()
	var found bool
	if shape.status, found = statusField(st); !found {
		return shape, false
	}
	status := st.Field(shape.status).Type
	if status.Kind() == reflect.Pointer {
		shape.statusPtr, status = true, status.Elem()
	}
	if status.Kind() != reflect.Struct {
		return shape, false
	}
	shape.conditions = -1
	for i := range status.NumField() {
		f := status.Field(i)
		switch name, inline, _ := objects.JSONName(f); {
		case inline || f.Anonymous:
			return shape, false
		case name == "conditions" && f.Type == conditionsType:
			shape.conditions = i
		}
	}
	return shape, shape.conditions >= 0
}

// status returns obj's status struct; ok is false for a nil status pointer.
func (s conditionsShape) statusOf(obj client.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(obj).Elem().Field(s.status)
	if s.statusPtr {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

// conditionsKeyedByType reports whether the kind's schema makes
// status.conditions a list of items identified by their type alone, the
// list the typed build merges.
func conditionsKeyedByType(tc managedfields.TypeConverter, t ssa.Target) bool {
	tv, err := kindSchema(tc, t.GVK)
	if err != nil {
		return false
	}
	s := tv.Schema()
	tr := tv.TypeRef()
	for _, field := range []string{"status", "conditions"} {
		atom, ok := s.Resolve(tr)
		if !ok || atom.Map == nil {
			return false
		}
		f, ok := atom.FindField(field)
		if !ok {
			return false
		}
		tr = f.Type
	}
	atom, ok := s.Resolve(tr)
	return ok && atom.List != nil && atom.List.ElementRelationship == schema.Associative &&
		slices.Equal(atom.Keys, []string{"type"}) && !holdsKeyedList(s, atom.List.ElementType, 0)
}

// editTypedBuild returns the typed build of t's entry when it is made of
// status Edits of one typed object that keeps metav1 conditions; nil
// otherwise (the editor builds those).
func editTypedBuild(t ssa.Target, tc managedfields.TypeConverter, contribs []contribution) *ssa.TypedBuild {
	if t.Subresource != ssa.StatusSubresource {
		return nil
	}
	typ := contribs[0].observedType()
	for i := range contribs {
		if !contribs[i].isEdit() || contribs[i].observedType() != typ {
			return nil
		}
	}
	shape, ok := conditionsShapeOf(typ)
	if !ok {
		return nil
	}
	return &ssa.TypedBuild{Type: conditionsIntentType, Mutate: func(ac any, observed client.Object) error {
		in, _ := ac.(*conditionsIntent)
		if in == nil || in.Untyped || reflect.TypeOf(observed) != typ {
			return ssa.ErrBuildUntyped
		}
		return editConditions(t, tc, shape, contribs, in, observed)
	}}
}

// editConditions runs contribs, Edits of observed's type, on a copy of
// observed and merges the conditions they changed into in, as the editor
// would (see the top of this file), or declines with ssa.ErrBuildUntyped.
func editConditions(t ssa.Target, tc managedfields.TypeConverter, shape conditionsShape, contribs []contribution,
	in *conditionsIntent, observed client.Object) error {
	work, ok := observed.DeepCopyObject().(client.Object)
	if !ok {
		return ssa.ErrBuildUntyped
	}
	for i := range contribs {
		if err := contribs[i].edit(work); err != nil {
			return fmt.Errorf("edit %d of %d: %w", i+1, len(contribs), err)
		}
	}
	before, okBefore := shape.statusOf(observed)
	after, okAfter := shape.statusOf(work)
	if !okBefore || !okAfter {
		return ssa.ErrBuildUntyped
	}
	for i := range before.NumField() {
		if i != shape.conditions && !reflect.DeepEqual(before.Field(i).Interface(), after.Field(i).Interface()) {
			return ssa.ErrBuildUntyped
		}
	}
	was, _ := before.Field(shape.conditions).Interface().([]metav1.Condition)
	now, _ := after.Field(shape.conditions).Interface().([]metav1.Condition)
	d, ok := diffConditions(was, now)
	if !ok {
		return ssa.ErrBuildUntyped
	}
	if len(d.claimed) == 0 && len(d.removed) == 0 {
		return nil
	}
	if !conditionsKeyedByType(tc, t) {
		return ssa.ErrBuildUntyped
	}
	if len(d.removed) > 0 {
		removed := fieldpath.NewSet()
		for _, typ := range d.removed {
			removed.Insert(conditionPath(typ))
		}
		e := &editor{target: t, observed: observed}
		if err := e.checkRemovals(removed); err != nil {
			return fmt.Errorf("edits %d to %d of %d: %w", 1, len(contribs), len(contribs), err)
		}
	}
	d.mergeInto(in)
	return nil
}

// conditionsDiff is what edits did to a list of conditions.
type conditionsDiff struct {
	claimed []*metav1.Condition // added or changed, in the edited list's order
	removed []string            // types no longer there
}

// diffConditions compares two lists of conditions by type, each condition
// as its JSON would compare. ok is false where the editor's rules would take
// more than claiming and releasing whole conditions (see the top of this
// file).
func diffConditions(was, now []metav1.Condition) (d conditionsDiff, ok bool) {
	if len(was) == len(now) {
		same := true
		for i := range was {
			if !sameCondition(&was[i], &now[i]) {
				same = false
				break
			}
		}
		if same {
			return d, !hasDuplicateTypes(was)
		}
	}
	if len(was) == 0 || len(now) == 0 || hasDuplicateTypes(was) || hasDuplicateTypes(now) {
		// With no conditions on one side the list itself comes or goes
		// (an omitted empty list), which the editor claims or releases
		// whole.
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
		case had && sameCondition(prev, c):
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

// hasDuplicateTypes reports whether a condition type occurs twice.
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

// sameCondition reports whether two conditions encode to the same JSON:
// times to the second, a zero time as null, observedGeneration 0 left out.
func sameCondition(a, b *metav1.Condition) bool {
	if a.Type != b.Type || a.Status != b.Status || a.Reason != b.Reason || a.Message != b.Message ||
		a.ObservedGeneration != b.ObservedGeneration {
		return false
	}
	az, bz := a.LastTransitionTime.IsZero(), b.LastTransitionTime.IsZero()
	if az || bz {
		return az == bz
	}
	return a.LastTransitionTime.Unix() == b.LastTransitionTime.Unix()
}

// conditionElement is the path element of the condition of typ in a list
// keyed by type.
func conditionElement(typ string) fieldpath.PathElement {
	pe, _ := elementOf(map[string]any{"type": typ}, []string{"type"})
	return pe
}

// conditionPath is the path of the condition of typ.
func conditionPath(typ string) fieldpath.Path {
	status, conditions := "status", "conditions"
	return fieldpath.Path{{FieldName: &status}, {FieldName: &conditions}, conditionElement(typ)}
}

// mergeInto claims d's conditions in in and releases the removed ones, as
// the editor merges claimed and removed paths: a claimed condition replaces
// the intent's of its type in place, or is appended, the appended ones in
// the order of their paths (the editor's set iterates in that order); a
// removed one is taken out, the rest keeping their order.
func (d *conditionsDiff) mergeInto(in *conditionsIntent) {
	if in.Status == nil {
		in.Status = &conditionsStatus{}
	}
	conds := in.Status.Conditions
	var added []*metav1.Condition
	for _, c := range d.claimed {
		if i := conditionIndex(conds, c.Type); i >= 0 {
			conds[i] = conditionApplied(c)
		} else {
			added = append(added, c)
		}
	}
	if len(added) > 1 {
		slices.SortStableFunc(added, func(a, b *metav1.Condition) int {
			return conditionElement(a.Type).Compare(conditionElement(b.Type))
		})
	}
	if conds == nil && len(added) > 0 {
		conds = make([]metav1ac.ConditionApplyConfiguration, 0, len(added))
	}
	for _, c := range added {
		conds = append(conds, conditionApplied(c))
	}
	for _, typ := range d.removed {
		if i := conditionIndex(conds, typ); i >= 0 {
			conds = append(conds[:i:i], conds[i+1:]...)
		}
	}
	in.Status.Conditions = conds
}

// conditionIndex returns the index of the first condition of typ, or -1.
func conditionIndex(conds []metav1ac.ConditionApplyConfiguration, typ string) int {
	for i := range conds {
		if t := conds[i].Type; t != nil && *t == typ {
			return i
		}
	}
	return -1
}

// conditionApplied is c as the editor's intent holds it: its unstructured
// content has every field but a zero observedGeneration.
func conditionApplied(c *metav1.Condition) metav1ac.ConditionApplyConfiguration {
	v := &struct {
		typ, reason, message string
		status               metav1.ConditionStatus
		observedGeneration   int64
		lastTransitionTime   metav1.Time
	}{typ: c.Type, reason: c.Reason, message: c.Message, status: c.Status,
		observedGeneration: c.ObservedGeneration, lastTransitionTime: c.LastTransitionTime}
	ac := metav1ac.ConditionApplyConfiguration{Type: &v.typ, Status: &v.status, Reason: &v.reason, Message: &v.message,
		LastTransitionTime: &v.lastTransitionTime}
	if c.ObservedGeneration != 0 {
		ac.ObservedGeneration = &v.observedGeneration
	}
	return ac
}
