package ssa

import (
	"bytes"
	"encoding/json"
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
	tv, err := typedContent(tc, observed)
	if err != nil {
		return nil, false, err
	}
	return ownedIn(tv, observed, manager, sub)
}

// typedContent converts observed to a typed value of its kind, leaving out
// metadata.managedFields: no manager owns them, and converting them costs more
// than the rest of a typical object.
func typedContent(tc managedfields.TypeConverter, observed *unstructured.Unstructured) (*typed.TypedValue, error) {
	view := observed
	if md, ok := observed.Object["metadata"].(map[string]any); ok {
		if _, has := md["managedFields"]; has {
			content := make(map[string]any, len(observed.Object))
			for k, v := range observed.Object {
				content[k] = v
			}
			meta := make(map[string]any, len(md))
			for k, v := range md {
				if k != "managedFields" {
					meta[k] = v
				}
			}
			content["metadata"] = meta
			view = &unstructured.Unstructured{Object: content}
		}
	}
	return tc.ObjectToTyped(view, typed.AllowDuplicates)
}

// ownedIn is Owned for an observed object already converted to tv.
func ownedIn(tv *typed.TypedValue, observed *unstructured.Unstructured, manager string, sub Subresource) (owned map[string]any, found bool, err error) {
	set, found, err := appliedFields(observed, manager, sub)
	if err != nil || !found {
		return map[string]any{}, false, err
	}
	u := tv.ExtractItems(set.Leaves()).AsValue().Unstructured()
	m, ok := u.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("the fields of %q are a %T, not an object", manager, u)
	}
	return m, true, nil
}

// appliedFields decodes the field set of manager's Apply entry for sub,
// reading observed's content directly: Unstructured.GetManagedFields converts
// every entry, and only one is needed.
func appliedFields(observed *unstructured.Unstructured, manager string, sub Subresource) (*fieldpath.Set, bool, error) {
	entries, _, _ := unstructured.NestedFieldNoCopy(observed.Object, "metadata", "managedFields")
	list, _ := entries.([]any)
	for _, item := range list {
		mf, _ := item.(map[string]any)
		if mf["manager"] != manager || mf["operation"] != string(metav1.ManagedFieldsOperationApply) || !sameSubresource(mf["subresource"], sub) {
			continue
		}
		fields, ok := mf["fieldsV1"]
		if !ok || fields == nil {
			return nil, false, nil
		}
		raw, err := json.Marshal(fields)
		if err != nil {
			return nil, false, fmt.Errorf("encoding the managed fields of %q: %w", manager, err)
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
			return nil, false, fmt.Errorf("decoding the managed fields of %q: %w", manager, err)
		}
		return set, true, nil
	}
	return nil, false, nil
}

func sameSubresource(v any, sub Subresource) bool {
	s, _ := v.(string)
	return s == string(sub)
}

// HasManagedFields reports whether obj carries any managedFields at all. An
// object that the API server ever wrote has at least one entry, so an object
// without any was read from a cache that strips them, or was never stored.
func HasManagedFields(obj metav1.Object) bool {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		entries, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
		list, _ := entries.([]any)
		return len(list) > 0
	}
	return len(obj.GetManagedFields()) > 0
}
