package ownership

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectRef identifies one object in errors, reports, logs and the keys that
// serialise writes to it: its kind and namespaced name. It is the project's
// one identity type; ssa.Target.Object, conflicts.Error.Object and this
// package's reports all return it, so an object is spelled the same way
// wherever it is named.
type ObjectRef struct {
	// GVK is the object's group, version and kind. Only Kind is shown; it is
	// empty when the kind is unknown.
	GVK schema.GroupVersionKind
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is the object's name.
	Name string
}

// String renders the reference as "Kind namespace/name" (or "Kind name" for
// cluster-scoped objects), as kubectl's messages do.
func (r ObjectRef) String() string {
	kind := r.GVK.Kind
	if kind == "" {
		kind = "object"
	}
	if r.Namespace == "" {
		return kind + " " + r.Name
	}
	return kind + " " + r.Namespace + "/" + r.Name
}

// RefOf names obj. The kind comes from the object's type metadata when set
// (unstructured objects always have it), else from its Go type name, because
// typed objects read through controller-runtime's client usually carry no
// kind.
func RefOf(obj metav1.Object) ObjectRef {
	ref := ObjectRef{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if ro, ok := obj.(runtime.Object); ok {
		ref.GVK = ro.GetObjectKind().GroupVersionKind()
	}
	if ref.GVK.Kind == "" {
		t := reflect.TypeOf(obj)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		ref.GVK.Kind = t.Name()
	}
	return ref
}
