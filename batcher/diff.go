package batcher

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/statusapply/statusapply/internal/jsonvalue"
)

// An Edit's changes are found by walking its content before and after with the
// kind's schema, by structured-merge-diff's rules but without typed values,
// which would cost many times the edit itself.

// diffContent adds to changed the paths below prefix whose value differs or is
// new (a new struct, map or list item whole), and to removed those gone.
func diffContent(s *schema.Schema, tr schema.TypeRef, before, after any, prefix fieldpath.Path, changed, removed *fieldpath.Set) {
	(&differ{schema: s, changed: changed, removed: removed}).diff(tr, before, after, prefix, true)
}

// diffClaims is diffContent recording a changed keyed list item (a condition)
// as the item's path, since the Edit claims it whole; items holding a keyed
// list go leaf by leaf, as claimElements claims the innermost item.
func diffClaims(s *schema.Schema, tr schema.TypeRef, before, after any, changed, removed *fieldpath.Set) {
	(&differ{schema: s, changed: changed, removed: removed, wholeItems: true}).diff(tr, before, after, nil, true)
}

type differ struct {
	schema           *schema.Schema
	changed, removed *fieldpath.Set
	wholeItems       bool
}

// diff compares before and after of type tr at prefix, recording changed paths
// if record and removed ones always; it reports whether anything changed,
// removals aside.
func (d *differ) diff(tr schema.TypeRef, before, after any, prefix fieldpath.Path, record bool) bool {
	if jsonvalue.Equal(before, after) {
		return false // nothing below differs: no path to build
	}
	atom, ok := d.schema.Resolve(tr)
	byField := ok && atom.Map != nil && atom.Map.ElementRelationship != schema.Atomic
	byItem := ok && atom.List != nil && atom.List.ElementRelationship == schema.Associative
	switch {
	case byField:
		bm, bok := before.(map[string]any)
		am, aok := after.(map[string]any)
		if !bok || !aok {
			break
		}
		changedAny := false
		for k, av := range am {
			bv, had := bm[k]
			if had && jsonvalue.Equal(bv, av) {
				continue
			}
			p := append(prefix.Copy(), fieldpath.PathElement{FieldName: &k})
			if !had {
				d.record(p, record)
				changedAny = true
				continue
			}
			ft := atom.Map.ElementType
			if f, found := atom.FindField(k); found {
				ft = f.Type
			}
			changedAny = d.diff(ft, bv, av, p, record) || changedAny
		}
		for k := range bm {
			if _, still := am[k]; !still {
				d.removed.Insert(append(prefix.Copy(), fieldpath.PathElement{FieldName: &k}))
			}
		}
		return changedAny
	case byItem:
		bl, bok := before.([]any)
		al, aok := after.([]any)
		if !bok && before != nil || !aok && after != nil {
			break
		}
		keys := atom.Keys
		beforeByKey := make(map[string]any, len(bl))
		for _, item := range bl {
			if k, ok := elementKey(item, keys); ok {
				beforeByKey[k] = item
			}
		}
		whole := d.wholeItems && len(keys) > 0 && !holdsKeyedList(d.schema, atom.List.ElementType, 0)
		changedAny := false
		afterKeys := make(map[string]bool, len(al))
		for _, item := range al {
			k, ok := elementKey(item, keys)
			if !ok {
				continue
			}
			afterKeys[k] = true
			prev, had := beforeByKey[k]
			if !had {
				pe, _ := elementOf(item, keys)
				d.record(append(prefix.Copy(), pe), record)
				changedAny = true
			} else if len(keys) > 0 && !jsonvalue.Equal(prev, item) {
				pe, _ := elementOf(item, keys)
				p := append(prefix.Copy(), pe)
				if !whole {
					changedAny = d.diff(atom.List.ElementType, prev, item, p, record) || changedAny
				} else if d.diff(atom.List.ElementType, prev, item, p, false) {
					d.record(p, record)
					changedAny = true
				}
			}
		}
		for _, item := range bl {
			if k, ok := elementKey(item, keys); ok && !afterKeys[k] {
				pe, _ := elementOf(item, keys)
				d.removed.Insert(append(prefix.Copy(), pe))
			}
		}
		return changedAny
	}
	d.record(prefix.Copy(), record)
	return true
}

func (d *differ) record(p fieldpath.Path, record bool) {
	if record {
		d.changed.Insert(p)
	}
}

// holdsKeyedList reports whether type tr holds a keyed list at any depth;
// depth bounds recursive schemas.
func holdsKeyedList(s *schema.Schema, tr schema.TypeRef, depth int) bool {
	atom, ok := s.Resolve(tr)
	if !ok || depth > 32 {
		return true // unknown: take the leaf-by-leaf walk
	}
	if atom.List != nil {
		if atom.List.ElementRelationship == schema.Associative && len(atom.Keys) > 0 {
			return true
		}
		return holdsKeyedList(s, atom.List.ElementType, depth+1)
	}
	if atom.Map != nil {
		for _, f := range atom.Fields {
			if holdsKeyedList(s, f.Type, depth+1) {
				return true
			}
		}
		if atom.Map.ElementType.NamedType != nil || atom.Map.ElementType.Inlined != (schema.Atom{}) {
			return holdsKeyedList(s, atom.Map.ElementType, depth+1)
		}
	}
	return false
}

