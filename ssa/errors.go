package ssa

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

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

// ErrOutcomeUnknown is wrapped, with the cause, by the error of an apply whose
// request may have reached the API server before it failed: the context ended
// (a deadline, a cancel) or the connection broke while the request was in
// flight, or the API server answered that it timed out. The apply may have
// been applied, or may still be, by the API server: it failed only as far as
// this process knows. Nothing is remembered of what the manager owns after it,
// and a batch keeps the entry queued; flushing it again sends the intent again,
// which is harmless when the first one landed. The *Error around it names the
// Target; errors.Is(err, context.DeadlineExceeded) and the like still match.
var ErrOutcomeUnknown = errors.New("outcome unknown: the request may have been applied")

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

// outcomeUnknown wraps err, the error of a request that may have been sent,
// in ErrOutcomeUnknown when it says nothing of whether the API server applied
// it: no status came back (the context ended, the connection broke), or the
// API server answered that it timed out. When ctx has ended, its cause (a
// fence's, say) is added unless err already is it.
func outcomeUnknown(ctx context.Context, err error) error {
	if mayHaveLanded(err) {
		err = fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	if cause := ended(ctx); cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

// ended returns ctx's cause once ctx is done, else nil. It asks ctx.Err, so
// that a context that checks a clock there (a fence's) is asked at each step.
func ended(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}

func mayHaveLanded(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return apierrors.IsTimeout(err)
	}
	var netErr net.Error // a *url.Error too: whatever the transport failed on
	return errors.As(err, &netErr) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
