package ssa

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/ownership"
)

// Owned returns the fields that manager last applied to subresource of
// observed, with their values on observed, as unstructured content. Only the
// manager's Apply entry counts: fields it set with Update are not part of any
// apply configuration. found is false when the manager has no Apply entry.
//
// It is managedfields.ExtractInto for any kind the converter knows, typed or
// unstructured. Callers must first make sure observed carries managedFields
// (see ownership.HasManagedFields): without them every manager owns nothing.
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
	return tc.ObjectToTyped(ownership.WithoutManagedFields(observed), typed.AllowDuplicates)
}

// ownedIn is Owned for an observed object already converted to tv.
func ownedIn(tv *typed.TypedValue, observed *unstructured.Unstructured, manager string, sub Subresource) (owned map[string]any, found bool, err error) {
	set, found, err := ownership.AppliedFields(observed, manager, string(sub))
	if err != nil || !found || set.Empty() {
		return map[string]any{}, found, err
	}
	u := tv.ExtractItems(set.Leaves()).AsValue().Unstructured()
	m, ok := u.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("the fields of %q are a %T, not an object", manager, u)
	}
	return m, true, nil
}
