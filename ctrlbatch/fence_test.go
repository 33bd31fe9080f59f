package ctrlbatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ctrlbatch"
)

// fakeLock is a resourcelock.Interface whose writes fail with err when set.
type fakeLock struct {
	id  string
	err error
}

func (l *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return nil, nil, errors.New("not used")
}
func (l *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return l.err }
func (l *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return l.err }
func (l *fakeLock) RecordEvent(string)                                              {}
func (l *fakeLock) Identity() string                                                { return l.id }
func (l *fakeLock) Describe() string                                                { return "fake" }

func TestLeaseFence(t *testing.T) {
	ctx := context.Background()
	const validFor = time.Hour
	inner := &fakeLock{id: "me"}
	f := ctrlbatch.NewLeaseFence(validFor)
	lock := f.Lock(inner)
	if _, ok := f.Until(); ok {
		t.Fatal("a fence that never saw the lease held proves it")
	}

	inner.err = errors.New("conflict")
	if err := lock.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err == nil {
		t.Fatal("the lock's error was not returned")
	}
	if _, ok := f.Until(); ok {
		t.Fatal("a failed acquisition proves the lease")
	}

	inner.err = nil
	before := time.Now()
	if err := lock.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	until, ok := f.Until()
	if !ok || until.Before(before.Add(validFor)) || until.After(time.Now().Add(validFor)) {
		t.Fatalf("after an acquisition: Until = %v, %v; want the moment it was sent plus %v", until, ok, validFor)
	}

	// A renewal that fails keeps the last proof: it still holds until it expires.
	inner.err = errors.New("connection refused")
	_ = lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	if u, ok := f.Until(); !ok || !u.Equal(until) {
		t.Fatalf("a failed renewal changed the proof: %v, %v", u, ok)
	}
	inner.err = nil
	if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if u, ok := f.Until(); !ok || u.Before(until) {
		t.Fatalf("a renewal did not extend the proof: %v, %v (was %v)", u, ok, until)
	}

	// A release (no holder) or a record naming someone else withdraws it.
	for _, holder := range []string{"", "other"} {
		_ = lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
		if err := lock.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: holder}); err != nil {
			t.Fatal(err)
		}
		if _, ok := f.Until(); ok {
			t.Fatalf("an update to holder %q left the proof in place", holder)
		}
	}
}

// staticFence proves the lease until a fixed instant, or not at all.
type staticFence struct {
	until time.Time
	ok    bool
}

func (f staticFence) Until() (time.Time, bool) { return f.until, f.ok }

func TestWrapWithFence(t *testing.T) {
	var applyErr error
	a, c := fixture(t, &applyErr)
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "w1"}}
	reconciler := func(phase string) reconcile.Reconciler {
		return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			w := &v1alpha1.Widget{}
			if err := c.Get(ctx, req.NamespacedName, w); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, batcher.Status(ctrlbatch.FromContext(ctx), w, "m",
				func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
					ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase(phase))
					return nil
				})
		})
	}
	phase := func() string {
		w := &v1alpha1.Widget{}
		if err := c.Get(ctx, req.NamespacedName, w); err != nil {
			t.Fatal(err)
		}
		return w.Status.Phase
	}
	hook := ctrlbatch.WithBatchOptions(batcher.WithConcurrency(1))

	// Proven: written.
	until := time.Now().Add(time.Hour)
	if _, err := ctrlbatch.Wrap(a, reconciler("One"), ctrlbatch.WithFence(staticFence{until, true}), hook).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if phase() != "One" {
		t.Fatalf("a proven lease: phase %q, want One", phase())
	}

	// Expired, or never proven: dropped unsent, ErrFenced returned.
	for name, f := range map[string]staticFence{
		"expired":      {time.Now().Add(-time.Millisecond), true},
		"never proven": {},
	} {
		_, err := ctrlbatch.Wrap(a, reconciler("Two"), ctrlbatch.WithFence(f)).Reconcile(ctx, req)
		if !errors.Is(err, ctrlbatch.ErrFenced) || phase() != "One" {
			t.Fatalf("%s: %v, phase %q; want ErrFenced and nothing written", name, err, phase())
		}
	}

	// A leader paused past its proof between the observation and the Flush
	// (the reconcile's own time stands for the pause) writes nothing.
	lease := ctrlbatch.NewLeaseFence(50 * time.Millisecond)
	if err := lease.Lock(&fakeLock{id: "me"}).Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	paused := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := reconciler("Three").Reconcile(ctx, req)
		time.Sleep(80 * time.Millisecond)
		return res, err
	})
	if _, err := ctrlbatch.Wrap(a, paused, ctrlbatch.WithFence(lease)).Reconcile(ctx, req); !errors.Is(err, ctrlbatch.ErrFenced) || phase() != "One" {
		t.Fatalf("a paused leader: %v, phase %q; want ErrFenced and nothing written", err, phase())
	}
	// Without the fence the same pause writes (the regression the fence prevents).
	if _, err := ctrlbatch.Wrap(a, paused).Reconcile(ctx, req); err != nil || phase() != "Three" {
		t.Fatalf("the control without a fence: %v, phase %q; want Three written", err, phase())
	}
	// The reconciler's own error is kept beside ErrFenced.
	boom := errors.New("boom")
	failing := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, boom })
	if _, err := ctrlbatch.Wrap(a, failing, ctrlbatch.WithFence(staticFence{})).Reconcile(ctx, req); !errors.Is(err, boom) || !errors.Is(err, ctrlbatch.ErrFenced) {
		t.Fatalf("a failing reconciler behind a closed fence: %v; want both errors", err)
	}
}
