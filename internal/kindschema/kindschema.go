// Package kindschema finds a kind's schema in a type converter, and what it
// says about status.conditions, for ssa and batcher alike: a Converter
// remembers each kind's, so that neither asks the converters on every apply.
package kindschema

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Kind is what one kind's schema holds for an apply.
type Kind struct {
	Schema     *smdschema.Schema
	TypeRef    smdschema.TypeRef
	Conditions Conditions
}

// Conditions is what a kind's schema says about status.conditions; all false
// when it is not a list.
type Conditions struct {
	// Atomic: an atomic list, owned whole by one manager, so that applying
	// conditions into it would conflict.
	Atomic bool
	// KeyedByType: a map list keyed by type alone, as metav1.Condition lists
	// are, whose items managers own one by one.
	KeyedByType bool
	// Metav1: the items have exactly metav1.Condition's fields, so the API
	// server validates them as such.
	Metav1 bool
	// Item is the type of the list's items.
	Item smdschema.TypeRef
}

var metav1ConditionFields = [...]string{"type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"}

// Of returns gvk's schema in tc, typing an object of only apiVersion and kind:
// the interface has no lookup by kind. The error is tc's.
func Of(tc managedfields.TypeConverter, gvk schema.GroupVersionKind) (*Kind, error) {
	probe := &unstructured.Unstructured{Object: map[string]any{}}
	probe.SetGroupVersionKind(gvk)
	tv, err := tc.ObjectToTyped(probe, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	s, tr := tv.Schema(), tv.TypeRef()
	return &Kind{Schema: s, TypeRef: tr, Conditions: conditionsOf(s, tr)}, nil
}

// Has reports whether tc has gvk's schema.
func Has(tc managedfields.TypeConverter, gvk schema.GroupVersionKind) bool {
	_, err := Of(tc, gvk)
	return err == nil
}

// conditionsOf resolves status.conditions in the schema of the kind at tr.
func conditionsOf(s *smdschema.Schema, tr smdschema.TypeRef) Conditions {
	atom, ok := s.Resolve(tr)
	for _, name := range []string{"status", "conditions"} {
		if !ok || atom.Map == nil {
			return Conditions{}
		}
		field, found := atom.FindField(name)
		if !found {
			return Conditions{}
		}
		atom, ok = s.Resolve(field.Type)
	}
	if !ok || atom.List == nil {
		return Conditions{}
	}
	out := Conditions{
		Atomic:      atom.List.ElementRelationship == smdschema.Atomic,
		KeyedByType: atom.List.ElementRelationship == smdschema.Associative && slices.Equal(atom.Keys, []string{"type"}),
		Item:        atom.List.ElementType,
	}
	elem, ok := s.Resolve(atom.List.ElementType)
	if !ok || elem.Map == nil || len(elem.Fields) != len(metav1ConditionFields) {
		return out
	}
	for _, name := range metav1ConditionFields {
		if _, found := elem.FindField(name); !found {
			return out
		}
	}
	out.Metav1 = true
	return out
}

// Converter is a type converter that remembers each kind's schema, forgetting
// them all whenever the converter's SchemaVersion changes, so that an updated
// CRD is seen by its new schema. It is safe for concurrent use.
type Converter struct {
	managedfields.TypeConverter

	mu      sync.Mutex
	version uint64
	kinds   map[schema.GroupVersionKind]*Kind
}

// NewConverter returns tc remembering its kinds' schemas.
func NewConverter(tc managedfields.TypeConverter) *Converter {
	return &Converter{TypeConverter: tc}
}

// SchemaVersion is the converter's, or 0 when it has none (it never changes).
func (c *Converter) SchemaVersion() uint64 {
	if versioned, ok := c.TypeConverter.(interface{ SchemaVersion() uint64 }); ok {
		return versioned.SchemaVersion()
	}
	return 0
}

// Kind returns gvk's schema, as Of, looked up once per SchemaVersion.
func (c *Converter) Kind(gvk schema.GroupVersionKind) (*Kind, error) {
	var version uint64 // as SchemaVersion, asked here without a second call
	if versioned, ok := c.TypeConverter.(interface{ SchemaVersion() uint64 }); ok {
		version = versioned.SchemaVersion()
	}
	c.mu.Lock()
	if c.version != version {
		c.version, c.kinds = version, nil
	}
	k := c.kinds[gvk]
	c.mu.Unlock()
	if k != nil {
		return k, nil
	}
	k, err := Of(c.TypeConverter, gvk)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.kinds == nil {
		c.kinds = map[schema.GroupVersionKind]*Kind{}
	}
	c.kinds[gvk] = k
	c.mu.Unlock()
	return k, nil
}

// Lookup returns gvk's schema in tc, remembered when tc is a *Converter.
func Lookup(tc managedfields.TypeConverter, gvk schema.GroupVersionKind) (*Kind, error) {
	if c, ok := tc.(*Converter); ok {
		return c.Kind(gvk)
	}
	return Of(tc, gvk)
}
