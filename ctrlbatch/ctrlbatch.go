// Package ctrlbatch runs controller-runtime reconcilers with a statusapply
// batch of their own: Wrap creates a batcher.Batch for every reconcile, puts
// it in the context (FromContext), and flushes it whenever the reconciler
// returns, with an error too, so that every status function the reconcile
// queued goes out as one apply per object and field manager.
//
//	func (r *ReadinessReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
//		b := ctrlbatch.FromContext(ctx)
//		...queue status functions into b...
//	}
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.Widget{}).Complete(ctrlbatch.Wrap(applier, r))
//
// A flush that only met conflicts (a field another manager owns, or a stale
// resourceVersion of a guarded entry) is not returned as an error: the
// reconcile is requeued after conflicts.RequeueAfter's hint, and the conflict
// is logged. controller-runtime ignores the Result of a reconcile that
// returns an error and retries on its rate limiter's schedule, which is wrong
// both ways for conflicts: a stale resourceVersion is worth retrying at once,
// a field another manager owns is not worth retrying for a while. Every other
// error, the reconciler's own included, is returned, joined with the flush's.
//
// With WithFence, a batch is flushed only while the process can prove it
// still holds its leader lease (see LeaseFence), and its entries are guarded
// by the resourceVersion they were built from, so that a leader that resumes
// from a pause cannot write over what a new leader wrote; otherwise the batch
// is dropped or its Flush stopped, and the reconcile returns ErrFenced. An
// apply whose outcome is unknown (ssa.ErrOutcomeUnknown) is returned as an
// error, never as a conflict.
//
// A reconciler that panics is not flushed: what it queued before the panic is
// dropped, and the panic goes on to controller-runtime.
package ctrlbatch

import (
	"context"
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ssa"
)

// Option configures Wrap.
type Option func(*config)

type config struct {
	batchOpts  []batcher.Option
	fence      Fence
	fenceGuard bool // WithFence without LeaseOnly: entries are guarded
}

// WithBatchOptions passes opts to batcher.New for every reconcile's batch
// (concurrency, result hook, shadow mode). With a shadow.Mode's Option every
// reconcile's batch is compared with the live object instead of written: its
// divergence is reported and never requeues the reconcile, while an entry
// that could not be compared returns its error as any Flush error does.
func WithBatchOptions(opts ...batcher.Option) Option {
	return func(c *config) { c.batchOpts = append(c.batchOpts, opts...) }
}

type contextKey struct{}

// FromContext returns the batch of the reconcile ctx belongs to, or nil
// outside a reconcile run by Wrap.
func FromContext(ctx context.Context) *batcher.Batch {
	b, _ := ctx.Value(contextKey{}).(*batcher.Batch)
	return b
}

// Wrap returns a reconciler that runs r with a batch of its own, writing
// through applier (see the package documentation). It is generic over the
// request type, like controller-runtime's TypedReconciler; for a plain
// reconcile.Reconciler, Req is reconcile.Request.
func Wrap[Req comparable](applier *ssa.Applier, r reconcile.TypedReconciler[Req], opts ...Option) reconcile.TypedReconciler[Req] {
	w := &wrapped[Req]{applier: applier, inner: r}
	for _, o := range opts {
		o(&w.cfg)
	}
	if w.cfg.fence != nil && w.cfg.fenceGuard {
		w.cfg.batchOpts = append(w.cfg.batchOpts, batcher.WithGuardedEntries())
	}
	return w
}

type wrapped[Req comparable] struct {
	applier *ssa.Applier
	inner   reconcile.TypedReconciler[Req]
	cfg     config
}

// Reconcile runs the wrapped reconciler with a new batch and flushes it.
func (w *wrapped[Req]) Reconcile(ctx context.Context, req Req) (reconcile.Result, error) {
	b := batcher.New(w.applier, w.cfg.batchOpts...)
	res, err := w.inner.Reconcile(context.WithValue(ctx, contextKey{}, b), req)
	if w.cfg.fence != nil {
		flushCtx, cancel, ferr := fenced(ctx, w.cfg.fence)
		defer cancel()
		if ferr != nil {
			w.applier.Logger(ctx).Info("status not written: the lease cannot be proven held", "pending", len(b.Pending()))
			return res, errors.Join(err, ferr)
		}
		ctx = flushCtx
	}
	return finish(ctx, w.applier, b, res, err)
}

// finish flushes b, the batch of a reconcile that returned res and err, and
// returns what the reconcile should return: res and err when the flush
// succeeded; res with a requeue after conflicts.RequeueAfter's hint (or the
// reconcile's own, if sooner) when the reconcile succeeded and the flush met
// only conflicts, logged to the applier's logger (see ssa.Applier.Logger); else
// res and both errors joined.
func finish(ctx context.Context, applier *ssa.Applier, b *batcher.Batch, res reconcile.Result, err error) (reconcile.Result, error) {
	flushErr := b.Flush(ctx)
	if flushErr == nil {
		return res, err
	}
	if errors.Is(flushErr, ErrFenced) {
		applier.Logger(ctx).Info("status flush stopped: the lease cannot be proven held", "pending", len(b.Pending()))
	}
	if errors.Is(flushErr, ssa.ErrOutcomeUnknown) {
		applier.Logger(ctx).Info("status apply outcome unknown: it may have been applied", "error", flushErr.Error())
	}
	if err == nil {
		if after, ok := RequeueAfterFlush(flushErr); ok {
			applier.Logger(ctx).Info("status apply met a conflict; requeueing", "after", after, "error", flushErr.Error())
			if res.RequeueAfter <= 0 || after < res.RequeueAfter {
				res.RequeueAfter = after
			}
			return res, nil
		}
	}
	return res, errors.Join(err, flushErr)
}

// RequeueAfterFlush is conflicts.RequeueAfter for the error of a Flush (where
// conflicts.RequeueAfter takes any error, and one conflict in it is enough),
// with one more condition: every entry that failed failed on a conflict (a stale
// resourceVersion or a field-manager conflict). A flush where one entry met a
// conflict and another a network error is not a conflict: its error must go
// to controller-runtime's backoff. Entries held back because their object's
// main-resource entry failed (batcher.ErrHeldBack) follow that entry.
func RequeueAfterFlush(flushErr error) (time.Duration, bool) {
	if errors.Is(flushErr, ErrFenced) {
		// A 409 answered after the proof expired is not a conflict to retry
		// at once. (An apply that may have landed is no conflict either: the
		// loop below finds it.)
		return 0, false
	}
	after, ok := conflicts.RequeueAfter(flushErr)
	if !ok {
		return 0, false
	}
	for _, e := range entryErrors(flushErr, nil) {
		if errors.Is(e, batcher.ErrHeldBack) {
			continue
		}
		if _, ok := conflicts.RequeueAfter(e); !ok {
			return 0, false
		}
	}
	return after, true
}

// entryErrors lists the errors a joined error is made of: Flush joins the
// errors of its objects, which join the errors of their entries.
func entryErrors(err error, out []error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = entryErrors(e, out)
		}
		return out
	}
	return append(out, err)
}
