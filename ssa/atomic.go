package ssa

import (
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// conditionsSchema is what the schema of a kind says about status.conditions,
// resolved once per apply: an intent's conditions are judged by it.
type conditionsSchema struct {
	// atomic: status.conditions is an atomic list, owned whole by one manager,
	// so applying conditions into it would conflict; statusapply refuses to.
	atomic bool
	// metav1: the items have exactly metav1.Condition's fields, so the API
	// server validates them as such; other shapes are left to the API server.
	metav1 bool
}

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