// elementOf returns a list item's path element: its keys, or a scalar's value.
func elementOf(item any, keys []string) (fieldpath.PathElement, bool) {
	if len(keys) == 0 {
		switch item.(type) {
		case map[string]any, []any:
			return fieldpath.PathElement{}, false
		}
		v := value.NewValueInterface(item)
		return fieldpath.PathElement{Value: &v}, true
	}
	m, ok := item.(map[string]any)
	if !ok {
		return fieldpath.PathElement{}, false
	}
	fields := make(value.FieldList, 0, len(keys))
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			return fieldpath.PathElement{}, false
		}
		fields = append(fields, value.Field{Name: k, Value: value.NewValueInterface(v)})
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}, true
}

// elementKey identifies a list item by its key fields (or, in a set of
// scalars, its value) as a string, cheaply: the diff looks every item up.
func elementKey(item any, keys []string) (string, bool) {
	if len(keys) == 0 {
		switch item.(type) {
		case map[string]any, []any:
			return "", false
		}
		return fmt.Sprintf("%T:%v", item, item), true
	}
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	if len(keys) == 1 {
		if s, isString := m[keys[0]].(string); isString {
			return s, true // the common case (conditions by type): no allocation
		}
	}
	var b strings.Builder
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			return "", false
		}
		if s, isString := v.(string); isString {
			b.WriteString(s)
		} else {
			fmt.Fprintf(&b, "%T:%v", v, v)
		}
		b.WriteByte(0)
	}
	return b.String(), true
}

// keyOfElement is elementKey for the item a path element names.
func keyOfElement(pe fieldpath.PathElement, keys []string) (string, bool) {
	if pe.Value != nil {
		return elementKey((*pe.Value).Unstructured(), nil)
	}
	item := make(map[string]any, len(*pe.Key))
	for _, f := range *pe.Key {
		item[f.Name] = f.Value.Unstructured()
	}
	return elementKey(item, keys)
}

// copyPath copies the value at p in src into dst, creating what is missing,
// and returns dst; found is false when src has nothing at p.
func copyPath(dst, src any, p fieldpath.Path) (out any, found bool) {
	if len(p) == 0 {
		return runtime.DeepCopyJSONValue(src), true
	}
	pe := p[0]
	if pe.FieldName != nil {
		sm, ok := src.(map[string]any)
		if !ok {
			return dst, false
		}
		sv, ok := sm[*pe.FieldName]
		if !ok {
			return dst, false
		}
		dm, ok := dst.(map[string]any)
		if !ok {
			dm = map[string]any{}
		}
		nv, found := copyPath(dm[*pe.FieldName], sv, p[1:])
		if found {
			dm[*pe.FieldName] = nv
		}
		return dm, found
	}
	if pe.Key != nil || pe.Value != nil {
		sl, _ := src.([]any)
		si := indexOf(sl, pe)
		if si < 0 {
			return dst, false
		}
		dl, _ := dst.([]any)
		di := indexOf(dl, pe)
		var cur any
		if di >= 0 {
			cur = dl[di]
		}
		nv, found := copyPath(cur, sl[si], p[1:])
		if !found {
			return dst, false
		}
		if di >= 0 {
			dl[di] = nv
		} else {
			dl = append(dl, nv)
		}
		return dl, true
	}
	return dst, false
}

// indexOf returns the index of the item pe names in list, or -1.
func indexOf(list []any, pe fieldpath.PathElement) int {
	var keys []string
	if pe.Key != nil {
		for _, f := range *pe.Key {
			keys = append(keys, f.Name)
		}
	}
	want, ok := keyOfElement(pe, keys)
	if !ok {
		return -1
	}
	for i, item := range list {
		if k, ok := elementKey(item, keys); ok && k == want {
			return i
		}
	}
	return -1
}

func equalJSON(a, b any) bool { return jsonvalue.Equal(a, b) }

// removePath removes the value at p from node, if there, and returns node.
func removePath(node any, p fieldpath.Path) any {
	if len(p) == 0 {
		return node
	}
	pe := p[0]
	if pe.FieldName != nil {
		m, ok := node.(map[string]any)
		if !ok {
			return node
		}
		if len(p) == 1 {
			delete(m, *pe.FieldName)
			return m
		}
		if child, ok := m[*pe.FieldName]; ok {
			m[*pe.FieldName] = removePath(child, p[1:])
		}
		return m
	}
	if pe.Key != nil || pe.Value != nil {
		l, ok := node.([]any)
		i := indexOf(l, pe)
		if !ok || i < 0 {
			return node
		}
		if len(p) == 1 {
			return append(l[:i:i], l[i+1:]...)
		}
		l[i] = removePath(l[i], p[1:])
		return l
	}
	return node
}
