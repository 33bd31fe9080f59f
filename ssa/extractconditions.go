package ssa

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// conditionLeaves is the shape of a managedFields entry that names fields of
// status conditions, by their type, and nothing else: what a manager of
// conditions owns. It is read once per decoded entry (see newEntryFields).
type conditionLeaves struct {
	// fields are, per condition type, the fields of the condition the
	// entry names: bit i for metav1ConditionFields[i].
	fields map[string]uint8
}

// conditionLeavesOf returns leaves' shape, or nil when leaves name anything
// but fields of status conditions identified by their type alone.
func conditionLeavesOf(leaves *fieldpath.Set) *conditionLeaves {
	status, ok := onlyField(leaves, "status")
	if !ok {
		return nil
	}
	items, ok := onlyField(status, "conditions")
	if !ok || items.Members.Size() != 0 || items.Children.Empty() {
		return nil // a whole item as a leaf, or none
	}
	out := &conditionLeaves{fields: map[string]uint8{}}
	items.Children.Iterate(func(pe fieldpath.PathElement) {
		if out == nil {
			return
		}
		under, _ := items.Children.Get(pe)
		typ, isType := conditionTypeOf(pe)
		mask := conditionFieldsOf(under)
		if !isType || mask == 0 {
			out = nil
			return
		}
		out.fields[typ] = mask
	})
	return out
}

// onlyField returns what s names under the field name when that is all s
// names.
func onlyField(s *fieldpath.Set, name string) (*fieldpath.Set, bool) {
	if s == nil || s.Members.Size() != 0 {
		return nil, false
	}
	var under *fieldpath.Set
	n := 0
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		n++
		if pe.FieldName != nil && *pe.FieldName == name {
			under, _ = s.Children.Get(pe)
		}
	})
	return under, n == 1 && under != nil
}

// conditionTypeOf returns the type an item's path element names it by, when
// that is its one key.
func conditionTypeOf(pe fieldpath.PathElement) (string, bool) {
	if pe.Key == nil || len(*pe.Key) != 1 {
		return "", false
	}
	k := (*pe.Key)[0]
	if k.Name != "type" || k.Value == nil || !k.Value.IsString() {
		return "", false
	}
	return k.Value.AsString(), true
}

// conditionFieldsOf returns the fields of a condition that under names as
// leaves, as bits of metav1ConditionFields; 0 when it names anything else.
func conditionFieldsOf(under *fieldpath.Set) uint8 {
	if under == nil || !under.Children.Empty() {
		return 0
	}
	var mask uint8
	known := true
	under.Members.Iterate(func(pe fieldpath.PathElement) {
		bit := -1
		if pe.FieldName != nil {
			bit = slices.Index(metav1ConditionFields[:], *pe.FieldName)
		}
		if bit < 0 {
			known = false
			return
		}
		mask |= 1 << bit
	})
	if !known {
		return 0
	}
	return mask
}

// conditionsContent is entryFields.extract for an entry of status conditions
// alone (f.conditions), read off the typed object's []metav1.Condition
// rather than converted to unstructured content, checked against the
// kind's schema and walked: the first apply of each manager of an object the
// Applier remembers nothing of (after a restart, in a Flush of many objects)
// extracts what it owns, and the conversion and the check cost more than the
// rest of the apply's client-side work. The object's Go type keeps its
// conditions as metav1.Condition values, which a kind whose schema merges
// them by type field by field (conditionsSchema.byType) holds as they are.
//
// The content and its completeness are extract's: the named items in the
// object's order, each with the named fields it has as unstructured content
// has them (an observedGeneration of 0 is left out, and the extraction is
// then incomplete; so it is when a named type is missing). ok is false, and
// extract answers, for anything else: an entry of another shape, a kind
// whose schema does not merge conditions by type, an object whose type keeps
// them otherwise, no named item on the object, two items of one type, or a
// zero lastTransitionTime (null in unstructured content).
// FuzzConditionsContent holds the two to the same result.
func conditionsContent(ks *kindSchema, objs *objectConditions, f *entryFields, observed client.Object) (content map[string]any, complete, ok bool) {
	if f.conditions == nil || ks == nil || !ks.conditions.byType {
		return nil, false, false
	}
	have, found := objs.of(observed)
	if !found {
		return nil, false, false
	}
	items := make([]any, 0, len(f.conditions.fields))
	var seen []string
	complete = true
	for i := range have {
		c := &have[i]
		mask, named := f.conditions.fields[c.Type]
		if !named {
			continue
		}
		if slices.Contains(seen, c.Type) {
			return nil, false, false
		}
		seen = append(seen, c.Type)
		item, all, read := conditionContent(c, mask)
		if !read {
			return nil, false, false
		}
		complete = complete && all && mask&1 != 0 // the item holds its key
		items = append(items, item)
	}
	if len(items) == 0 {
		return nil, false, false
	}
	complete = complete && len(items) == len(f.conditions.fields)
	return map[string]any{"status": map[string]any{"conditions": items}}, complete, true
}

// conditionContent returns the fields of c that mask names, as unstructured
// content has them; all is false when one is left out there.
func conditionContent(c *metav1.Condition, mask uint8) (item map[string]any, all, ok bool) {
	item = make(map[string]any, 6)
	all = true
	for i, name := range metav1ConditionFields {
		if mask&(1<<i) == 0 {
			continue
		}
		switch name {
		case "type":
			item[name] = c.Type
		case "status":
			item[name] = string(c.Status)
		case "reason":
			item[name] = c.Reason
		case "message":
			item[name] = c.Message
		case "observedGeneration":
			if c.ObservedGeneration == 0 {
				all = false // omitempty
				continue
			}
			item[name] = c.ObservedGeneration
		case "lastTransitionTime":
			if c.LastTransitionTime.IsZero() {
				return nil, false, false
			}
			item[name] = c.LastTransitionTime.ToUnstructured() // as the converter encodes it
		}
	}
	if len(item) == 0 {
		return nil, false, false
	}
	return item, all, true
}
