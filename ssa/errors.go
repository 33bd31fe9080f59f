package ssa

import (
	"fmt"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
)

// ErrInvalidInput is wrapped by every error about input refused before any
// request: nil or unnamed objects, unknown kinds, bad field managers,
// configurations naming another object, invalid conditions.
var ErrInvalidInput = conflicts.ErrInvalidInput // one value: errors.Is matches either name

// ErrRetriesExhausted is wrapped, with the last 409, when a guarded apply still
// finds the object changed after its last attempt (see WithGuardBackoff). The
// entry was not written; flushing it again rebuilds it from a fresh read.
var ErrRetriesExhausted = ownership.ErrRetriesExhausted // one value with the migrator's

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// Error is returned by Apply. It names the Target and wraps the cause, which
// errors.Is and errors.As (apierrors.IsNotFound, IsConflict, ...) see through.
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
