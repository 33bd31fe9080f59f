package ownership_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
)

// TestSentinelsAreOneValueAcrossPackages checks that a sentinel that two
// packages name is one value: an error wrapping either name is matched by
// errors.Is with the other.
func TestSentinelsAreOneValueAcrossPackages(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b error
	}{
		{"ErrRetriesExhausted: ssa's guarded apply and fleet's migrator", ssa.ErrRetriesExhausted, ownership.ErrRetriesExhausted},
		{"ErrInvalidInput: ssa's refusals and conflicts.Predict's", ssa.ErrInvalidInput, conflicts.ErrInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(fmt.Errorf("wrapped: %w", tc.a), tc.b) || !errors.Is(fmt.Errorf("wrapped: %w", tc.b), tc.a) {
				t.Errorf("errors.Is does not match %q and %q across packages", tc.a, tc.b)
			}
		})
	}
	if got := string(ssa.StatusSubresource); got != ownership.StatusSubresource {
		t.Errorf("ssa.StatusSubresource = %q, ownership.StatusSubresource = %q", got, ownership.StatusSubresource)
	}
}
