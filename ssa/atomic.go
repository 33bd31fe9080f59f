package ssa

import (
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// conditionsAreAtomic reports whether the schema of tv's kind declares
// status.conditions an atomic list (a CRD array without list markers). Such a
// list has one owner as a whole: a second field manager that applies a
// condition conflicts with the first, so statusapply refuses to apply
// conditions into it.
func conditionsAreAtomic(tv *typed.TypedValue) bool {
	s := tv.Schema()
	atom, ok := s.Resolve(tv.TypeRef())
	for _, name := range []string{"status", "conditions"} {
		if !ok || atom.Map == nil {
			return false
		}
		field, found := atom.FindField(name)
		if !found {
			return false
		}
		atom, ok = s.Resolve(field.Type)
	}
	return ok && atom.List != nil && atom.List.ElementRelationship == schema.Atomic
}
