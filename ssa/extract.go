package ssa

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Owned returns the fields that manager last applied to subresource of
// observed, with their values on observed, as unstructured content. Only the
// manager's Apply entry counts: fields it set with Update are not part of any
// apply configuration. found is false when the manager has no Apply entry.
//
// It is managedfields.ExtractInto for any kind the converter knows, typed or
// unstructured. Callers must first make sure observed carries managedFields
// (see HasManagedFields): without them every manager owns nothing.
func Owned(tc managedfields.TypeConverter, observed *unstructured.Unstructured, manager string, sub Subresource) (owned map[string]any, found bool, err error) {
	tv, err := tc.ObjectToTyped(observed, typed.AllowDuplicates)
	if err != nil {
		return nil, false, err
	}
	return ownedIn(tv, observed, manager, sub)
}

// ownedIn is Owned for an observed object already converted to tv.
func ownedIn(tv *typed.TypedValue, observed *unstructured.Unstructured, manager string, sub Subresource) (owned map[string]any, found bool, err error) {
	var entry *metav1.ManagedFieldsEntry
	for i, mf := range observed.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == string(sub) {
			entry = &observed.GetManagedFields()[i]
			break
		}
	}
	if entry == nil || entry.FieldsV1 == nil {
		return map[string]any{}, false, nil
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
		return nil, false, fmt.Errorf("decoding the managed fields of %q: %w", manager, err)
	}
	u := tv.ExtractItems(set.Leaves()).AsValue().Unstructured()
	m, ok := u.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("the fields of %q are a %T, not an object", manager, u)
	}
	return m, true, nil
}

// HasManagedFields reports whether obj carries any managedFields at all. An
// object that the API server ever wrote has at least one entry, so an object
// without any was read from a cache that strips them, or was never stored.
func HasManagedFields(obj metav1.Object) bool { return len(obj.GetManagedFields()) > 0 }
