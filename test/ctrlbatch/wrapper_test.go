package ctrlbatch

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conditions"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

const manager = "readiness"

var errBoom = errors.New("boom")

var _ = Describe("ctrlbatch.Wrap", func() {
	var (
		ns       string
		applier  *ssa.Applier
		requests *apiserver.Requests
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		applier, requests = newApplier()
	})

	// queueing returns a reconciler that reads the Widget, queues Ready with
	// status into the batch from its context, and returns res and err.
	queueing := func(status metav1.ConditionStatus, res reconcile.Result, err error) reconcile.Reconciler {
		return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			b := ctrlbatch.FromContext(ctx)
			if b == nil {
				return reconcile.Result{}, errors.New("no batch in the context")
			}
			w := &v1alpha1.Widget{}
			if err := env.Client.Get(ctx, req.NamespacedName, w); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if qerr := batcher.Status(b, w, manager, widgets.SetCondition("Ready", status, "Checked")); qerr != nil {
				return reconcile.Result{}, qerr
			}
			return res, err
		})
	}

	It("gives each reconcile a batch through the context and flushes it when the reconciler returns", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		Expect(ctrlbatch.FromContext(ctx)).To(BeNil(), "a batch outside a reconcile")

		var batches []*batcher.Batch
		r := ctrlbatch.Wrap(applier, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			b := ctrlbatch.FromContext(ctx)
			batches = append(batches, b)
			w := &v1alpha1.Widget{}
			Expect(env.Client.Get(ctx, req.NamespacedName, w)).To(Succeed())
			Expect(batcher.Status(b, w, manager, widgets.SetCondition("Ready", metav1.ConditionTrue, "Checked"))).To(Succeed())
			Expect(batcher.Status(b, w, manager, func(ac *acWidget, _ *v1alpha1.Widget) error {
				widgets.Status(ac).WithPhase("Running")
				return nil
			})).To(Succeed())
			Expect(requests.Count("apply")).To(BeZero(), "sent before the reconciler returned")
			return reconcile.Result{}, nil
		}))
		requests.Reset()
		res, err := r.Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(BeZero())
		Expect(requests.Count("apply")).To(Equal(1), "two status functions, one apply: %s", requests)
		got := getWidget(ctx, client.ObjectKeyFromObject(w))
		Expect(widgets.Conditions(got)).To(Equal(widgets.CS("Ready", "True")))
		Expect(got.Status.Phase).To(Equal("Running"))

		// A second reconcile has a batch of its own, and sends nothing: the
		// status is what it decides again.
		requests.Reset()
		_, err = r.Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred())
		Expect(batches).To(HaveLen(2))
		Expect(batches[0]).NotTo(BeIdenticalTo(batches[1]))
		Expect(requests.Total()).To(BeZero(), "%s", requests)
	})

	It("flushes at every exit and keeps what the reconciler returned", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)

		res, err := ctrlbatch.Wrap(applier, queueing(metav1.ConditionTrue, reconcile.Result{RequeueAfter: 7 * time.Second}, nil)).Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(7 * time.Second))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("Ready", "True")))

		By("an error return")
		_, err = ctrlbatch.Wrap(applier, queueing(metav1.ConditionFalse, reconcile.Result{}, errBoom)).Reconcile(ctx, request(w))
		Expect(err).To(MatchError(errBoom))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("Ready", "False")), "queued before the error, flushed after it")

		By("a terminal error")
		_, err = ctrlbatch.Wrap(applier, queueing(metav1.ConditionUnknown, reconcile.Result{}, reconcile.TerminalError(errBoom))).Reconcile(ctx, request(w))
		Expect(errors.Is(err, reconcile.TerminalError(nil))).To(BeTrue(), "still terminal: %v", err)
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("Ready", "Unknown")))

		By("an early return that queued nothing")
		requests.Reset()
		res, err = ctrlbatch.Wrap(applier, queueing(metav1.ConditionTrue, reconcile.Result{}, nil)).Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "gone"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(BeZero())
		Expect(requests.Count("apply")).To(BeZero())
	})

	It("turns a field-manager conflict into a requeue after the conflicts package's hint", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "other", widgets.CS("Ready", "True"))).To(Succeed())

		res, err := ctrlbatch.Wrap(applier, queueing(metav1.ConditionFalse, reconcile.Result{}, nil)).Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred(), "a conflict is a requeue, not an error")
		Expect(res.RequeueAfter).To(Equal(conflicts.ConflictRetryAfter))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("Ready", "True")), "the owner's value stays")

		By("the reconciler's own sooner requeue wins")
		res, err = ctrlbatch.Wrap(applier, queueing(metav1.ConditionFalse, reconcile.Result{RequeueAfter: time.Second}, nil)).Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(time.Second))

		By("with an error of the reconciler's own, both are returned for controller-runtime's backoff")
		res, err = ctrlbatch.Wrap(applier, queueing(metav1.ConditionFalse, reconcile.Result{}, errBoom)).Reconcile(ctx, request(w))
		Expect(err).To(MatchError(errBoom))
		Expect(conflicts.Classify(err)).To(Equal(conflicts.ClassFieldManagerConflict))
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "%v", err)
		Expect(cerr.Conflicts).NotTo(BeEmpty())
		Expect(cerr.Conflicts[0].Manager).To(Equal("other"))
		Expect(res.RequeueAfter).To(BeZero())
	})

	It("requeues soon when a guarded entry found the object changed", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		guarded, _ := newApplier(ssa.WithGuardBackoff(wait.Backoff{Steps: 1}))

		r := ctrlbatch.Wrap(guarded, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			observed := &v1alpha1.Widget{}
			if err := env.Client.Get(ctx, req.NamespacedName, observed); err != nil {
				return reconcile.Result{}, err
			}
			// Another writer moves the object on after it was observed.
			if err := widgets.ApplyPhase(ctx, env.Client, key, "other", "Moved"); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, batcher.Status(ctrlbatch.FromContext(ctx), observed, manager,
				widgets.PlanFor("p1", "one"), ssa.Guarded)
		}))
		res, err := r.Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(Equal(conflicts.StaleRetryAfter))
		Expect(getWidget(ctx, key).Status.Plan).To(BeNil())
	})
})

var _ = Describe("conditions helpers", func() {
	It("set conditions on any type with GetConditions and SetConditions, each writer its own", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS("Reachable", "True"))).To(Succeed())

		a, c := newConditionedApplier()
		r := ctrlbatch.Wrap(a, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			obj := &conditionedWidget{}
			if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, conditions.Status(ctrlbatch.FromContext(ctx), obj, manager,
				metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "up"})
		}))
		_, err := r.Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred())
		got := getWidget(ctx, key)
		Expect(widgets.Conditions(got)).To(Equal(widgets.CS("Ready", "True", "Reachable", "True")))
		ready := conditions.Get(&conditionedWidget{Widget: *got}, "Ready")
		Expect(ready.ObservedGeneration).To(Equal(got.Generation))
		for m, owned := range map[string]string{manager: "Ready", "networking": "Reachable"} {
			owns, err := widgets.OwnsCondition(got, m, owned)
			Expect(err).NotTo(HaveOccurred())
			Expect(owns).To(BeTrue(), "%s owns %s", m, owned)
		}
		owns, err := widgets.OwnsCondition(got, manager, "Reachable")
		Expect(err).NotTo(HaveOccurred())
		Expect(owns).To(BeFalse())

		// Deciding the same again writes nothing.
		_, err = r.Reconcile(ctx, request(w))
		Expect(err).NotTo(HaveOccurred())
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(got.ResourceVersion))
	})
})
