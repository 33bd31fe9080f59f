package ssa

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// An apply's error is "outcome unknown" exactly when it says nothing of
// whether the API server applied the request.
func TestOutcomeUnknown(t *testing.T) {
	gr := schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}
	fenced := errors.New("fenced")
	for _, tc := range []struct {
		name    string
		err     error
		cause   error // the context's cause, when cancelled
		unknown bool
	}{
		{"deadline in flight", &url.Error{Op: "Patch", URL: "https://x", Err: context.DeadlineExceeded}, nil, true},
		{"cancelled with a cause", &url.Error{Op: "Patch", URL: "https://x", Err: context.Canceled}, fenced, true},
		{"connection reset", &url.Error{Op: "Patch", URL: "https://x", Err: &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}}, nil, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, nil, true},
		{"the API server timed out", apierrors.NewTimeoutError("request did not complete", 0), nil, true},
		{"a stale resourceVersion", apierrors.NewConflict(gr, "w1", errors.New("the object has been modified")), nil, false},
		{"not found", apierrors.NewNotFound(gr, "w1"), nil, false},
		{"invalid", apierrors.NewBadRequest("bad"), nil, false},
		{"a local error", errors.New("encoding failed"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.cause != nil {
				var cancel context.CancelCauseFunc
				ctx, cancel = context.WithCancelCause(ctx)
				cancel(tc.cause)
			}
			got := outcomeUnknown(ctx, tc.err)
			if errors.Is(got, ErrOutcomeUnknown) != tc.unknown {
				t.Fatalf("outcomeUnknown(%v) = %v; want unknown %v", tc.err, got, tc.unknown)
			}
			if !errors.Is(got, tc.err) {
				t.Fatalf("the cause %v is lost in %v", tc.err, got)
			}
			if tc.cause != nil && !errors.Is(got, tc.cause) {
				t.Fatalf("the context's cause %v is lost in %v", tc.cause, got)
			}
		})
	}
}
