// Package inspect reads managedFields held apart from their object, such as
// the result of a migration, for the module's packages. ownership's public
// way in is the object (ownership.Inspect); this package hands it one.
package inspect

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/ownership"
)

// Entries is ownership.Inspect of the object ref names, holding
// managedFields: empty managedFields yield ErrNoManagedFields, and ref names
// the object in the result and in errors.
func Entries(ref ownership.ObjectRef, managedFields []metav1.ManagedFieldsEntry) (*ownership.Ownership, error) {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: ref.Namespace, Name: ref.Name, ManagedFields: managedFields,
	}}
	obj.SetGroupVersionKind(ref.GVK)
	o, err := ownership.Inspect(obj)
	// Without a kind, ownership.RefOf would name the object by its Go type.
	if oe := (*ownership.ObjectError)(nil); errors.As(err, &oe) {
		oe.Object = ref
	}
	if o != nil {
		o.Object = ref
	}
	return o, err
}

// Decode decodes managedFields, in order, into entries. An entry that does
// not decode is an error wrapping ownership.ErrBadManagedFields; no entries
// are none.
func Decode(managedFields []metav1.ManagedFieldsEntry) ([]ownership.Entry, error) {
	if len(managedFields) == 0 {
		return nil, nil
	}
	o, err := Entries(ownership.ObjectRef{}, managedFields)
	if oe := (*ownership.ObjectError)(nil); errors.As(err, &oe) {
		return nil, oe.Err
	}
	if err != nil {
		return nil, err
	}
	return o.Entries, nil
}
