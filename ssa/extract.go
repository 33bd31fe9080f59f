package ssa

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
)

// extractOwned returns the fields that manager last applied to subresource of
// observed, with their values on observed, as unstructured content. Only the
// manager's Apply entry counts: fields it set with Update are not part of any
// apply configuration. found is false when the manager has no Apply entry.
//
// It is managedfields.ExtractInto for any kind the converter knows, typed or
// unstructured. Callers must first make sure observed carries managedFields
// (see ownership.HasManagedFields): without them every manager owns nothing.
//
// Errors wrap ErrInvalidInput: an entry whose field set does not decode (also
// wrapping ownership.ErrBadManagedFields), or an object that does not match
// its kind's schema.
func extractOwned(tc managedfields.TypeConverter, observed *unstructured.Unstructured, manager string, sub Subresource) (owned map[string]any, found bool, err error) {
	raw, found, err := appliedEntry(observed, manager, sub)
	if err != nil || !found {
		return map[string]any{}, found, err
	}
	m, _, err := extractFrom(tc, ownership.WithoutManagedFields(observed), raw)
	return m, err == nil, err
}

// extractFrom reads, from observed (without managedFields), the values of the
// fields in raw, one managedFields entry's fieldsV1. complete reports whether
// every field of the entry is on observed: a field the manager owns can be
// absent (a typed object leaves out an omitempty zero value it was given),
// and the content alone does not say it is owned, so only complete content
// lets a later value check tell that nothing the manager owns changed.
func extractFrom(tc managedfields.TypeConverter, observed *unstructured.Unstructured, raw []byte) (content map[string]any, complete bool, err error) {
	f, err := newEntryFields(raw)
	if err != nil {
		return nil, false, err
	}
	return f.extract(tc, observed)
}

// entryFields is one managedFields entry's fieldsV1, decoded once for every
// extraction that uses it (the same manager tends to own the same fields on
// every object of a kind). It never changes after newEntryFields: it is
// shared by concurrent extractions, which only read it.
type entryFields struct {
	raw    []byte // the entry, in bytes of its own
	leaves *fieldpath.Set
	// top lists the top-level fields the leaves are under: only those need
	// converting to extract the entry's values or to check them.
	top []string
	// conditions is the leaves' shape when they are fields of status
	// conditions alone (see conditionsContent); nil otherwise.
	conditions *conditionLeaves
}

// newEntryFields decodes raw; its errors are decodeFieldSet's.
func newEntryFields(raw []byte) (*entryFields, error) {
	set, err := decodeFieldSet(raw)
	if err != nil {
		return nil, err
	}
	f := &entryFields{raw: bytes.Clone(raw), leaves: set.Leaves()}
	f.conditions = conditionLeavesOf(f.leaves)
	f.leaves.Iterate(func(p fieldpath.Path) {
		name := p[0].FieldName
		if name == nil {
			// Not a field of an object: at the top level the API server
			// writes none, and decodeFieldSet accepts only what it writes.
			return
		}
		if !slices.Contains(f.top, *name) {
			f.top = append(f.top, *name)
		}
	})
	return f, nil
}

// extract reads the values of f's fields from observed (without
// managedFields), as extractFrom does.
func (f *entryFields) extract(tc managedfields.TypeConverter, observed *unstructured.Unstructured) (content map[string]any, complete bool, err error) {
	if f.leaves.Empty() {
		return map[string]any{}, true, nil
	}
	tv, err := tc.ObjectToTyped(observed, typed.AllowDuplicates)
	if err != nil {
		return nil, false, fmt.Errorf("%w: the object does not match the schema of its kind: %w", ErrInvalidInput, err)
	}
	if out, all, read := extractLeaves(tv.Schema(), tv.TypeRef(), observed.Object, f.leaves); read {
		if m, isMap := out.(map[string]any); isMap {
			return m, all, nil
		}
	}
	return f.extractTyped(tv)
}

// extractTyped is extract by the schema's own walks over tv, the typed
// observed object: what extractLeaves reads more cheaply where it can.
func (f *entryFields) extractTyped(tv *typed.TypedValue) (content map[string]any, complete bool, err error) {
	extracted := tv.ExtractItems(f.leaves)
	m, ok := extracted.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, false, invalidf("the owned fields are a %T, not an object", extracted.AsValue().Unstructured())
	}
	present, err := extracted.ToFieldSet()
	complete = err == nil && f.leaves.Difference(present).Empty()
	return m, complete, nil
}

// entryCacheSize bounds the decoded entries an Applier keeps: a controller's
// managers own a few shapes of fields, each on many objects.
const entryCacheSize = 256

// entryCache keeps decoded managedFields entries by their JSON. When full it
// starts again empty: what it holds is only ever a shortcut.
type entryCache struct {
	mu sync.Mutex
	m  map[string]*entryFields
}

