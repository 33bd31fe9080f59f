package ssa

import (
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// conditionsSchema is what the schema of a kind says about status.conditions,
// resolved once per apply: an intent's conditions are judged by it.
type conditionsSchema struct {
	// atomic is true when status.conditions is an atomic list (a CRD array
	// without list markers). Such a list has one owner as a whole: a second
	// field manager that applies a condition conflicts with the first, so
	// statusapply refuses to apply conditions into it.
	atomic bool
	// metav1 is true when the list's elements have exactly the fields of
	// metav1.Condition, so the API server validates them as metav1.Condition
	// (built-in kinds in code, CRDs through the schema controller-gen derives
	// from the type). Other shapes, such as Pod or Deployment conditions, have
	// rules of their own and are left to the API server.
	metav1 bool
}

// metav1ConditionFields are the fields of metav1.Condition.
var metav1ConditionFields = [...]string{"type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"}

// conditionsSchemaOf resolves status.conditions in the schema of tv's kind.
func conditionsSchemaOf(tv *typed.TypedValue) conditionsSchema {
	s := tv.Schema()
	atom, ok := s.Resolve(tv.TypeRef())
	for _, name := range []string{"status", "conditions"} {
		if !ok || atom.Map == nil {
			return conditionsSchema{}
		}
		field, found := atom.FindField(name)
		if !found {
			return conditionsSchema{}
		}
		atom, ok = s.Resolve(field.Type)
	}
	if !ok || atom.List == nil {
		return conditionsSchema{}
	}
	out := conditionsSchema{atomic: atom.List.ElementRelationship == schema.Atomic}
	elem, ok := s.Resolve(atom.List.ElementType)
	if !ok || elem.Map == nil || len(elem.Fields) != len(metav1ConditionFields) {
		return out
	}
	for _, name := range metav1ConditionFields {
		if _, found := elem.FindField(name); !found {
			return out
		}
	}
	out.metav1 = true
	return out
}
