package conflicts

import (
	"fmt"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// removalTarget is what RemoveFields gives up for a contested path, for a
// writer whose field manager owns owned: the fields of its Apply entry, as
// ownership.AppliedFields reads them (nil when it has none). The rule turns on
// the innermost list element the path selects:
//
//   - An element of a keyed list (a map list such as status conditions, its
//     element selected as [type="Ready"]) that the manager owns: the path
//     itself. The element stays in the apply with its key and every field that
//     is not contested. A keyed element stays on the object only while some
//     manager owns its key, and the field's new owner may own no more than the
//     field: a merge patch that changed a condition's status, reason and
//     message owns those three, not the type. An apply that left the element
//     out would have the API server delete it, the new owner's values
//     included. An element that lacks fields it must have is fine in an
//     apply: the API server validates the object merged from every owner.
//   - Any other list element (a keyed one the manager does not own, or one
//     selected by value or index): the whole element. Keeping its key would
//     make the writer a co-owner of an element it only contested: when the
//     element's owner later dropped it, the API server would keep the
//     writer's part, without the contested fields.
//   - A path in no list element: the path itself. A contested `.status.endpoint`
//     gives up just that field, and `.status.attributes.zone` just that map
//     key. A path that selects a field of a plain struct gives up the field
//     alone, so when a struct has required fields, yield the struct's path
//     instead.
//
// The manager owns a keyed element when owned holds the element or one of its
// key fields, so the leaves of an entry serve as well as the entry.
func removalTarget(path fieldpath.Path, owned *fieldpath.Set) fieldpath.Path {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].FieldName != nil {
			continue
		}
		if path[i].Key != nil && ownsElement(owned, path[:i+1]) {
			return path
		}
		return path[:i+1]
	}
	return path
}

// ownsElement reports whether owned holds elem, a path ending in an element
// of a keyed list, or one of the element's key fields.
func ownsElement(owned *fieldpath.Set, elem fieldpath.Path) bool {
	if owned == nil || owned.Empty() {
		return false
	}
	if owned.Has(elem) {
		return true
	}
	for _, f := range *elem[len(elem)-1].Key {
		p := make(fieldpath.Path, 0, len(elem)+1)
		p = append(append(p, elem...), fieldpath.PathElement{FieldName: &f.Name})
		if owned.Has(p) {
			return true
		}
	}
	return false
}

// RemoveFields strips contested fields from an unstructured apply intent in
// place, giving up per path what docs/conflicts.md ("What a yield leaves
// out") says, with owned the fields of the writer's Apply entry (nil when it
// has none), and leaves their siblings alone. It returns the
// targets it removed, once each; paths the intent does not contain are
// skipped. The key of a keyed element the manager owns is never removed: a
// path that names such an element itself leaves the element holding its key
// fields alone. Maps and lists that the removal leaves empty are removed too,
// so that the re-sent apply does not claim an empty container; containers that
// were already empty stay.
//
// What is left may claim nothing at all, or only what the manager owns
// already, with the same values: an apply of the first would give up
// everything the manager owns, one of the second would change nothing.
// Whether to send it is the caller's decision; the ssa package sends neither.
//
// It returns an error, having removed nothing for that path, when the intent's
// shape does not match a path (a field where a list was expected, say).
func RemoveFields(intent map[string]interface{}, owned *fieldpath.Set, paths ...fieldpath.Path) ([]fieldpath.Path, error) {
	var removed []fieldpath.Path
	done := fieldpath.NewSet()
	for _, p := range paths {
		target := removalTarget(p, owned)
		if len(target) == 0 || done.Has(target) {
			continue
		}
		keepKey := target[len(target)-1].Key != nil && ownsElement(owned, target)
		_, ok, err := removeAt(intent, target, target, keepKey)
		if err != nil {
			return removed, err
		}
		if ok {
			done.Insert(target)
			removed = append(removed, target)
		}
	}
	return removed, nil
}

// removeAt removes rest (a suffix of full) from node and returns the new node
// and whether anything was removed. With keepKey, the keyed list element rest
// ends in keeps its key fields.
func removeAt(node interface{}, rest, full fieldpath.Path, keepKey bool) (interface{}, bool, error) {
	pe := rest[0]
	if pe.FieldName != nil {
		m, ok := node.(map[string]interface{})
		if !ok {
			return node, false, fmt.Errorf("removing %s: expected an object before %s, found %T", full, pe, node)
		}
		child, ok := m[*pe.FieldName]
		if !ok {
			return node, false, nil
		}
		if len(rest) == 1 {
			delete(m, *pe.FieldName)
			return m, true, nil
		}
		newChild, removed, err := removeAt(child, rest[1:], full, keepKey)
		if err != nil || !removed {
			return node, false, err
		}
		if isEmpty(newChild) {
			delete(m, *pe.FieldName)
		} else {
			m[*pe.FieldName] = newChild
		}
		return m, true, nil
	}
	list, ok := node.([]interface{})
	if !ok {
		return node, false, fmt.Errorf("removing %s: expected a list at %s, found %T", full, pe, node)
	}
	i := findElement(list, pe)
	if i < 0 {
		return node, false, nil
	}
	if len(rest) == 1 {
		if keepKey && pe.Key != nil {
			elem := list[i].(map[string]interface{}) // findElement matched a key in it
			if len(elem) == len(*pe.Key) {
				return node, false, nil // its key is all it holds
			}
			keyOnly := make(map[string]interface{}, len(*pe.Key))
			for _, f := range *pe.Key {
				keyOnly[f.Name] = elem[f.Name]
			}
			out := append([]interface{}(nil), list...)
			out[i] = keyOnly
			return out, true, nil
		}
		return append(list[:i:i], list[i+1:]...), true, nil
	}
	newElem, removed, err := removeAt(list[i], rest[1:], full, keepKey)
	if err != nil || !removed {
		return node, false, err
	}
	out := append([]interface{}(nil), list...)
	out[i] = newElem
	return out, true, nil
}

// findElement returns the index of the list element pe selects, or -1.
func findElement(list []interface{}, pe fieldpath.PathElement) int {
	switch {
	case pe.Index != nil:
		if *pe.Index >= 0 && *pe.Index < len(list) {
			return *pe.Index
		}
	case pe.Value != nil:
		for i, e := range list {
			if value.Equals(value.NewValueInterface(e), *pe.Value) {
				return i
			}
		}
	case pe.Key != nil:
		for i, e := range list {
			m, ok := e.(map[string]interface{})
			if ok && keyMatches(m, *pe.Key) {
				return i
			}
		}
	}
	return -1
}

func keyMatches(m map[string]interface{}, key value.FieldList) bool {
	for _, f := range key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}

func isEmpty(node interface{}) bool {
	switch n := node.(type) {
	case map[string]interface{}:
		return len(n) == 0
	case []interface{}:
		return len(n) == 0
	}
	return false
}