// fields returns raw decoded, from the cache when an equal entry was decoded
// before. Entries that do not decode are not kept.
func (c *entryCache) fields(raw []byte) (*entryFields, error) {
	c.mu.Lock()
	f := c.m[string(raw)]
	c.mu.Unlock()
	if f != nil {
		return f, nil
	}
	f, err := newEntryFields(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= entryCacheSize {
		c.m = make(map[string]*entryFields)
	}
	c.m[string(raw)] = f
	return f, nil
}

// intern returns the bytes of an entry equal to raw decoded before, else raw:
// the states of one manager on many objects then share one copy of the
// entry they were made from.
func (c *entryCache) intern(raw []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.m[string(raw)]; f != nil {
		return f.raw
	}
	return raw
}

// contentOf returns obj, of kind gvk, as unstructured content holding the
// top-level fields named in top (and the object's kind), without
// managedFields: what extracting an entry over those fields, and checking
// their values, reads. The content shares what it can with obj (callers must
// not modify it), and a typed object is converted without copying it
// first. Converting the whole object instead, once for every manager of
// every object, cost more than anything else the first apply after a
// restart does.
//
// With the kind's schema ks (nil for none), a typed object also leaves out
// the items of keyed lists (conditions) that no path of leaves names, before
// converting them: a manager of one condition among many reads one.
func contentOf(obj client.Object, gvk schema.GroupVersionKind, top []string, ks *kindSchema, leaves *fieldpath.Set) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content := make(map[string]any, len(top)+2)
		for _, k := range []string{"apiVersion", "kind"} {
			if v, has := u.Object[k]; has {
				content[k] = v
			}
		}
		for _, k := range top {
			if v, has := u.Object[k]; has {
				content[k] = v
			}
		}
		return ownership.WithoutManagedFields(&unstructured.Unstructured{Object: content}), nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %T is not a pointer to a struct", ErrInvalidInput, obj)
	}
	// A shallow copy (converting only reads it) in which the fields nobody
	// reads are zero and managedFields are left out.
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	st := cp.Elem()
	for i := range st.NumField() {
		name, known := jsonFieldName(st.Type().Field(i))
		if known && !slices.Contains(top, name) {
			st.Field(i).SetZero()
		}
	}
	if ks != nil && leaves != nil {
		if narrow, changed := narrowed(ks.schema, ks.typeRef, st, leaves); changed {
			st.Set(narrow)
		}
	}
	co, ok := cp.Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("%w: %T is not a client.Object", ErrInvalidInput, obj)
	}
	co.SetManagedFields(nil)
	if content, ok := fieldsToUnstructured(st, top); ok {
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(co)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	for k := range content {
		// A zero struct field still converts (metadata to a null
		// creationTimestamp): typing it for nothing would cost as much as
		// the fields that are read.
		if !slices.Contains(top, k) {
			delete(content, k)
		}
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// fieldsToUnstructured converts the fields of st named in top one by one,
// each as the whole object's conversion converts it, without converting the
// object around them. ok is false unless every one of them is a non-empty
// struct (or a pointer to one) that converts to an object: for others the
// whole object is converted, which leaves some of them out.
func fieldsToUnstructured(st reflect.Value, top []string) (content map[string]any, ok bool) {
	content = make(map[string]any, len(top)+2)
	for i := range st.NumField() {
		name, known := jsonFieldName(st.Type().Field(i))
		if !known || !slices.Contains(top, name) {
			continue
		}
		f := st.Field(i)
		switch {
		case f.Kind() == reflect.Struct && !f.IsZero():
			f = f.Addr()
		case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Struct && !f.Elem().IsZero():
		default:
			return nil, false
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(f.Interface())
		if err != nil {
			return nil, false
		}
		content[name] = m
	}
	return content, len(content) == len(top)
}

// jsonFieldName returns the JSON name of a struct field that is written
// under a name of its own; known is false for any other field (inlined, or
// not written), which is kept as it is.
func jsonFieldName(f reflect.StructField) (name string, known bool) {
	name, inline, ok := objects.JSONName(f)
	return name, ok && !inline
}

// narrowed returns v, a Go value of schema type tr, without the items of
// keyed lists that no path of set can name: extracting set from the
// converted result gives what extracting it from v converted gives. It is
// conservative: it only drops an item whose string key differs from that of
// every path at its list, follows struct fields the set has paths under
// (not atomic ones, not a field the set names whole), and keeps a list it
// would empty (extracting from an empty list gives it back empty, from a
// full one gives nothing). v is not modified: changed reports a new value,
// which copies what it changes and shares the rest.
func narrowed(s *smdschema.Schema, tr smdschema.TypeRef, v reflect.Value, set *fieldpath.Set) (out reflect.Value, changed bool) {
	atom, found := s.Resolve(tr)
	if !found {
		return v, false
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		inner, changed := narrowed(s, tr, v.Elem(), set)
		if !changed {
			return v, false
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(inner)
		return p, true
	case reflect.Struct:
		if atom.Map == nil || atom.Map.ElementRelationship == smdschema.Atomic {
			return v, false
		}
		for i := range v.NumField() {
			name, known := jsonFieldName(v.Type().Field(i))
			if !known {
				continue
			}
			pe := fieldpath.PathElement{FieldName: &name}
			child, under := set.Children.Get(pe)
			if !under || set.Members.Has(pe) {
				continue
			}
			ft := atom.Map.ElementType
			if f, has := atom.FindField(name); has {
				ft = f.Type
			}
			field, fieldChanged := narrowed(s, ft, v.Field(i), child)
			if !fieldChanged {
				continue
			}
			if !changed {
				cp := reflect.New(v.Type()).Elem()
				cp.Set(v)
				v, changed = cp, true
			}
			v.Field(i).Set(field)
		}
		return v, changed
	case reflect.Slice:
		if atom.List == nil || atom.List.ElementRelationship != smdschema.Associative || len(atom.Keys) == 0 || v.Len() == 0 {
			return v, false
		}
		var named []fieldpath.PathElement
		add := func(pe fieldpath.PathElement) { named = append(named, pe) }
		set.Members.Iterate(add)
		set.Children.Iterate(add)
		keys, ok := itemKeysOf(v.Type().Elem(), atom.Keys, named)
		if !ok {
			return v, false
		}
		kept := reflect.MakeSlice(v.Type(), 0, min(v.Len(), len(named)))
		for i := range v.Len() {
			if item := v.Index(i); keys.named(item) {
				kept = reflect.Append(kept, item)
			}
		}
		if kept.Len() == 0 || kept.Len() == v.Len() {
			return v, false
		}
		return kept, true
	}
	return v, false
}

// itemKeys says which items of a keyed list of Go structs a set's path
// elements may name. Where an item's keys are found in its struct type is
// worked out once per list, not once per item and path element: a list of
// conditions is read for every field manager's value check.
type itemKeys struct {
	// fields are, per key of the list, the indexes of the item struct's
	// fields written under the key's name.
	fields [][]int
	// wants are, per path element, the string value it gives each key of
	// the list, if it gives it one.
	wants [][]wantedKey
}

type wantedKey struct {
	value    string
	isString bool
}

// itemKeysOf prepares the test of items of type elem, in a list keyed by
// keys, against named, the path elements at the list. ok is false when the
// list is kept as it is: with no path element there is nothing to narrow
// to, and items that are not structs (or pointers to them), or a path
// element that is not a key of this list, could be any item.
func itemKeysOf(elem reflect.Type, keys []string, named []fieldpath.PathElement) (itemKeys, bool) {
	if elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if elem.Kind() != reflect.Struct || len(named) == 0 {
		return itemKeys{}, false
	}
	ik := itemKeys{fields: make([][]int, len(keys)), wants: make([][]wantedKey, len(named))}
	for i := range elem.NumField() {
		name, known := jsonFieldName(elem.Field(i))
		if j := slices.Index(keys, name); known && j >= 0 {
			ik.fields[j] = append(ik.fields[j], i)
		}
	}
	for p, pe := range named {
		if pe.Key == nil || len(*pe.Key) != len(keys) {
			return itemKeys{}, false
		}
		ik.wants[p] = make([]wantedKey, len(keys))
		for j, k := range keys {
			for _, f := range *pe.Key {
				if f.Name == k {
					ws, isString := f.Value.Unstructured().(string)
					ik.wants[p][j] = wantedKey{value: ws, isString: isString}
				}
			}
		}
	}
	return ik, true
}

// named reports whether some path element may name item: it is certainly
// not the item a path element names when one of its keys is a non-empty
// string and the element names another for it. Anything else (an empty
// key, which the schema may default, a key of another kind, a nil item)
// could be the same item.
func (ik itemKeys) named(item reflect.Value) bool {
	if item.Kind() == reflect.Pointer {
		if item.IsNil() {
			return true
		}
		item = item.Elem()
	}
	for _, wants := range ik.wants {
		if !ik.differs(item, wants) {
			return true
		}
	}
	return false
}

// differs reports whether item has a non-empty string key other than the
// one wants gives it.
func (ik itemKeys) differs(item reflect.Value, wants []wantedKey) bool {
	for j, want := range wants {
		if !want.isString {
			continue
		}
		for _, i := range ik.fields[j] {
			if got := item.Field(i); got.Kind() == reflect.String && got.String() != "" && got.String() != want.value {
				return true
			}
		}
	}
	return false
}
