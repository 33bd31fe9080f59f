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
}

// newEntryFields decodes raw; its errors are decodeFieldSet's.
func newEntryFields(raw []byte) (*entryFields, error) {
	set, err := decodeFieldSet(raw)
	if err != nil {
		return nil, err
	}
	f := &entryFields{raw: bytes.Clone(raw), leaves: set.Leaves()}
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
// not modify it); a typed object is converted from a shallow copy whose other
// fields are zero, so that a manager of status does not pay for its spec.
func contentOf(obj client.Object, gvk schema.GroupVersionKind, top []string) (*unstructured.Unstructured, error) {
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
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	st := cp.Elem()
	for i := range st.NumField() {
		name, known := jsonFieldName(st.Type().Field(i))
		if known && !slices.Contains(top, name) {
			st.Field(i).SetZero()
		}
	}
	co, ok := cp.Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("%w: %T is not a client.Object", ErrInvalidInput, obj)
	}
	co.SetManagedFields(nil)
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

// jsonFieldName returns the JSON name of a struct field that is written
// under a name of its own; known is false for any other field (inlined, or
// not written), which is kept as it is.
func jsonFieldName(f reflect.StructField) (name string, known bool) {
	name, inline, ok := objects.JSONName(f)
	return name, ok && !inline
}
