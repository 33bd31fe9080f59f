// Package objects holds what ssa and batcher both need to know about
// client.Objects beyond their interface.
package objects

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EmptyLike returns a new, empty object of obj's Go type, ready for a
// response to be decoded into. An unstructured object has no type of its own:
// the new one takes obj's kind.
func EmptyLike(obj client.Object) client.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		out := &unstructured.Unstructured{Object: map[string]any{}}
		out.SetGroupVersionKind(u.GroupVersionKind())
		return out
	}
	out, _ := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	return out
}
