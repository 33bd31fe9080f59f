package integration

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// The Applier remembers what each manager owns between applies (see
// ssa/owned.go). Every way that memory can go stale is driven here against
// the API server, each beside a control: a naive memory, keyed on the last
// intent alone or on the manager's managedFields entry alone, that writes the
// wrong thing in the same situation.
var _ = Describe("what the Applier remembers of what a manager owns", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	It("is not trusted after another manager took a field by force", func(ctx context.Context) {
		a, _ := newApplierCounted()
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "forced"))
		Expect(reconcile(ctx, a, key, "readiness", widgets.SetCondition("A", "True", "Up"), widgets.SetCondition("B", "True", "Up"))).To(Equal(1))

		forceCondition(ctx, key, "admin", "A", "False")
		o, err := ownership.Inspect(getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Owners(fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "A"), "status"))).
			To(ConsistOf(HaveField("Manager", "admin")), "admin took A's status")

		By("readiness adds C: its intent starts from what it owns now, B only")
		Expect(reconcile(ctx, a, key, "readiness", widgets.SetCondition("C", "True", "Up"))).To(Equal(1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("A", "False", "B", "True", "C", "True")))

		By("the control: an intent built on the remembered A, B (keyed on the last intent) restates A and is refused")
		err = widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "True", "B", "True", "C", "True"))
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "want a field-manager conflict, got %v", err)
		Expect(err.Error()).To(ContainSubstring(`"admin"`))
	})

	It("checks the values when another process with the same manager name wrote in the same second", func(ctx context.Context) {
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "twins"))
		p1, _ := newApplierCounted()
		p2, _ := newApplierCounted()
		sameSecond(ctx, key, func() {
			Expect(reconcile(ctx, p1, key, "readiness", widgets.SetCondition("A", "True", "Up"))).To(Equal(1))
		}, func() {
			Expect(reconcile(ctx, p2, key, "readiness", widgets.SetCondition("A", "False", "Down"))).To(Equal(1))
		})

		By("p1 wants A True again: its entry is unchanged, its value is not, so it applies")
		Expect(reconcile(ctx, p1, key, "readiness", widgets.SetCondition("A", "True", "Up"))).To(Equal(1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("A", "True")))

		By("the control: a memory keyed on the entry alone skips, and A stays False")
		ctl := client.ObjectKeyFromObject(createWidget(ctx, ns, "twins-control"))
		naive := &naiveEntryMemory{manager: "readiness"}
		sameSecond(ctx, ctl, func() {
			Expect(naive.write(ctx, ctl, widgets.CS("A", "True"))).To(BeTrue())
		}, func() {
			Expect(reconcile(ctx, p2, ctl, "readiness", widgets.SetCondition("A", "False", "Down"))).To(Equal(1))
		})
		Expect(naive.write(ctx, ctl, widgets.CS("A", "True"))).To(BeFalse(), "the naive memory sent nothing")
		Expect(widgets.Conditions(getWidget(ctx, ctl))).To(Equal(widgets.CS("A", "False")), "the wrong value stays")
	})

	It("forgets what it knew when an apply's response is lost", func(ctx context.Context) {
		var lose atomic.Bool
		c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		lossy := interceptor.NewClient(c, interceptor.Funcs{
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
				err := c.SubResource(sub).Apply(ctx, obj, opts...)
				if err == nil && lose.Load() {
					return fmt.Errorf("the response never arrived: %w", context.DeadlineExceeded)
				}
				return err
			},
		})
		a, err := widgets.NewApplier(lossy, ssa.WithRegisterer(nil))
		Expect(err).NotTo(HaveOccurred())
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "lost"))
		Expect(reconcile(ctx, a, key, "readiness", widgets.SetCondition("A", "True", "Up"))).To(Equal(1))

		By("A False is applied, but the client sees a timeout")
		lose.Store(true)
		_, err = reconcileErr(ctx, a, key, "readiness", widgets.SetCondition("A", "False", "Down"))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		lose.Store(false)
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("A", "False")), "the apply landed")

		By("A True again is applied")
		Expect(reconcile(ctx, a, key, "readiness", widgets.SetCondition("A", "True", "Up"))).To(Equal(1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("A", "True")))

		By("the control: a memory of the last intent that went through skips A True, and A stays False")
		ctl := client.ObjectKeyFromObject(createWidget(ctx, ns, "lost-control"))
		naive := &naiveIntentMemory{}
		send := func(status metav1.ConditionStatus) func() error {
			return func() error {
				return widgets.ApplyConditions(ctx, lossy, ctl, "readiness", widgets.CS("A", string(status)))
			}
		}
		Expect(naive.write(widgets.CS("A", "True"), send("True"))).To(BeTrue())
		lose.Store(true)
		Expect(naive.write(widgets.CS("A", "False"), send("False"))).To(BeTrue())
		lose.Store(false)
		Expect(naive.write(widgets.CS("A", "True"), send("True"))).To(BeFalse(), "the naive memory sent nothing")
		Expect(widgets.Conditions(getWidget(ctx, ctl))).To(Equal(widgets.CS("A", "False")), "the wrong value stays")
	})

	It("starts afresh on an object deleted and created again under the same name", func(ctx context.Context) {
		a, _ := newApplierCounted()
		naive := &naiveIntentMemory{}
		for _, name := range []string{"reborn", "reborn-control"} {
			w := createWidget(ctx, ns, name)
			key := client.ObjectKeyFromObject(w)
			if name == "reborn" {
				Expect(reconcile(ctx, a, key, "readiness", widgets.SetCondition("A", "True", "Up"))).To(Equal(1))
			} else {
				Expect(naive.write(widgets.CS("A", "True"), func() error {
					return widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "True"))
				})).To(BeTrue())
			}
			Expect(env.Client.Delete(ctx, w)).To(Succeed())
			Eventually(func() error { _, err := widgets.Get(ctx, env.Client, key); return err }).Should(HaveOccurred())
			Expect(createWidget(ctx, ns, name).UID).NotTo(Equal(w.UID))
		}
		reborn := client.ObjectKey{Namespace: ns, Name: "reborn"}
		Expect(reconcile(ctx, a, reborn, "readiness", widgets.SetCondition("A", "True", "Up"))).To(Equal(1))
		Expect(widgets.Conditions(getWidget(ctx, reborn))).To(Equal(widgets.CS("A", "True")))

		By("the control: a memory of the last intent skips, and the new object never gets A")
		ctl := client.ObjectKey{Namespace: ns, Name: "reborn-control"}
		Expect(naive.write(widgets.CS("A", "True"), func() error {
			return widgets.ApplyConditions(ctx, env.Client, ctl, "readiness", widgets.CS("A", "True"))
		})).To(BeFalse())
		Expect(widgets.Conditions(getWidget(ctx, ctl))).To(BeEmpty())
	})

	It("serves an object whose managedFields were stripped only at the resourceVersion it remembers", func(ctx context.Context) {
		a, requests := newApplierCounted()
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "stripped"))
		Expect(reconcile(ctx, a, key, "readiness", widgets.SetCondition("A", "True", "Up"))).To(Equal(1))

		By("another manager writes: the stripped object is at a resourceVersion the Applier does not know, so it reads")
		Expect(widgets.ApplyPhase(ctx, env.Client, key, "summary", "Running")).To(Succeed())
		stripped := getWidget(ctx, key)
		stripped.ManagedFields = nil
		requests.Reset()
		Expect(reconcileOn(ctx, a, stripped, "readiness", widgets.SetCondition("B", "True", "Up"))).To(Equal(1))
		Expect(requests.Snapshot()).To(HaveKeyWithValue("get", 1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("A", "True", "B", "True")))

		By("the control: taking the stripped object as owning nothing releases A")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("B", "True"))).To(Succeed())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("B", "True")))
	})

	It("reads every field a manager of conditions owns after a restart, not only their statuses", func(ctx context.Context) {
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "restarted"))
		cond := func(typ, status, reason, message string) widgets.Mutator {
			return widgets.PutCondition(metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: message})
		}
		before, _ := newApplierCounted()
		Expect(reconcile(ctx, before, key, "readiness", cond("A", "True", "Up", "all up"), cond("B", "False", "Down", "one down"))).To(Equal(1))

		By("a restarted process that wants the same finds it owned, and sends nothing")
		after, _ := newApplierCounted()
		Expect(reconcile(ctx, after, key, "readiness", cond("A", "True", "Up", "all up"), cond("B", "False", "Down", "one down"))).To(Equal(0))

		By("another that wants B's message changed, to what its reason says, sends it")
		again, _ := newApplierCounted()
		Expect(reconcile(ctx, again, key, "readiness", cond("A", "True", "Up", "all up"), cond("B", "False", "Down", "Down"))).To(Equal(1))
		messages := func(w *v1alpha1.Widget) map[string]string {
			out := map[string]string{}
			for _, c := range w.Status.Conditions {
				out[c.Type] = c.Message
			}
			return out
		}
		Expect(messages(getWidget(ctx, key))).To(Equal(map[string]string{"A": "all up", "B": "Down"}))

		By("the control: a restart that judges what it owns by the statuses alone finds nothing changed, and the message never lands")
		ctl := client.ObjectKeyFromObject(createWidget(ctx, ns, "restarted-control"))
		Expect(reconcile(ctx, before, ctl, "readiness", cond("A", "True", "Up", "all up"), cond("B", "False", "Down", "one down"))).To(Equal(1))
		Expect(widgets.Conditions(getWidget(ctx, ctl))).To(Equal(widgets.CS("A", "True", "B", "False")),
			"the statuses it wants are there: it sends nothing")
		Expect(messages(getWidget(ctx, ctl))).To(HaveKeyWithValue("B", "one down"), "the wanted message is not on the object")
	})

	It("rebuilds a guarded entry on a fresh read and remembers only what landed", func(ctx context.Context) {
		cfg, responses := apiserver.WithResponses(env.Config)
		c, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		var interfere atomic.Bool
		interfere.Store(true)
		busy := interceptor.NewClient(c, interceptor.Funcs{
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
				if interfere.CompareAndSwap(true, false) {
					other := acv1alpha1.Widget(nameOf(obj), ns).WithStatus(acv1alpha1.WidgetStatus().WithReadyReplicas(3))
					if err := env.Client.Status().Apply(ctx, other, client.FieldOwner("scaler")); err != nil {
						return err
					}
				}
				return c.SubResource(sub).Apply(ctx, obj, opts...)
			},
		})
		a, err := widgets.NewApplier(busy, ssa.WithRegisterer(nil))
		Expect(err).NotTo(HaveOccurred())
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "guarded"))

		responses.Reset()
		w := getWidget(ctx, key)
		b := batcher.New(a)
		Expect(batcher.Status(b, w, "planner", widgets.PlanFor("p1", "provision"), ssa.Guarded)).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(responses.Count("apply", 409)).To(Equal(1), "the first apply met the interfering write: %v", responses)
		Expect(responses.Succeeded("apply")).To(Equal(1), "%v", responses)
		Expect(responses.Succeeded("get")).To(Equal(1), "one re-read: %v", responses)
		Expect(getWidget(ctx, key).Status.Plan).NotTo(BeNil())
		Expect(getWidget(ctx, key).Status.ReadyReplicas).To(BeEquivalentTo(3))

		By("a steady reconcile on what landed sends nothing")
		responses.Reset()
		Expect(reconcile(ctx, a, key, "planner", widgets.PlanFor("p1", "provision"))).To(Equal(0))
		Expect(responses.String()).To(Equal((&apiserver.Responses{}).String()), "no request")

		By("the control: a memory that kept the refused intent skips the retry, and no plan is ever written")
		ctl := client.ObjectKeyFromObject(createWidget(ctx, ns, "guarded-control"))
		naive := &naiveIntentMemory{rememberFailures: true}
		plan := func() error {
			stale := getWidget(ctx, ctl)
			other := acv1alpha1.Widget(ctl.Name, ns).WithStatus(acv1alpha1.WidgetStatus().WithReadyReplicas(3))
			Expect(env.Client.Status().Apply(ctx, other, client.FieldOwner("scaler"))).To(Succeed())
			ac := acv1alpha1.Widget(ctl.Name, ns).WithResourceVersion(stale.ResourceVersion).
				WithStatus(acv1alpha1.WidgetStatus().WithPlan(acv1alpha1.WidgetPlan().WithID("p1").WithCreatedBy("p1")))
			return env.Client.Status().Apply(ctx, ac, client.FieldOwner("planner"))
		}
		intent := map[string]metav1.ConditionStatus{"plan": "p1"}
		Expect(naive.write(intent, plan)).To(BeTrue(), "the first attempt was sent and refused")
		Expect(naive.write(intent, plan)).To(BeFalse())
		Expect(getWidget(ctx, ctl).Status.Plan).To(BeNil())
	})
})

