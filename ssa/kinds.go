package ssa

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/statusapply/statusapply/internal/kindschema"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
)

// TargetFor returns the Target of manager's writes to sub of obj, for Apply,
// checked before any request as Target.Validate does, refusing nil objects,
// unnamed objects and unknown kinds. Its errors wrap ErrInvalidInput.
func (a *Applier) TargetFor(obj client.Object, sub Subresource, manager string) (Target, error) {
	if obj == nil {
		return Target{}, invalidf("nil object")
	}
	if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
		return Target{}, invalidf("nil %T", obj)
	}
	gvk, err := apiutil.GVKForObject(obj, a.cfg.scheme)
	switch {
	case err != nil:
		return Target{}, fmt.Errorf("%w: %T: %w", ErrInvalidInput, obj, err)
	case gvk.Kind == "" || gvk.Version == "":
		return Target{}, invalidf("%T has no apiVersion or kind", obj)
	case obj.GetName() == "":
		return Target{}, invalidf("%s %s: the object has no name", gvk.Kind, obj.GetNamespace())
	}
	if !a.cfg.scheme.Recognizes(gvk) {
		if err := a.knownKind(obj, gvk); err != nil {
			return Target{}, err
		}
	}
	t := Target{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Subresource: sub, Manager: manager}
	if err := t.Validate(); err != nil {
		return Target{}, err
	}
	return t, nil
}

// knownKind refuses a kind nothing knows when it is queued, not at Flush far
// from the code that queued it. The REST mapper may ask discovery: it is last.
func (a *Applier) knownKind(obj client.Object, gvk schema.GroupVersionKind) error {
	if a.cfg.scheme.Recognizes(gvk) || kindschema.Has(a.tc, gvk) {
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
