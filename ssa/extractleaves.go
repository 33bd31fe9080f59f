package ssa

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// extractLeaves reads the values of set's leaves off v, content of schema
// type tr that the schema has already validated, and reports whether every
// leaf is there: what the schema's ExtractItems followed by ToFieldSet give
// (see entryFields.extract), without building a typed value twice and a
// field set once. The first apply of a field manager after a restart, or
// after another writer changed the object, extracts what it owns; the typed
// walks allocated some 200 objects to read one condition.
//
// It reads only what it is sure to read as ExtractItems does: maps of
// fields, keyed lists whose items carry every key, and scalar leaves. For
// anything else (atomic values with paths under them, sets, lists by index,
// an item that leaves a key to its default, duplicate keys, a leaf that is
// a whole map or list, a schema type of several kinds) ok is false and the
// caller extracts with the schema's own walk.
func extractLeaves(s *smdschema.Schema, tr smdschema.TypeRef, v any, set *fieldpath.Set) (out any, complete, ok bool) {
	atom, found := s.Resolve(tr)
	if !found {
		return nil, false, false
	}
	switch {
	case atom.Map != nil && atom.List == nil && atom.Scalar == nil:
		return extractMapLeaves(s, atom.Map, v, set)
	case atom.List != nil && atom.Map == nil && atom.Scalar == nil:
		return extractListLeaves(s, atom.List, v, set)
	case atom.Scalar != nil && atom.Map == nil && atom.List == nil:
		return v, set.Empty(), true
	}
	return nil, false, false
}

// extractMapLeaves is extractLeaves for a map or struct: the fields set names
// that v has, whole for a leaf and read further for a path under it.
func extractMapLeaves(s *smdschema.Schema, m *smdschema.Map, v any, set *fieldpath.Set) (out any, complete, ok bool) {
	obj, isMap := v.(map[string]any)
	switch {
	case !isMap && v != nil:
		return nil, false, false
	case !isMap:
		return nil, set.Empty(), true // null: nothing under it is there
	case len(obj) == 0:
		return obj, set.Empty(), true // extracting from an empty map gives it back
	case m.ElementRelationship == smdschema.Atomic:
		return nil, false, false
	}
	kept := map[string]any{}
	complete, ok = true, true
	// read takes the field pe names: whole for a leaf (under is nil), else
	// what under names of it.
	read := func(pe fieldpath.PathElement, under *fieldpath.Set) {
		if !ok {
			return
		}
		if pe.FieldName == nil {
			ok = false
			return
		}
		if under != nil && under.Empty() {
			return // no path under it: the schema's walk does not keep it
		}
		field, has := obj[*pe.FieldName]
		switch {
		case !has:
			complete = false
		case under == nil:
			switch field.(type) {
			case map[string]any, []any:
				ok = false // the schema's walk goes on into a whole map or list
			default:
				kept[*pe.FieldName] = field
			}
		default:
			ft := m.ElementType
			if f, known := m.FindField(*pe.FieldName); known {
				ft = f.Type
			}
			got, all, readAll := extractLeaves(s, ft, field, under)
			// A field with paths under it stays even when none of them
			// is there (as null), as in the schema's walk.
			kept[*pe.FieldName], complete, ok = got, complete && all, readAll
		}
	}
	set.Members.Iterate(func(pe fieldpath.PathElement) { read(pe, nil) })
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		under, _ := set.Children.Get(pe)
		read(pe, under)
	})
	if !ok {
		return nil, false, false
	}
	if len(kept) == 0 {
		return nil, complete, true
	}
	return kept, complete, true
}

// extractListLeaves is extractLeaves for a list: the items of a keyed list
// set names, whole for a leaf and read further for paths under one.
func extractListLeaves(s *smdschema.Schema, l *smdschema.List, v any, set *fieldpath.Set) (out any, complete, ok bool) {
	items, isList := v.([]any)
	switch {
	case !isList && v != nil:
		return nil, false, false
	case !isList:
		return nil, set.Empty(), true
	case len(items) == 0:
		return items, set.Empty(), true
	case l.ElementRelationship != smdschema.Associative || len(l.Keys) == 0:
		return nil, false, false
	}
	// Every element of set names an item by its keys; paths is how many do
	// with paths under them.
	paths := 0
	ok = true
	check := func(pe fieldpath.PathElement) { ok = ok && pe.Key != nil }
	set.Members.Iterate(check)
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		check(pe)
		if under, _ := set.Children.Get(pe); !under.Empty() {
			paths++
		}
	})
	if !ok {
		return nil, false, false
	}
	var kept []any
	var named []fieldpath.PathElement // the elements of set an item matched
	complete = true
	for _, item := range items {
		obj, isMap := item.(map[string]any)
		if !isMap {
			return nil, false, false
		}
		key := make(value.FieldList, 0, len(l.Keys))
		for _, name := range l.Keys {
			k, has := obj[name]
			if !has {
				return nil, false, false
			}
			key = append(key, value.Field{Name: name, Value: value.NewValueInterface(k)})
		}
		key.Sort()
		pe := fieldpath.PathElement{Key: &key}
		leaf := set.Members.Has(pe)
		under, hasPaths := set.Children.Get(pe)
		hasPaths = hasPaths && !under.Empty()
		if !leaf && !hasPaths {
			continue
		}
		for _, seen := range named {
			if seen.Equals(pe) {
				return nil, false, false // duplicate keys: the field set merges them
			}
		}
		named = append(named, pe)
		if hasPaths {
			got, all, read := extractLeaves(s, l.ElementType, item, under)
			if !read {
				return nil, false, false
			}
			item, complete = got, complete && all && hasKeys(got, l.Keys)
		}
		kept = append(kept, item)
	}
	complete = complete && len(named) == set.Members.Size()+paths
	if len(kept) == 0 {
		return nil, complete, true
	}
	return kept, complete, true
}

// hasKeys reports whether item, an extracted item of a keyed list, holds
// every key: the field set of a list with an item that does not cannot be
// made, and the schema's walk then reports the extraction incomplete.
func hasKeys(item any, keys []string) bool {
	obj, isMap := item.(map[string]any)
	if !isMap {
		return false
	}
	for _, k := range keys {
		if _, has := obj[k]; !has {
			return false
		}
	}
	return true
}
