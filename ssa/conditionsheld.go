package ssa

import (
	"encoding/json"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// conditionsHeld is the value check of a remembered state (see owned.go)
// for a manager that owns status conditions alone, made on the typed objects
// themselves: whether observed still holds every condition field that ac, the
// state's form of lay's type, states. It is what valuesMatch finds comparing
// the form's content with observed's, without converting either: an object
// written by several managers is at another resourceVersion than each
// manager's state but the last writer's, so the check runs for every other
// manager in every reconcile that follows a change, and converting both
// sides cost more than the rest of the apply's client-side work.
//
// decided is false, and the general check answers, for anything else: a
// form stating more than the object's identity and its status conditions, a
// kind whose schema does not merge conditions by type field by field (see
// conditionsSchema.byType), an object whose status conditions are not a
// []metav1.Condition under "status" and "conditions", or a value the two
// could read differently (a condition without a type, an observedGeneration
// or a lastTransitionTime that is zero on either side: converted content
// leaves those out or null). FuzzConditionsHeld holds the two to the same
// result.
//
// Observed is compared whole, where the general check reads it narrowed to
// the fields the manager's entry lists: a state's fields are all in its
// entry (the fields it applied, which the API server recorded, or those it
// extracted from it), so the narrowing never hides one of them.
func conditionsHeld(lay *acLayout, ks *kindSchema, objs *objectConditions, ac any, observed client.Object) (held, decided bool) {
	if lay == nil || !lay.identityByName || lay.conditions == nil || !lay.statusByName ||
		ks == nil || !ks.conditions.byType || !lay.onlyConditions(ac) {
		return false, false
	}
	have, ok := objs.of(observed)
	if !ok {
		return false, false
	}
	conds, _ := lay.statusConditions(ac)
	held = true
	for i := range conds {
		c := &conds[i]
		if c.Type == nil {
			return false, false
		}
		o := meta.FindStatusCondition(have, *c.Type) // the first of the type, as the general check finds an item by its keys
		if o == nil {
			held = false
			continue
		}
		same, comparable := conditionHeld(c, o)
		if !comparable {
			return false, false
		}
		held = held && same
	}
	return held, true
}

// conditionHeld compares the fields c states with o's, as unstructured
// content has them: strings as they are, times as they encode (see
// equalTime). comparable is false for a zero observedGeneration or time on
// either side.
func conditionHeld(c *metav1ac.ConditionApplyConfiguration, o *metav1.Condition) (same, comparable bool) {
	same = (c.Status == nil || *c.Status == o.Status) &&
		(c.Reason == nil || *c.Reason == o.Reason) &&
		(c.Message == nil || *c.Message == o.Message)
	if c.ObservedGeneration != nil {
		if *c.ObservedGeneration == 0 || o.ObservedGeneration == 0 {
			return false, false
		}
		same = same && *c.ObservedGeneration == o.ObservedGeneration
	}
	if c.LastTransitionTime != nil {
		if c.LastTransitionTime.IsZero() || o.LastTransitionTime.IsZero() {
			return false, false
		}
		same = same && equalTime(c.LastTransitionTime, &o.LastTransitionTime)
	}
	return same, true
}

// onlyConditions reports whether ac, of lay's type, states nothing but its
// object's identity (apiVersion, kind, name, namespace, uid,
// resourceVersion, generateName) and its status conditions.
func (lay *acLayout) onlyConditions(ac any) bool {
	v := reflect.ValueOf(ac)
	if v.Type() != lay.typ || v.IsNil() {
		return false
	}
	v = v.Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case len(lay.typeMeta) == 1 && i == lay.typeMeta[0]:
		case len(lay.meta) == 1 && i == lay.meta[0]:
			if m, _ := f.Interface().(*metav1ac.ObjectMetaApplyConfiguration); m != nil && !onlyIdentity(*m) {
				return false
			}
		case i == lay.conditions[0]:
			if f.IsNil() {
				continue
			}
			status := f.Elem()
			for j := range status.NumField() {
				if j != lay.conditions[1] && !status.Field(j).IsZero() {
					return false
				}
			}
		default:
			if !f.IsZero() {
				return false
			}
		}
	}
	return true
}

// onlyIdentity reports whether m states nothing but what names its object.
func onlyIdentity(m metav1ac.ObjectMetaApplyConfiguration) bool {
	m.Name, m.Namespace, m.UID, m.ResourceVersion, m.GenerateName = nil, nil, nil, nil, nil
	return reflect.ValueOf(m).IsZero()
}

// objectConditions finds the status conditions of typed objects: where a Go
// type keeps them is found once by reflection. Types are a closed, small set
// in a process, so the cache needs no bound.
type objectConditions struct{ m sync.Map } // reflect.Type to *statusConditionsAt

// statusConditionsAt is where a typed object keeps its status conditions; found
// is false when it keeps none the way objectConditions reads them.
type statusConditionsAt struct {
	found      bool
	status     int  // the index of the field named "status" in JSON
	statusPtr  bool // that field is a pointer to the status struct
	conditions int  // the index of the status field named "conditions"
}

var (
	conditionsType    = reflect.TypeFor[[]metav1.Condition]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
)

// of returns obj's status conditions; ok is false when obj's type keeps
// none under "status" and "conditions" as a []metav1.Condition, or encodes
// itself or its status in its own way.
func (p *objectConditions) of(obj client.Object) (conds []metav1.Condition, ok bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	x, known := p.m.Load(v.Type())
	if !known {
		x, _ = p.m.LoadOrStore(v.Type(), findConditionsPath(v.Type()))
	}
	path, _ := x.(*statusConditionsAt)
	if path == nil || !path.found {
		return nil, false
	}
	status := v.Elem().Field(path.status)
	if path.statusPtr {
		if status.IsNil() {
			return nil, true
		}
		status = status.Elem()
	}
	c, _ := status.Field(path.conditions).Addr().Interface().(*[]metav1.Condition)
	if c == nil {
		return nil, false
	}
	return *c, true
}

func findConditionsPath(typ reflect.Type) *statusConditionsAt {
	st := typ.Elem()
	if typ.Implements(jsonMarshalerType) || st.Implements(jsonMarshalerType) {
		return &statusConditionsAt{}
	}
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() || f.Anonymous || jsonName(f) != "status" {
			continue
		}
		statusType, ptr := f.Type, false
		if statusType.Kind() == reflect.Pointer {
			statusType, ptr = statusType.Elem(), true
		}
		if statusType.Kind() != reflect.Struct || statusType.Implements(jsonMarshalerType) ||
			reflect.PointerTo(statusType).Implements(jsonMarshalerType) {
			return &statusConditionsAt{}
		}
		for j := range statusType.NumField() {
			c := statusType.Field(j)
			if c.IsExported() && !c.Anonymous && jsonName(c) == "conditions" && c.Type == conditionsType {
				return &statusConditionsAt{found: true, status: i, statusPtr: ptr, conditions: j}
			}
		}
		return &statusConditionsAt{}
	}
	return &statusConditionsAt{}
}