// reconcile runs one reconcile of manager on the object as read now: mutators
// queued in one batch through a, flushed. It returns the applies sent and
// fails the spec on a Flush error.
func reconcile(ctx context.Context, a *ssa.Applier, key client.ObjectKey, manager string, muts ...widgets.Mutator) int {
	GinkgoHelper()
	n, err := reconcileErr(ctx, a, key, manager, muts...)
	Expect(err).NotTo(HaveOccurred())
	return n
}

func reconcileErr(ctx context.Context, a *ssa.Applier, key client.ObjectKey, manager string, muts ...widgets.Mutator) (int, error) {
	GinkgoHelper()
	return reconcileOnErr(ctx, a, getWidget(ctx, key), manager, muts...)
}

func reconcileOn(ctx context.Context, a *ssa.Applier, w *v1alpha1.Widget, manager string, muts ...widgets.Mutator) int {
	GinkgoHelper()
	n, err := reconcileOnErr(ctx, a, w, manager, muts...)
	Expect(err).NotTo(HaveOccurred())
	return n
}

func reconcileOnErr(ctx context.Context, a *ssa.Applier, w *v1alpha1.Widget, manager string, muts ...widgets.Mutator) (int, error) {
	GinkgoHelper()
	var sent int
	b := batcher.New(a, batcher.WithResultHook(func(_ ssa.Target, r ssa.Result, _ error) { sent += r.Attempts }))
	for _, m := range muts {
		Expect(batcher.Status(b, w, manager, m)).To(Succeed())
	}
	err := b.Flush(ctx)
	return sent, err
}

