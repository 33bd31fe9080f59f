package conflicts

import (
	"fmt"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// RemovalTarget is what RemoveFields drops for a contested path: the smallest
// list element the path selects (its last key, value or index element), or the
// path itself when it selects no list element.
//
// A contested `.status.conditions[type="Ready"].status` therefore drops the
// whole condition `[type="Ready"]`: an element of a map list cannot be applied
// without its required fields, and an apply that keeps the element but omits a
// field would give that field up. A contested `.status.endpoint` drops just
// that field, and `.status.attributes.zone` just that map key. A path that
// selects a field of a plain struct drops the field alone, so when a struct
// has required fields, yield the struct's path instead.
func RemovalTarget(path fieldpath.Path) fieldpath.Path {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].FieldName == nil {
			return path[:i+1]
		}
	}
	return path
}

// RemoveFields strips contested fields from an unstructured apply intent in
// place, by RemovalTarget, and leaves their siblings alone. It returns the
// targets it removed, once each; paths the intent does not contain are skipped.
// Maps and lists that the removal leaves empty are removed too, so that the
// re-sent apply does not claim an empty container; containers that were
// already empty stay.
//
// It returns an error, having removed nothing for that path, when the intent's
// shape does not match a path (a field where a list was expected, say).
func RemoveFields(intent map[string]interface{}, paths ...fieldpath.Path) ([]fieldpath.Path, error) {
	var removed []fieldpath.Path
	done := fieldpath.NewSet()
	for _, p := range paths {
		target := RemovalTarget(p)
		if len(target) == 0 || done.Has(target) {
			continue
		}
		_, ok, err := removeAt(intent, target, target)
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
// and whether anything was removed.
func removeAt(node interface{}, rest, full fieldpath.Path) (interface{}, bool, error) {
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
		newChild, removed, err := removeAt(child, rest[1:], full)
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
		return append(list[:i:i], list[i+1:]...), true, nil
	}
	newElem, removed, err := removeAt(list[i], rest[1:], full)
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
