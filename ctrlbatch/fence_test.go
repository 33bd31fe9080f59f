package ctrlbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
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

// clockFence proves the lease until an instant a test moves.
type clockFence struct {
	mu    sync.Mutex
	until time.Time
}

func (f *clockFence) Until() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.until, true
}

func (f *clockFence) set(until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.until = until
}

// hookFixture is an Applier on a fake client holding Widgets ns/w1 and ns/w2,
// whose status applies go through apply and whose reads are counted.
func hookFixture(t *testing.T, apply func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error, afterRead ...func(n int64)) (*ssa.Applier, client.Client, *atomic.Int64) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).
		WithTypeConverters(applyconfiguration.NewTypeConverter(scheme)).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithReturnManagedFields().
		WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns"}},
			&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w2", Namespace: "ns"}}).
		Build(), interceptor.Funcs{
		SubResourceApply: apply,
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			n := reads.Add(1)
			err := c.Get(ctx, key, obj, opts...)
			for _, fn := range afterRead {
				fn(n)
			}
			return err
		},
	})
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(scheme)), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a, c, &reads
}

// queuePhase returns a reconciler that reads each of names and queues phase
// for it.
func queuePhase(c client.Client, phase string, names ...string) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		for _, name := range names {
			w := &v1alpha1.Widget{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, w); err != nil {
				return reconcile.Result{}, err
			}
			if err := batcher.Status(ctrlbatch.FromContext(ctx), w, "m", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase(phase))
				return nil
			}); err != nil {
				return reconcile.Result{}, err
			}
		}
		return reconcile.Result{}, nil
	})
}

// WithFence guards every entry (the apply carries the observed
// resourceVersion) unless LeaseOnly; a batch without a fence is not guarded.
func TestWithFenceGuards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []ctrlbatch.Option
		guarded bool
	}{
		{"fenced", []ctrlbatch.Option{ctrlbatch.WithFence(staticFence{time.Now().Add(time.Hour), true})}, true},
		{"fenced, lease only", []ctrlbatch.Option{ctrlbatch.WithFence(staticFence{time.Now().Add(time.Hour), true}, ctrlbatch.LeaseOnly())}, false},
		{"not fenced", nil, false},
		{"fenced, with batch options", []ctrlbatch.Option{ctrlbatch.WithBatchOptions(batcher.WithConcurrency(1)), ctrlbatch.WithFence(staticFence{time.Now().Add(time.Hour), true})}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sentRV []string
			a, c, _ := hookFixture(t, func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
				body, err := json.Marshal(obj)
				if err != nil {
					return err
				}
				var sent struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				}
				if err := json.Unmarshal(body, &sent); err != nil {
					return err
				}
				sentRV = append(sentRV, sent.Metadata.ResourceVersion)
				return c.SubResource(sub).Apply(ctx, obj, opts...)
			})
			if _, err := ctrlbatch.Wrap(a, queuePhase(c, "One", "w1"), tc.opts...).Reconcile(context.Background(), reconcile.Request{}); err != nil {
				t.Fatal(err)
			}
			if len(sentRV) != 1 || (sentRV[0] != "") != tc.guarded {
				t.Fatalf("applies sent with resourceVersions %q; want one, guarded %v", sentRV, tc.guarded)
			}
		})
	}
}