// forceCondition takes condType from whoever owns it, as manager.
func forceCondition(ctx context.Context, key client.ObjectKey, manager, condType string, status metav1.ConditionStatus) {
	GinkgoHelper()
	cond := metav1ac.Condition().WithType(condType).WithStatus(status).WithReason("Forced").WithMessage("forced").
		WithLastTransitionTime(metav1.Now())
	Expect(env.Client.Status().Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithConditions(cond)),
		client.FieldOwner(manager), client.ForceOwnership)).To(Succeed())
}

// sameSecond runs first, then second, until the API server stamped the
// readiness entry of both writes with the same second, so that the entry
// they leave is byte-identical (a few tries at most).
func sameSecond(ctx context.Context, key client.ObjectKey, first, second func()) {
	GinkgoHelper()
	for range 5 {
		first()
		before := readinessEntry(getWidget(ctx, key))
		second()
		after := readinessEntry(getWidget(ctx, key))
		if bytes.Equal(before, after) {
			return
		}
		GinkgoWriter.Println("the writes straddled a second; again")
	}
	Fail("could not land two writes in the same second")
}

// readinessEntry is readiness's status Apply entry, fields and time, as bytes.
func readinessEntry(w *v1alpha1.Widget) []byte {
	for _, mf := range w.ManagedFields {
		if mf.Manager == "readiness" && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "status" {
			return fmt.Appendf(mf.FieldsV1.GetRawBytes(), "@%s", mf.Time.UTC())
		}
	}
	return nil
}

