package widgets

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
)

// rendezvous is a client.Reader whose first n Gets wait for each other before
// returning: n reconciles observe the same state before any of them writes,
// which makes the plan race happen every time instead of now and then.
type rendezvous struct {
	client.Reader

	mu      sync.Mutex
	waiting int
	all     chan struct{}
	noPlan  int // Gets that observed a Widget without a plan
}

func newRendezvous(r client.Reader, n int) *rendezvous {
	return &rendezvous{Reader: r, waiting: n, all: make(chan struct{})}
}

// Get reads through the wrapped reader, then waits for the others.
func (r *rendezvous) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.Reader.Get(ctx, key, obj, opts...)
	r.mu.Lock()
	if w, ok := obj.(*v1alpha1.Widget); ok && err == nil && w.Status.Plan == nil {
		r.noPlan++
	}
	if r.waiting--; r.waiting == 0 {
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// observedNoPlan is how many Gets saw a Widget without a plan.
func (r *rendezvous) observedNoPlan() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.noPlan
}

// countingReader counts the reads the Applier makes: a guarded apply that found
// the object changed reads it again.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

// Get counts and reads.
func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// countingWriter counts the status applies the Applier sends and those the API
// server refuses with 409 Conflict.
type countingWriter struct {
	applies, conflicts atomic.Int32
}

// wrap returns c with its status applies counted.
func (w *countingWriter) wrap(c client.WithWatch) client.Client {
	return interceptor.NewClient(c, interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			w.applies.Add(1)
			err := c.SubResource(sub).Apply(ctx, obj, opts...)
			if apierrors.IsConflict(err) {
				w.conflicts.Add(1)
			}
			return err
		},
	})
}

// raceResult is what two racing planner reconciles left behind.
type raceResult struct {
	plans          []string // every plan ID the Widget showed, in order
	final          *v1alpha1.Widget
	observedNoPlan int   // of the two reconciles' observations
	rereads        int32 // reads by the Applier after a stale apply
	applies        int32 // status applies sent
	conflicts      int32 // status applies refused with 409 Conflict
}

// maxControlAttempts bounds the unguarded control: if the race it must show
// does not happen in this many fresh Widgets, the control is vacuous and fails.
const maxControlAttempts = 5

var _ = Describe("The planner's guard", func() {
	var (
		ns      string
		history *planHistory
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		history = watchPlans(ns)
	})

	// race creates a Widget and runs the planner's Reconcile on it from two
	// goroutines at once, both observing it before either writes, with no
	// manager running. The Applier is shared, as in a controller process.
	race := func(ctx context.Context, name string, unguarded bool) raceResult {
		GinkgoHelper()
		key := createWidget(ctx, ns, name, 1)
		reads := &countingReader{Reader: env.Client}
		writes := &countingWriter{}
		wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		applier, err := ssa.NewApplier(writes.wrap(wc),
			ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(env.Scheme)),
			ssa.WithReader(reads),
			ssa.WithRegisterer(nil))
		Expect(err).NotTo(HaveOccurred())
		observe := newRendezvous(env.Client, 2)
		r := &PlannerReconciler{Reader: observe, Applier: applier, unguarded: unguarded}

		var wg sync.WaitGroup
		results := make([]ctrl.Result, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				results[i], errs[i] = r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
			})
		}
		wg.Wait()
		Expect(errs).To(HaveEach(Not(HaveOccurred())))
		Expect(results).To(HaveEach(BeZero()))

		final := getWidget(ctx, key)
		Eventually(func() bool { return history.Seen(name, final.ResourceVersion) }).Should(BeTrue())
		return raceResult{plans: history.IDs(name), final: final, observedNoPlan: observe.observedNoPlan(),
			rereads: reads.gets.Load(), applies: writes.applies.Load(), conflicts: writes.conflicts.Load()}
	}

	It("lets exactly one of two racing reconciles create the plan", func(ctx context.Context) {
		for i := range 3 {
			res := race(ctx, fmt.Sprintf("guarded-%d", i), false)
			Expect(res.observedNoPlan).To(Equal(2), "both reconciles must decide from a Widget without a plan")
			Expect(res.plans).To(HaveLen(1), "plans the Widget showed")
			Expect(res.final.Status.Plan.ID).To(Equal(res.plans[0]))
			Expect(findCondition(res.final, ConditionPlanned).Message).To(Equal("plan " + res.plans[0]))
			// The Applier sends one object's applies one at a time: the first
			// lands, the second carries a resourceVersion that is stale by then.
			Expect(res.conflicts).To(Equal(int32(1)), "the losing reconcile's apply, and only it, was refused")
			Expect(res.rereads).To(Equal(int32(1)), "the losing reconcile read the Widget again once, and decided again")
			// Decided again, the loser finds the plan and Planned it would
			// write already there, applied by the same manager: nothing to send.
			Expect(res.applies).To(Equal(int32(2)), "the winner's apply and the loser's refused one")
		}
	})

	It("without the guard, lets the second reconcile overwrite the first plan (the control)", func(ctx context.Context) {
		overwritten := false
		for i := 0; i < maxControlAttempts && !overwritten; i++ {
			res := race(ctx, fmt.Sprintf("unguarded-%d", i), true)
			Expect(res.observedNoPlan).To(Equal(2))
			Expect(res.rereads).To(BeZero())
			Expect(res.conflicts).To(BeZero(), "nothing guards the applies, so nothing refuses them")
			overwritten = len(res.plans) > 1
			if overwritten {
				Expect(res.final.Status.Plan.ID).To(Equal(res.plans[len(res.plans)-1]))
				GinkgoWriter.Printf("attempt %d: plans %v, the last one won\n", i+1, res.plans)
			}
		}
		Expect(overwritten).To(BeTrue(), "no plan was overwritten in %d attempts: the control shows nothing", maxControlAttempts)
	})
})
