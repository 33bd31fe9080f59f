package ssa

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/ownership"
)

// extractOwned returns the fields that manager last applied to subresource of
// observed, with their values on observed, as unstructured content. Only the
// manager's Apply entry counts: fields it set with Update are not part of any
// apply configuration. found is false when the manager has no Apply entry.
//
// It is managedfields.ExtractInto for any kind the converter knows, typed or
// unstructured. Callers must first make sure observed carries managedFields
// (see ownership.HasManagedFields): without them every manager owns nothing.
//
// Errors wrap ErrInvalidInput: an entry whose field set does not decode (also
// wrapping ownership.ErrBadManagedFields), or an object that does not match
// its kind's schema.
func extractOwned(tc managedfields.TypeConverter, observed *unstructured.Unstructured, manager string, sub Subresource) (owned map[string]any, found bool, err error) {
	raw, found, err := appliedEntry(observed, manager, sub)
	if err != nil || !found {
		return map[string]any{}, found, err
	}
	m, _, err := extractFrom(tc, ownership.WithoutManagedFields(observed), raw)
	return m, err == nil, err
}

// extractFrom reads, from observed (without managedFields), the values of the
// fields in raw, one managedFields entry's fieldsV1. complete reports whether
// every field of the entry is on observed: a field the manager owns can be
// absent (a typed object leaves out an omitempty zero value it was given),
// and the content alone does not say it is owned, so only complete content
// lets a later value check tell that nothing the manager owns changed.
func extractFrom(tc managedfields.TypeConverter, observed *unstructured.Unstructured, raw []byte) (content map[string]any, complete bool, err error) {
	set, err := decodeFieldSet(raw)
	if err != nil {
		return nil, false, err
	}
	if set.Empty() {
		return map[string]any{}, true, nil
	}
	tv, err := tc.ObjectToTyped(observed, typed.AllowDuplicates)
	if err != nil {
		return nil, false, fmt.Errorf("%w: the object does not match the schema of its kind: %w", ErrInvalidInput, err)
	}
	leaves := set.Leaves()
	extracted := tv.ExtractItems(leaves)
	m, ok := extracted.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, false, invalidf("the owned fields are a %T, not an object", extracted.AsValue().Unstructured())
	}
	present, err := extracted.ToFieldSet()
	complete = err == nil && leaves.Difference(present).Empty()
	return m, complete, nil
}
