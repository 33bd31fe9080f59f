package ownership

import (
	"testing"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// mustInspect inspects or fails the test.
func mustInspect(t *testing.T, obj *v1alpha1.Widget) *Ownership {
	t.Helper()
	o, err := Inspect(obj)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return o
}
