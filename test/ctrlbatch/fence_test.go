package ctrlbatch

import (
	"context"
	"errors"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// movableFence proves the lease until an instant the spec moves: its
// "pause" makes the proof expire.
type movableFence struct {
	mu    sync.Mutex
	until time.Time
}

func (f *movableFence) Until() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.until, true
}

func (f *movableFence) set(until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.until = until
}

// readyFromSpec is the readiness writer's status, derived from the spec it
// observed: readyReplicas goes back when an old observation lands.
func readyFromSpec(ac *acv1alpha1.WidgetApplyConfiguration, w *v1alpha1.Widget) error {
	ac.WithStatus(acv1alpha1.WidgetStatus().WithReadyReplicas(w.Spec.Replicas))
	return nil
}

var _ = Describe("ctrlbatch.WithFence", func() {
	var (
		ns  string
		key client.ObjectKey
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		w := createWidget(ctx, ns, "w1")
		key = client.ObjectKeyFromObject(w)
	})

	// setReplicas changes the spec, as a user would.
	setReplicas := func(ctx context.Context, n int32) {
		w := getWidget(ctx, key)
		base := w.DeepCopy()
		w.Spec.Replicas = n
		Expect(env.Client.Patch(ctx, w, client.MergeFrom(base))).To(Succeed())
	}

	// newLeaderWrites is the new leader, the same field manager in another
	// process: it reads the Widget and applies the status its spec implies.
	newLeaderWrites := func(ctx context.Context) {
		a, _ := newApplier()
		w := getWidget(ctx, key)
		b := batcher.New(a)
		Expect(batcher.Status(b, w, manager, readyFromSpec)).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
	}

	// reconcileFenced runs the readiness writer's reconcile through a, behind
	// fence: it observes the Widget and queues readyFromSpec.
	reconcileFenced := func(ctx context.Context, a *ssa.Applier, fence ctrlbatch.Fence, opts ...ctrlbatch.FenceOption) error {
		r := ctrlbatch.Wrap(a, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			w := &v1alpha1.Widget{}
			if err := env.Client.Get(ctx, req.NamespacedName, w); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, batcher.Status(ctrlbatch.FromContext(ctx), w, manager, readyFromSpec)
		}), ctrlbatch.WithFence(fence, opts...))
		_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
		return err
	}

	// oldLeader reconciles the Widget behind fence: it observes the Widget at
	// readyReplicas 1, and its apply is sent (the check before it passed) but
	// held until, meanwhile, the spec moved to 2, the new leader wrote
	// readyReplicas 2, and the proof expired (the process was stopped while
	// the request was partly written, and resumed). resumed, when set, makes
	// the proof valid again before the request goes out.
	oldLeader := func(ctx context.Context, opts []ctrlbatch.FenceOption, resumed bool) error {
		fence := &movableFence{until: time.Now().Add(time.Hour)}
		c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		held := true
		paused := interceptor.NewClient(c, interceptor.Funcs{
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, o ...client.SubResourceApplyOption) error {
				if held {
					held = false
					setReplicas(ctx, 2)
					newLeaderWrites(ctx)
					if !resumed {
						fence.set(time.Now().Add(-time.Second))
					}
					// Its bytes went out before the pause: ending the context
					// no longer recalls them.
					ctx = context.WithoutCancel(ctx)
				}
				return c.SubResource(sub).Apply(ctx, obj, o...)
			},
		})
		a, err := widgets.NewApplier(paused)
		Expect(err).NotTo(HaveOccurred())
		return reconcileFenced(ctx, a, fence, opts...)
	}

	It("refuses a resumed leader's apply built before a new leader's write; without the guard it lands", func(ctx context.Context) {
		setReplicas(ctx, 1)

		err := oldLeader(ctx, nil, false)
		Expect(errors.Is(err, ctrlbatch.ErrFenced)).To(BeTrue(), "%v", err)
		Expect(getWidget(ctx, key).Status.ReadyReplicas).To(BeEquivalentTo(2), "the stale apply landed")

		// The control: the lease fence alone lets the same request through, and
		// the status goes back to what the old spec implied.
		setReplicas(ctx, 1)
		Expect(oldLeader(ctx, []ctrlbatch.FenceOption{ctrlbatch.LeaseOnly()}, false)).To(Succeed())
		Expect(getWidget(ctx, key).Status.ReadyReplicas).To(BeEquivalentTo(1),
			"vacuous: the unguarded stale apply did not land")
	})

	It("rebuilds a guarded entry from a fresh read while the proof holds", func(ctx context.Context) {
		setReplicas(ctx, 1)
		Expect(oldLeader(ctx, nil, true)).To(Succeed())
		w := getWidget(ctx, key)
		Expect(w.Status.ReadyReplicas).To(BeEquivalentTo(2), "rebuilt from the object as the new leader left it")
		Expect(w.Spec.Replicas).To(BeEquivalentTo(2))
	})

	It("reports an apply cut off by the proof's end as of unknown outcome", func(ctx context.Context) {
		setReplicas(ctx, 1)
		fence := &movableFence{until: time.Now().Add(time.Hour)}
		c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		slow := interceptor.NewClient(c, interceptor.Funcs{
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, o ...client.SubResourceApplyOption) error {
				// The API server has the request; the proof ends before it answers.
				fence.set(time.Now().Add(50 * time.Millisecond))
				err := c.SubResource(sub).Apply(ctx, obj, o...)
				<-ctx.Done()
				if err == nil {
					err = ctx.Err() // the answer came after the watcher cancelled
				}
				return err
			},
		})
		a, err := widgets.NewApplier(slow)
		Expect(err).NotTo(HaveOccurred())
		err = reconcileFenced(ctx, a, fence)
		Expect(errors.Is(err, ssa.ErrOutcomeUnknown)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, ctrlbatch.ErrFenced)).To(BeTrue(), "%v", err)
		var applyErr *ssa.Error
		Expect(errors.As(err, &applyErr)).To(BeTrue())
		Expect(applyErr.Target.Name).To(Equal(key.Name))
		// It was applied, though this process could not know.
		Expect(getWidget(ctx, key).Status.ReadyReplicas).To(BeEquivalentTo(1))
	})
})
