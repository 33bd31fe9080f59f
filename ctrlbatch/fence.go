package ctrlbatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// ErrFenced is returned by a reconcile whose batch was dropped unsent because
// its Fence could not prove, at Flush time, that the process still holds the
// lease that entitles it to write.
var ErrFenced = errors.New("status not written: the leader lease cannot be proven held")

// A Fence says until when the process may write. Until returns the monotonic
// instant up to which nobody else can have taken over the process's role, and
// false when that cannot be proven at all.
type Fence interface {
	Until() (time.Time, bool)
}

// WithFence makes Wrap flush a reconcile's batch only while fence proves the
// process may write, and with a context that ends when that proof does. When
// it cannot prove it, the batch is dropped unsent and the reconcile returns
// ErrFenced (joined with the reconciler's own error, if any), so that
// controller-runtime retries it on its backoff: if the process is still the
// leader, the lease is proven again at the next renewal and the retry writes.
//
// Why: under leader election every replica of a controller writes as the same
// field manager, so a server-side apply from a replica that lost its lease is
// not a conflict. A leader paused (SIGSTOP, a long GC, a frozen VM) past its
// lease, or whose reconcile outlived it, resumes and sends what it computed
// from an old observation on top of what the new leader wrote since: the
// status goes back in time. See docs/reliability.md.
func WithFence(fence Fence) Option {
	return func(c *config) { c.fence = fence }
}

// fenced checks fence before a Flush: it returns ctx bounded by the proof and
// its cancel func, or ErrFenced.
func fenced(ctx context.Context, fence Fence) (context.Context, context.CancelFunc, error) {
	until, ok := fence.Until()
	if !ok || !time.Now().Before(until) {
		return ctx, func() {}, ErrFenced
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	return ctx, cancel, nil
}

// LeaseFence is a Fence fed by the leader election's own lock: every renewal
// (or acquisition) that the API server accepted under this process's identity
// proves the lease from the moment the request was sent. Until is that moment
// plus validFor, by the monotonic clock, which keeps running while the process
// is stopped, so a process that resumes after a pause finds its proof expired
// before it writes anything.
//
// Use it with controller-runtime by wrapping the lock the manager elects with:
//
//	fence := ctrlbatch.NewLeaseFence(renewDeadline)
//	lock, _ := resourcelock.New(resourcelock.LeasesResourceLock, ns, id, core, coord, resourcelock.ResourceLockConfig{Identity: me})
//	mgr, _ := ctrl.NewManager(cfg, ctrl.Options{LeaderElection: true, LeaderElectionResourceLockInterface: fence.Lock(lock), ...})
//	ctrlbatch.Wrap(applier, r, ctrlbatch.WithFence(fence))
//
// validFor must be shorter than the lease duration: another candidate takes
// over no sooner than a lease duration after it saw the renewal, which is after
// the renewal was sent; the difference is the margin for clocks that run at
// different rates. controller-runtime's renew deadline is a good value (the
// leader gives up by then anyway).
//
// The fence narrows the window, it does not close it: a write that was checked
// and then stopped before it reached the network, or that the API server holds
// past the deadline, can still land late. docs/reliability.md measures what is
// left.
type LeaseFence struct {
	validFor time.Duration

	mu       sync.Mutex
	provenAt time.Time
	proven   bool
}

// NewLeaseFence returns a LeaseFence whose proofs last validFor.
func NewLeaseFence(validFor time.Duration) *LeaseFence {
	return &LeaseFence{validFor: validFor}
}

// Until returns when the last proof expires, false when there is none (the
// lease was never held, was released, or was lost).
func (f *LeaseFence) Until() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.proven {
		return time.Time{}, false
	}
	return f.provenAt.Add(f.validFor), true
}

func (f *LeaseFence) record(at time.Time, held bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !held {
		f.proven = false
		return
	}
	if !f.proven || at.After(f.provenAt) {
		f.provenAt, f.proven = at, true
	}
}

// Lock returns l, recording in f every Create and Update that succeeds under
// l's identity. An update that hands the lease to nobody (a release) or to
// someone else withdraws the proof.
func (f *LeaseFence) Lock(l resourcelock.Interface) resourcelock.Interface {
	return &fencedLock{Interface: l, fence: f}
}

type fencedLock struct {
	resourcelock.Interface
	fence *LeaseFence
}

func (l *fencedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.write(ler, func() error { return l.Interface.Create(ctx, ler) })
}

func (l *fencedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.write(ler, func() error { return l.Interface.Update(ctx, ler) })
}

// write runs a Create or Update of ler. The proof starts when the request is
// sent, not when it is answered: the server may have written the record at any
// moment in between.
func (l *fencedLock) write(ler resourcelock.LeaderElectionRecord, do func() error) error {
	held := ler.HolderIdentity != "" && ler.HolderIdentity == l.Identity()
	if !held {
		l.fence.record(time.Time{}, false)
	}
	sent := time.Now()
	err := do()
	if err == nil && held {
		l.fence.record(sent, true)
	}
	return err
}
