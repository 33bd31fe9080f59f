package ownership

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ObjectRef identifies an object in reports and errors.
type ObjectRef struct {
	// Kind is the object's kind, such as Widget.
	Kind string
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name is the object's name.
	Name string
}

// String renders the reference as "Kind namespace/name" (or "Kind name" for
// cluster-scoped objects).
func (r ObjectRef) String() string {
	kind := r.Kind
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
		ref.Kind = ro.GetObjectKind().GroupVersionKind().Kind
	}
	if ref.Kind == "" {
		t := reflect.TypeOf(obj)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		ref.Kind = t.Name()
	}
	return ref
}
