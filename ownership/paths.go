package ownership

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ConditionKey is the map-list key of status conditions.
const ConditionKey = "type"

// StatusPath is the path of .status, the root of everything this package
// inspects and migrates.
func StatusPath() fieldpath.Path {
	return fieldpath.MakePathOrDie("status")
}

// ConditionsPath is the path of .status.conditions.
func ConditionsPath() fieldpath.Path {
	return fieldpath.MakePathOrDie("status", "conditions")
}

// ConditionPath is the path of the condition of the given type in a map-list
// keyed by type; it prints as .status.conditions[type="X"], the format the API
// server uses in conflict causes.
func ConditionPath(condType string) fieldpath.Path {
	return fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields(ConditionKey, condType))
}

// OwnedWhole reports whether p is a member of s with no member below it: a
// value owned as one (a scalar, or an atomic list or map), not a container
// whose members carry the ownership.
func OwnedWhole(s *fieldpath.Set, p fieldpath.Path) bool {
	return s != nil && s.Has(p) && !ownsBelow(s, p)
}

// conditionTypes lists the condition types whose map-list entries appear in s
// (as a member or with members below), in sorted order.
func conditionTypes(s *fieldpath.Set) []string {
	if s == nil {
		return nil
	}
	list := s.WithPrefix(fieldpath.FieldNameElement("status")).WithPrefix(fieldpath.FieldNameElement("conditions"))
	var types []string
	add := func(pe fieldpath.PathElement) {
		if t, ok := conditionTypeOf(pe); ok {
			types = append(types, t)
		}
	}
	list.Members.Iterate(add)
	list.Children.Iterate(func(pe fieldpath.PathElement) {
		if !list.Members.Has(pe) {
			add(pe)
		}
	})
	return sortedUnique(types)
}

// ConditionTypeAt returns X when p is .status.conditions[type="X"] or lies
// below it, and false elsewhere. Only the object's own status conditions keyed
// by type alone, as metav1.Condition lists are, count: an item of a list keyed
// by more than its type is not the condition ConditionPath names.
func ConditionTypeAt(p fieldpath.Path) (string, bool) {
	if len(p) < 3 || !hasPrefix(p, ConditionsPath()) {
		return "", false
	}
	return conditionTypeOf(p[2])
}

// conditionTypeOf returns the type of a conditions map-list key element: a
// key of the type alone, a string.
func conditionTypeOf(pe fieldpath.PathElement) (string, bool) {
	if pe.Key == nil || len(*pe.Key) != 1 {
		return "", false
	}
	f := (*pe.Key)[0]
	if f.Name != ConditionKey || f.Value == nil || !f.Value.IsString() {
		return "", false
	}
	return f.Value.AsString(), true
}
