package ssa

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/statusapply/statusapply/internal/objects"
)

// Helpers the tests share that the library does not need.

// extractOwned returns the fields manager last applied to sub of observed, with
// their values there; only its Apply entry counts, as fields set with Update are
// in no apply configuration. observed must carry managedFields, or every
// manager owns nothing. Errors wrap ErrInvalidInput.
func extractOwned(tc managedfields.TypeConverter, observed *unstructured.Unstructured, manager string, sub Subresource) (owned map[string]any, found bool, err error) {
	raw, found, err := appliedEntry(observed, manager, sub)
	if err != nil || !found {
		return map[string]any{}, found, err
	}
	m, _, err := extractFrom(tc, objects.WithoutManagedFields(observed), raw)
	return m, err == nil, err
}

// extractFrom reads from observed the values of the fields in raw, an entry's
// fieldsV1. complete is false when an owned field is absent (a typed object
// drops omitempty zeros): only complete content shows nothing owned changed.
func extractFrom(tc managedfields.TypeConverter, observed *unstructured.Unstructured, raw []byte) (content map[string]any, complete bool, err error) {
	f, err := newEntryFields(raw)
	if err != nil {
		return nil, false, err
	}
	return f.extract(tc, observed)
}

// of returns typ's layout; ok is false when the typed path cannot handle typ.
func (l *layouts) of(typ reflect.Type) (acLayout, bool) {
	if lay := l.shared(typ); lay != nil {
		return *lay, true
	}
	return acLayout{}, false
}

func (c *ownedCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
