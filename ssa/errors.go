package ssa

import (
	"fmt"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
)

// ErrInvalidInput is wrapped by every error about input statusapply refuses
// before sending a request: nil objects, unnamed objects, unknown kinds, bad
// field managers, configurations that name another object, invalid conditions.
var ErrInvalidInput = conflicts.ErrInvalidInput // one value: errors.Is matches either name

// ErrRetriesExhausted is wrapped, together with the last 409, when a guarded
// apply still finds the object changed after its last attempt (see
// WithGuardBackoff). The entry was not written; flushing it again later
// rebuilds it from a fresh read.
var ErrRetriesExhausted = ownership.ErrRetriesExhausted // one value with the migrator's

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// Error is returned by Apply. It names the Target and wraps the cause, so that
// errors.Is and errors.As (apierrors.IsNotFound, apierrors.IsConflict, ...) see
// through it.
type Error struct {
	Target Target
	// Attempts is how many applies were sent (0 when the error came first).
	Attempts int
	Err      error
}

// Error prints the target and the cause.
func (e *Error) Error() string {
	return fmt.Sprintf("applying %s: %v", e.Target, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
