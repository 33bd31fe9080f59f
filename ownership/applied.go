package ownership

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/fieldsets"
)

// AppliedFields decodes the field set of manager's Apply entry for
// subresource ("" for the main resource, "status"), reading obj's content
// directly. It is what an apply needs on every call, so it decodes that one
// entry only, where Inspect (and Unstructured.GetManagedFields) decode them
// all. found is false when the manager has no such entry. An entry that cannot
// be read (a fieldsType other than FieldsV1, a fieldsV1 that is not a field
// set) is an error wrapping ErrBadManagedFields, as Inspect reports it.
func AppliedFields(obj *unstructured.Unstructured, manager, subresource string) (set *fieldpath.Set, found bool, err error) {
	entries, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "managedFields")
	list, _ := entries.([]any)
	for _, item := range list {
		mf, _ := item.(map[string]any)
		sub, _ := mf["subresource"].(string)
		if mf["manager"] != manager || mf["operation"] != string(metav1.ManagedFieldsOperationApply) || sub != subresource {
			continue
		}
		if ft, _ := mf["fieldsType"].(string); ft != "" && ft != fieldsets.FieldsV1Type {
			return nil, false, fmt.Errorf("%w: managed fields of %q: unsupported fieldsType %q", ErrBadManagedFields, manager, ft)
		}
		fields, ok := mf["fieldsV1"]
		if !ok || fields == nil {
			return fieldpath.NewSet(), true, nil
		}
		raw, err := json.Marshal(fields)
		if err != nil {
			return nil, false, fmt.Errorf("%w: encoding the managed fields of %q: %w", ErrBadManagedFields, manager, err)
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
			return nil, false, fmt.Errorf("%w: decoding the managed fields of %q: %w", ErrBadManagedFields, manager, err)
		}
		return set, true, nil
	}
	return nil, false, nil
}

// HasManagedFields reports whether obj carries any managedFields at all. An
// object the API server ever wrote has at least one entry, so an object without
// any was read from a cache that strips them, or was never stored: either way
// what its managers own is unknown, not empty.
func HasManagedFields(obj metav1.Object) bool {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		entries, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
		list, _ := entries.([]any)
		return len(list) > 0
	}
	return len(obj.GetManagedFields()) > 0
}
