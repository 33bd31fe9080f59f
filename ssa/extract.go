package ssa

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/internal/objects"
)

// entryFields is one entry's fieldsV1, decoded once: it never changes after
// newEntryFields, as concurrent extractions share it.
type entryFields struct {
	raw    []byte // the entry, in bytes of its own
	leaves *fieldpath.Set
	// top lists the top-level fields of leaves: only those need converting.
	top []string
}

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

// extract is extractFrom of a decoded entry.
func (f *entryFields) extract(tc managedfields.TypeConverter, observed *unstructured.Unstructured) (content map[string]any, complete bool, err error) {
	if f.leaves.Empty() {
		return map[string]any{}, true, nil
	}
	// Only the entry's fields are typed: what others set is not this schema's to know.
	tv, err := tc.ObjectToTyped(typedFieldsOnly(observed, f.leaves), typed.AllowDuplicates)
	if err != nil {
		return nil, false, fmt.Errorf("%w: the fields the manager owns do not match the schema of its kind: %w", ErrInvalidInput, err)
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

// fields returns raw decoded, cached; entries that do not decode are not kept.
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

// intern returns the cached copy of an entry equal to raw, else raw, so that
// one manager's states on many objects share one copy.
func (c *entryCache) intern(raw []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.m[string(raw)]; f != nil {
		return f.raw
	}
	return raw
}

// contentOf returns obj as unstructured content of its kind and the top-level
// fields in top (see objects.Content), sharing what it can with obj (callers
// must not modify it).
func contentOf(obj client.Object, gvk schema.GroupVersionKind, top []string) (*unstructured.Unstructured, error) {
	if top == nil {
		top = []string{} // none, where objects.Content reads nil as all
	}
	content, err := objects.Content(obj, top)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	u := &unstructured.Unstructured{Object: content}
	if _, ok := obj.(*unstructured.Unstructured); !ok {
		u.SetGroupVersionKind(gvk) // unstructured content keeps its own
	}
	return u, nil
}
