package ssa

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// A manager's state is typed from the fields of its entry alone, not the whole
// object: a field another manager set, which this writer's schema lacks (an
// older CRD), is none of its business and must not stop it from writing.

// fieldsOnly returns the parts of content that set's paths name, sharing
// values with content (callers must not modify them), in content's order. A
// member without members below it is kept whole; a list item is matched by
// its key fields or value, and keeps its key fields. ok is false for a set
// this walk cannot follow without the schema (a list item by index): type
// the whole content then.
func fieldsOnly(content map[string]any, set *fieldpath.Set) (out map[string]any, ok bool) {
	return fieldsOfMap(content, set)
}

// typedFieldsOnly returns obj with only set's fields and its kind, to be
// typed: obj itself when fieldsOnly cannot follow set.
func typedFieldsOnly(obj *unstructured.Unstructured, set *fieldpath.Set) *unstructured.Unstructured {
	only, ok := fieldsOnly(obj.Object, set)
	if !ok {
		return obj
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, has := obj.Object[k]; has {
			only[k] = v
		}
	}
	return &unstructured.Unstructured{Object: only}
}

func fieldsOfMap(m map[string]any, set *fieldpath.Set) (map[string]any, bool) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		pe := fieldpath.PathElement{FieldName: &k}
		if child, has := set.Children.Get(pe); has {
			sub, ok := fieldsOf(v, child)
			if !ok {
				return nil, false
			}
			out[k] = sub
		} else if set.Members.Has(pe) {
			out[k] = v
		}
	}
	return out, true
}

// fieldsOf is fieldsOnly of one value: a map, a list, or a scalar (which a
// set with members below it cannot name: kept whole).
func fieldsOf(v any, set *fieldpath.Set) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return fieldsOfMap(x, set)
	case []any:
		return fieldsOfList(x, set)
	}
	return v, true
}

func fieldsOfList(list []any, set *fieldpath.Set) ([]any, bool) {
	var elements []fieldpath.PathElement
	walk := func(pe fieldpath.PathElement) { elements = append(elements, pe) }
	set.Members.Iterate(walk)
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		if !set.Members.Has(pe) {
			walk(pe)
		}
	})
	for _, pe := range elements {
		if pe.Index != nil || pe.FieldName != nil {
			return nil, false
		}
	}
	out := make([]any, 0, len(elements))
	for _, item := range list {
		pe, found := elementFor(item, elements)
		if !found {
			continue
		}
		child, has := set.Children.Get(pe)
		if !has {
			out = append(out, item)
			continue
		}
		sub, ok := fieldsOf(item, child)
		if !ok {
			return nil, false
		}
		if m, isMap := sub.(map[string]any); isMap && pe.Key != nil {
			src, _ := item.(map[string]any)
			for _, f := range *pe.Key {
				m[f.Name] = src[f.Name]
			}
		}
		out = append(out, sub)
	}
	return out, true
}

// elementFor returns the element of elements that names item: its key fields'
// values, or its value for a set.
func elementFor(item any, elements []fieldpath.PathElement) (fieldpath.PathElement, bool) {
	for _, pe := range elements {
		switch {
		case pe.Key != nil:
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			match := true
			for _, f := range *pe.Key {
				got, has := m[f.Name]
				if !has || !value.Equals(value.NewValueInterface(got), f.Value) {
					match = false
					break
				}
			}
			if match {
				return pe, true
			}
		case pe.Value != nil:
			if value.Equals(value.NewValueInterface(item), *pe.Value) {
				return pe, true
			}
		}
	}
	return fieldpath.PathElement{}, false
}