// naiveIntentMemory skips a write when the intent equals the last one it
// remembers: the memory keyed on the last intent alone. With
// rememberFailures it remembers an intent even when sending it failed.
type naiveIntentMemory struct {
	last             map[string]metav1.ConditionStatus
	rememberFailures bool
}

// write sends intent with send unless the memory says nothing changed; it
// reports whether it sent.
func (n *naiveIntentMemory) write(intent map[string]metav1.ConditionStatus, send func() error) bool {
	if n.last != nil && maps.Equal(n.last, intent) {
		return false
	}
	if err := send(); err != nil && !n.rememberFailures {
		return true
	}
	n.last = maps.Clone(intent)
	return true
}

// naiveEntryMemory remembers the values it applied under the manager's
// managedFields entry, and skips while the entry is byte-identical: the memory
// keyed on the entry alone.
type naiveEntryMemory struct {
	manager string
	entry   []byte
	values  map[string]metav1.ConditionStatus
}

// write applies want as the manager unless the memory says nothing changed;
// it reports whether it sent.
func (n *naiveEntryMemory) write(ctx context.Context, key client.ObjectKey, want map[string]metav1.ConditionStatus) bool {
	GinkgoHelper()
	if n.entry != nil && bytes.Equal(readinessEntry(getWidget(ctx, key)), n.entry) && maps.Equal(n.values, want) {
		return false
	}
	a, err := widgets.NewApplier(env.Client, ssa.WithRegisterer(nil), ssa.WithOwnedCacheSize(0))
	Expect(err).NotTo(HaveOccurred())
	var muts []widgets.Mutator
	for t, s := range want {
		reason := "Up"
		if s == "False" {
			reason = "Down"
		}
		muts = append(muts, widgets.SetCondition(t, s, reason))
	}
	reconcile(ctx, a, key, n.manager, muts...)
	n.entry, n.values = readinessEntry(getWidget(ctx, key)), maps.Clone(want)
	return true
}

// nameOf names the object an apply configuration is for.
func nameOf(obj runtime.ApplyConfiguration) string {
	if named, ok := obj.(interface{ GetName() *string }); ok && named.GetName() != nil {
		return *named.GetName()
	}
	Fail(fmt.Sprintf("%T does not name its object", obj))
	return ""
}
