// Package contract mirrors Cluster API's accessors of an unstructured
// object's fields: a Bool sets a boolean, which holds no list, a List sets
// a list.
package contract

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type Bool struct{ path []string }

func Provisioned() *Bool { return &Bool{path: []string{"status", "initialization", "provisioned"}} }

// Set writes a boolean; the object's getters it calls for its error write
// nothing.
func (b *Bool) Set(obj *unstructured.Unstructured, value bool) error {
	if err := unstructured.SetNestedField(obj.UnstructuredContent(), value, b.path...); err != nil {
		return fmt.Errorf("failed to set path %v of object %v: %w", b.path, obj.GroupVersionKind(), err)
	}
	return nil
}

type List struct{ path []string }

func Addresses() *List { return &List{path: []string{"status", "addresses"}} }

func (l *List) Set(obj *unstructured.Unstructured, values []string) error {
	items := make([]interface{}, 0, len(values))
	for _, v := range values {
		items = append(items, v)
	}
	return unstructured.SetNestedField(obj.UnstructuredContent(), items, l.path...)
}
