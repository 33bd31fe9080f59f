package ctrlbatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// ErrFenced is wrapped by the error of a reconcile whose Fence could not
// prove that the process may write: at Flush time (the batch is dropped
// unsent), or before a request or after a response of the Flush (what was not
// sent yet stays unsent). An entry whose request was in flight when the proof
// expired fails with ssa.ErrOutcomeUnknown as well: it may have been applied.
var ErrFenced = errors.New("the leader lease cannot be proven held")

// A Fence says until when the process may write. Until returns the monotonic
// instant up to which nobody else can have taken over the process's role, and
// false when that cannot be proven at all.
type Fence interface {
	Until() (time.Time, bool)
}

// FenceOption tunes WithFence.
type FenceOption func(*fenceConfig)

type fenceConfig struct {
	leaseOnly bool
}

// LeaseOnly makes WithFence check the proof only, without guarding the
// batch's entries: cheaper when several writers change one object (no 409 and
// re-read after each foreign write), but it narrows the window rather than
// closing it. A request written before the process stopped, in part or in
// whole, or one the API server holds past the proof, can still land after
// another replica took over. docs/reliability.md measures both.
func LeaseOnly() FenceOption {
	return func(c *fenceConfig) { c.leaseOnly = true }
}

// WithFence makes Wrap flush a reconcile's batch only while fence proves the
// process may write, and guards every entry of that batch
// (batcher.WithGuardedEntries) unless LeaseOnly is given.
//
// The guard is what closes the window: each apply carries the resourceVersion
// of the observation it was built from, so the API server refuses it if the
// object changed since, whenever it arrives. A fenced batch can therefore never
// change an object that changed after the observation it was built from, and a
// new leader's write is such a change. On a stale resourceVersion the object is
// read again and the entry rebuilt from it (Mutators and Edits must be
// deterministic in the observed object), but only while the proof still holds:
// what was read is used only if the proof held after the read.
//
// The proof decides when nothing more is sent. It is checked by the clock
// before the Flush, before every request (an apply or a read), and after every
// response the Flush would act on (a refusal, a read), and a watcher cancels the
// Flush's context when the proof expires while the process runs (its timer is
// re-checked, so a renewal meanwhile extends the Flush). When the proof does not
// hold at Flush time the batch is dropped unsent; later, the Flush stops. Either
// way the reconcile returns an error wrapping ErrFenced (joined with the
// reconciler's own, if any), so that controller-runtime retries it on its
// backoff: if the process is still the leader, the lease is proven again at the
// next renewal and the retry writes. An apply whose request was in flight when
// the Flush stopped fails with ssa.ErrOutcomeUnknown: it may have landed (if
// guarded, only on an object unchanged since its observation).
//
// Assumptions: the guard's promise holds whatever the clocks, pauses and
// network do (the API server checks it when it applies the request). The
// proof's relies on the Fence: for LeaseFence, on clocks that run at about the
// same rate and a monotonic clock that keeps running while the process is
// stopped. What the guard does not cover: a decision a reconciler took from
// anything but the observed object (another object, a cache of its own) is
// not re-checked; such an input needs its own guard.
//
// Why: under leader election every replica of a controller writes as the same
// field manager, so a server-side apply from a replica that lost its lease is
// not a conflict. A leader paused (SIGSTOP, a long GC, a frozen VM) past its
// lease, or whose reconcile outlived it, resumes and sends what it computed
// from an old observation on top of what the new leader wrote since: the
// status goes back in time. A check before sending does not stop a request
// whose bytes were partly written before the pause (they go out on resume), nor
// one the API server holds; only a precondition the API server checks does.
// See docs/reliability.md.
func WithFence(fence Fence, opts ...FenceOption) Option {
	var fc fenceConfig
	for _, o := range opts {
		o(&fc)
	}
	return func(c *config) { c.fence, c.fenceGuard = fence, !fc.leaseOnly }
}

// proven returns nil while fence proves the process may write, else ErrFenced.
func proven(fence Fence) error {
	until, ok := fence.Until()
	if !ok {
		return ErrFenced
	}
	if late := time.Since(until); late >= 0 {
		return fmt.Errorf("%w (the proof expired %s ago)", ErrFenced, late.Round(time.Millisecond))
	}
	return nil
}

// fenced checks fence before a Flush: it returns a context that ends, with the
// proof's error (wrapping ErrFenced) as its cause, when the proof is gone, and
// its cancel func. Or that error.
func fenced(ctx context.Context, fence Fence) (context.Context, context.CancelFunc, error) {
	if err := proven(fence); err != nil {
		return ctx, func() {}, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := watchProof(fence, func() { cancel(ErrFenced) })
	return &provenContext{Context: ctx, fence: fence, cancel: cancel}, func() { stop(); cancel(nil) }, nil
}

// provenContext is a Flush's context. Its Err checks the proof by the clock
// and ends the context when the proof is gone: the Applier asks Err before
// every request and after every response it acts on, where the watcher's timer,
// set before a pause, fires only after the step.
type provenContext struct {
	context.Context
	fence  Fence
	cancel context.CancelCauseFunc
}

func (c *provenContext) Err() error {
	if err := proven(c.fence); err != nil {
		c.cancel(err)
	}
	return c.Context.Err()
}

// watchPoll is the longest watchProof waits between two checks: a proof can
// also be withdrawn (a release, another holder seen) before it expires.
const watchPoll = 50 * time.Millisecond

// watchProof calls expired once fence's proof has expired or was withdrawn,
// checking at its end and at least every watchPoll (a renewal may have moved
// the end). It returns a func that stops watching. After a pause the timer
// fires late: the checks before each request are what hold then.
func watchProof(fence Fence, expired func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			until, ok := fence.Until()
			wait := time.Until(until)
			if !ok || wait <= 0 {
				expired()
				return
			}
			select {
			case <-done:
				return
			case <-time.After(min(wait, watchPoll)):
			}
		}
	}()
	return func() { close(done) }
}

// LeaseFence is a Fence fed by the leader election's own lock: every renewal
// (or acquisition) that the API server accepted under this process's identity
// proves the lease from the moment the request was sent. Until is that moment
// plus validFor, by the monotonic clock, which keeps running while the process
// is stopped: after a pause longer than what was left of the proof, every
// check WithFence makes fails.
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
// The proof alone narrows the window, it does not close it: a request checked
// and then stopped before or while its bytes were written goes out when the
// process resumes, and the API server may hold one past the proof. The guard
// WithFence adds (unless LeaseOnly) is what refuses such a request when the
// object changed since its observation. docs/reliability.md measures both.
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
