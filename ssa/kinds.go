package ssa

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
)

// TargetFor returns the Target of manager's writes to sub of obj, for Apply,
// checked before any request as Target.Validate does. Its errors wrap
// ErrInvalidInput.
func (a *Applier) TargetFor(obj client.Object, sub Subresource, manager string) (Target, error) {
	gvk, err := a.identify(obj)
	if err != nil {
		return Target{}, err
	}
	t := Target{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Subresource: sub, Manager: manager}
	if err := t.Validate(); err != nil {
		return Target{}, err
	}
	return t, nil
}

// identify returns obj's kind, refusing nil objects, unnamed objects and
// unknown kinds with errors wrapping ErrInvalidInput.
func (a *Applier) identify(obj client.Object) (schema.GroupVersionKind, error) {
	if obj == nil {
		return schema.GroupVersionKind{}, invalidf("nil object")
	}
	if isNil(obj) {
		return schema.GroupVersionKind{}, invalidf("nil %T", obj)
	}
	gvk, err := apiutil.GVKForObject(obj, a.cfg.scheme)
	if err != nil {
		return gvk, fmt.Errorf("%w: %T: %w", ErrInvalidInput, obj, err)
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return gvk, invalidf("%T has no apiVersion or kind", obj)
	}
	if obj.GetName() == "" {
		return gvk, invalidf("%s %s: the object has no name", gvk.Kind, obj.GetNamespace())
	}
	if err := a.knownKind(obj, gvk); err != nil {
		return gvk, err
	}
	return gvk, nil
}

// knownKind refuses a kind nothing knows when it is queued, not at Flush far
// from the code that queued it. The REST mapper may ask discovery: it is last.
func (a *Applier) knownKind(obj client.Object, gvk schema.GroupVersionKind) error {
	if a.cfg.scheme.Recognizes(gvk) || hasSchema(a.tc, gvk) {
		return nil
	}
	if mapper := a.client.RESTMapper(); mapper != nil {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			return nil
		}
		if !meta.IsNoMatchError(err) {
			return fmt.Errorf("checking whether the API server serves %s: %w", gvk, err)
		}
	}
	id := ownership.ObjectRef{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return invalidf("%s: unknown kind %s: the scheme does not recognise it, no type converter has its schema "+
		"and the API server serves no such resource; install its CRD and give the Applier its schema "+
		"with WithTypeConverter: a generated applyconfiguration package's NewTypeConverter for your own Go types, "+
		"schemas.FromCluster for a CRD the API server serves, crdschema.FromCRDFiles for CRD manifests", id, gvk)
}

// kindSchema is what an Applier needs of one kind's schema on every apply,
// resolved once per kind.
type kindSchema struct {
	schema     *smdschema.Schema
	typeRef    smdschema.TypeRef
	conditions conditionsSchema
}

// kindSchemas caches kindSchema per kind, dropped whenever the converters'
// SchemaVersion changes, so that an updated CRD is checked by its new schema.
type kindSchemas struct {
	mu      sync.Mutex
	version uint64
	kinds   map[schema.GroupVersionKind]*kindSchema
}

func (a *Applier) schemaOf(gvk schema.GroupVersionKind) (*kindSchema, error) {
	var version uint64
	if versioned, ok := a.tc.(interface{ SchemaVersion() uint64 }); ok {
		version = versioned.SchemaVersion()
	}
	a.schemas.mu.Lock()
	if a.schemas.version != version {
		a.schemas.version, a.schemas.kinds = version, nil
	}
	ks := a.schemas.kinds[gvk]
	a.schemas.mu.Unlock()
	if ks != nil {
		return ks, nil
	}
	probe := &unstructured.Unstructured{Object: map[string]any{}}
	probe.SetGroupVersionKind(gvk)
	tv, err := a.tc.ObjectToTyped(probe, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	ks = &kindSchema{schema: tv.Schema(), typeRef: tv.TypeRef(), conditions: conditionsSchemaOf(tv)}
	a.schemas.mu.Lock()
	if a.schemas.kinds == nil {
		a.schemas.kinds = map[schema.GroupVersionKind]*kindSchema{}
	}
	a.schemas.kinds[gvk] = ks
	a.schemas.mu.Unlock()
	return ks, nil
}

// newObjectLike returns an empty object of obj's Go type naming t's object.
func newObjectLike(obj client.Object, t Target) client.Object {
	out := objects.EmptyLike(obj)
	if u, ok := out.(*unstructured.Unstructured); ok {
		u.SetGroupVersionKind(t.GVK)
	}
	out.SetName(t.Name)
	out.SetNamespace(t.Namespace)
	return out
}