// A Flush stops as soon as the proof is gone, whenever that is found: before
// a request, after a refusal (no re-read, no retry), or while a request is in
// flight (the watcher cancels it; its outcome is unknown, not failed).
func TestFenceStopsTheFlush(t *testing.T) {
	fenceErrs := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, ctrlbatch.ErrFenced) {
			t.Fatalf("%v; want ErrFenced", err)
		}
		if _, ok := ctrlbatch.RequeueAfterFlush(err); ok {
			t.Fatalf("%v is taken for a conflict", err)
		}
	}
	t.Run("expired before the second object's apply", func(t *testing.T) {
		fence := &clockFence{until: time.Now().Add(time.Hour)}
		var applies atomic.Int64
		a, c, _ := hookFixture(t, func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			applies.Add(1)
			fence.set(time.Now().Add(-time.Millisecond)) // the process was stopped right after sending
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		})
		_, err := ctrlbatch.Wrap(a, queuePhase(c, "One", "w1", "w2"), ctrlbatch.WithFence(fence),
			ctrlbatch.WithBatchOptions(batcher.WithConcurrency(1))).Reconcile(context.Background(), reconcile.Request{})
		fenceErrs(t, err)
		if applies.Load() != 1 {
			t.Fatalf("%d applies sent; want 1, the one before the proof expired", applies.Load())
		}
		if ssaErr := (*ssa.Error)(nil); !errors.As(err, &ssaErr) || ssaErr.Target.Name != "w2" {
			t.Fatalf("%v; want the error to name w2", err)
		}
	})
	t.Run("a stale resourceVersion answered after it expired", func(t *testing.T) {
		fence := &clockFence{until: time.Now().Add(time.Hour)}
		var applies, readsBefore atomic.Int64
		var reads *atomic.Int64 // set below, before the hook runs
		a, c, reads := hookFixture(t, func(context.Context, client.Client, string, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
			applies.Add(1)
			readsBefore.Store(reads.Load())
			fence.set(time.Now().Add(-time.Millisecond))
			return stale()
		})
		_, err := ctrlbatch.Wrap(a, queuePhase(c, "One", "w1"), ctrlbatch.WithFence(fence)).Reconcile(context.Background(), reconcile.Request{})
		fenceErrs(t, err)
		if applies.Load() != 1 || reads.Load() != readsBefore.Load() {
			t.Fatalf("%d applies, %d reads after the 409; want no re-read, no retry", applies.Load(), reads.Load()-readsBefore.Load())
		}
	})
	t.Run("a field-manager conflict answered after it expired", func(t *testing.T) {
		fence := &clockFence{until: time.Now().Add(time.Hour)}
		var applies atomic.Int64
		_, c, _ := hookFixture(t, func(context.Context, client.Client, string, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
			applies.Add(1)
			fence.set(time.Now().Add(-time.Millisecond))
			return fieldConflict()
		})
		rec := events.NewFakeRecorder(1)
		a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(c.Scheme())), ssa.WithRegisterer(nil),
			ssa.WithEventRecorder(rec), ssa.WithConflictPolicy("m", conflicts.Yield()))
		if err != nil {
			t.Fatal(err)
		}
		// No policy acts on it: no yield is decided, recorded or sent.
		_, err = ctrlbatch.Wrap(a, queuePhase(c, "One", "w1"), ctrlbatch.WithFence(fence)).Reconcile(context.Background(), reconcile.Request{})
		fenceErrs(t, err)
		if applies.Load() != 1 || len(rec.Events) != 0 {
			t.Fatalf("%d applies, %d events; want the one refused and no decision", applies.Load(), len(rec.Events))
		}
	})
	t.Run("the guarded retry's read answered after it expired", func(t *testing.T) {
		fence := &clockFence{until: time.Now().Add(time.Hour)}
		var applies atomic.Int64
		a, c, _ := hookFixture(t, func(context.Context, client.Client, string, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
			applies.Add(1)
			return stale()
		}, func(int64) {
			if applies.Load() > 0 { // the re-read after the 409
				fence.set(time.Now().Add(-time.Millisecond))
			}
		})
		_, err := ctrlbatch.Wrap(a, queuePhase(c, "One", "w1"), ctrlbatch.WithFence(fence)).Reconcile(context.Background(), reconcile.Request{})
		fenceErrs(t, err)
		if applies.Load() != 1 {
			t.Fatalf("%d applies; want no retry built on a read answered without the proof", applies.Load())
		}
	})
	t.Run("expired while the request was in flight", func(t *testing.T) {
		fence := &clockFence{until: time.Now().Add(time.Hour)}
		a, c, _ := hookFixture(t, func(ctx context.Context, _ client.Client, _ string, _ runtime.ApplyConfiguration, _ ...client.SubResourceApplyOption) error {
			fence.set(time.Now().Add(20 * time.Millisecond))
			select { // the API server holds the request
			case <-ctx.Done():
				return &url.Error{Op: "Patch", URL: "https://apiserver/widgets/w1/status", Err: ctx.Err()}
			case <-time.After(10 * time.Second):
				return errors.New("the watcher did not cancel the flush")
			}
		})
		_, err := ctrlbatch.Wrap(a, queuePhase(c, "One", "w1"), ctrlbatch.WithFence(fence)).Reconcile(context.Background(), reconcile.Request{})
		fenceErrs(t, err)
		if !errors.Is(err, ssa.ErrOutcomeUnknown) {
			t.Fatalf("%v; want ssa.ErrOutcomeUnknown: the request may have been applied", err)
		}
		if ssaErr := (*ssa.Error)(nil); !errors.As(err, &ssaErr) || ssaErr.Target.Name != "w1" {
			t.Fatalf("%v; want the error to name w1", err)
		}
	})
	t.Run("renewed while the request was in flight", func(t *testing.T) {
		fence := &clockFence{}
		fence.set(time.Now().Add(30 * time.Millisecond))
		a, c, _ := hookFixture(t, func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			fence.set(time.Now().Add(time.Hour)) // a renewal
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(80 * time.Millisecond): // past the first proof
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		})
		if _, err := ctrlbatch.Wrap(a, queuePhase(c, "One", "w1"), ctrlbatch.WithFence(fence)).Reconcile(context.Background(), reconcile.Request{}); err != nil {
			t.Fatalf("%v; a renewal must extend the flush", err)
		}
	})
}
