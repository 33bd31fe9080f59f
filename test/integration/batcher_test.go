package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("Batch", func() {
	var (
		ns       string
		applier  *ssa.Applier
		requests *apiserver.Requests
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		applier, _, requests = newApplier()
	})

	// flushCounted flushes b and returns the requests it sent.
	flushCounted := func(ctx context.Context, b *batcher.Batch) (map[string]int, error) {
		requests.Reset()
		err := b.Flush(ctx)
		counts := requests.Snapshot()
		delete(counts, "discovery")
		return counts, err
	}

	It("sends one apply per field manager and no GET", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		Expect(batcher.Status(b, w, "networking", widgets.SetCondition("Reachable", metav1.ConditionTrue, "Routed"))).To(Succeed())
		Expect(b.Pending()).To(HaveLen(2))

		counts, err := flushCounted(ctx, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal(map[string]int{"apply": 2}))
		Expect(b.Pending()).To(BeEmpty())

		got := getWidget(ctx, client.ObjectKeyFromObject(w))
		Expect(widgets.Conditions(got)).To(Equal(map[string]metav1.ConditionStatus{"Ready": "True", "Reachable": "True"}))
		Expect(ownsCondition(got, "readiness", "Ready")).To(BeTrue())
		Expect(ownsCondition(got, "networking", "Reachable")).To(BeTrue())
		Expect(ownsCondition(got, "readiness", "Reachable")).To(BeFalse())
	})

	It("folds 20 mutators of one manager into one apply, each seeing the previous one's edits", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		b := batcher.New(applier)
		for i := range 20 {
			Expect(batcher.Status(b, w, "readiness", func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
				st := widgets.Status(ac)
				if i > 0 && len(st.Conditions) != i {
					return errors.New("mutator did not see the previous edits")
				}
				return widgets.SetCondition("C"+string(rune('A'+i)), metav1.ConditionTrue, "Set")(ac, o)
			})).To(Succeed())
		}
		counts, err := flushCounted(ctx, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal(map[string]int{"apply": 1}))
		Expect(getWidget(ctx, client.ObjectKeyFromObject(w)).Status.Conditions).To(HaveLen(20))
	})

	It("sends nothing when a reconcile repeats itself, leaving the resourceVersion alone", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		reconcile := func(obj *v1alpha1.Widget) (map[string]int, error) {
			b := batcher.New(applier)
			Expect(batcher.Status(b, obj, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
			Expect(batcher.Status(b, obj, "readiness", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				widgets.Status(ac).WithReadyReplicas(3).WithAttributes(map[string]string{"zone": "a"})
				return nil
			})).To(Succeed())
			return flushCounted(ctx, b)
		}
		counts, err := reconcile(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal(map[string]int{"apply": 1}))

		after := getWidget(ctx, client.ObjectKeyFromObject(w))
		counts, err = reconcile(after)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(BeEmpty())
		Expect(getWidget(ctx, client.ObjectKeyFromObject(w)).ResourceVersion).To(Equal(after.ResourceVersion))
	})

	It("answers the entries that change nothing before the first that changes, running each entry's mutators once", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		calls := map[string]int{}
		type outcome struct {
			manager string
			sent    bool
		}
		// reconcile queues managers a and b, b's condition at bStatus, and
		// returns what the result hook heard and the requests sent.
		reconcile := func(bStatus metav1.ConditionStatus) ([]outcome, map[string]int) {
			var heard []outcome
			b := batcher.New(applier, batcher.WithResultHook(func(t ssa.Target, res ssa.Result, err error) {
				Expect(err).NotTo(HaveOccurred())
				heard = append(heard, outcome{t.Manager, res.Sent})
			}))
			obj := getWidget(ctx, client.ObjectKeyFromObject(w))
			clear(calls)
			for _, m := range []struct {
				name   string
				status metav1.ConditionStatus
			}{{"a", metav1.ConditionTrue}, {"b", bStatus}} {
				set := widgets.SetCondition("By"+m.name, m.status, "Set")
				Expect(batcher.Status(b, obj, m.name, func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
					calls[m.name]++
					return set(ac, o)
				})).To(Succeed())
			}
			counts, err := flushCounted(ctx, b)
			Expect(err).NotTo(HaveOccurred())
			Expect(b.Pending()).To(BeEmpty())
			Expect(calls).To(Equal(map[string]int{"a": 1, "b": 1}), "each entry's mutators run once per Flush")
			return heard, counts
		}
		heard, counts := reconcile(metav1.ConditionTrue)
		Expect(heard).To(Equal([]outcome{{"a", true}, {"b", true}}))
		Expect(counts).To(Equal(map[string]int{"apply": 2}))
		for range 2 { // right after the applies, then with the copies the first left
			heard, counts = reconcile(metav1.ConditionTrue)
			Expect(heard).To(Equal([]outcome{{"a", false}, {"b", false}}))
			Expect(counts).To(BeEmpty())
		}
		heard, counts = reconcile(metav1.ConditionFalse)
		Expect(heard).To(Equal([]outcome{{"a", false}, {"b", true}}))
		Expect(counts).To(Equal(map[string]int{"apply": 1}))
		Expect(widgets.Conditions(getWidget(ctx, client.ObjectKeyFromObject(w)))).To(Equal(map[string]metav1.ConditionStatus{"Bya": "True", "Byb": "False"}))
	})

	It("keeps lastTransitionTime while the status holds and moves it when the status changes", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		flush := func(st metav1.ConditionStatus, reason string) *v1alpha1.Widget {
			b := batcher.New(applier)
			Expect(batcher.Status(b, getWidget(ctx, key), "readiness", widgets.SetCondition("Ready", st, reason))).To(Succeed())
			Expect(b.Flush(ctx)).To(Succeed())
			return getWidget(ctx, key)
		}
		first := flush(metav1.ConditionFalse, "Starting")
		t0 := first.Status.Conditions[0].LastTransitionTime
		Expect(first.Status.Conditions[0].ObservedGeneration).To(Equal(first.Generation))

		sleepPastSecond()
		same := flush(metav1.ConditionFalse, "StillStarting")
		Expect(same.Status.Conditions[0].Reason).To(Equal("StillStarting"))
		Expect(same.Status.Conditions[0].LastTransitionTime).To(Equal(t0))

		changed := flush(metav1.ConditionTrue, "Up")
		Expect(changed.Status.Conditions[0].LastTransitionTime.After(t0.Time)).To(BeTrue())
	})

	It("keeps what the manager owns in incremental mode and releases it in declarative mode", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("A", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("B", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())

		b = batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), "readiness", widgets.SetCondition("A", metav1.ConditionFalse, "Changed"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(map[string]metav1.ConditionStatus{"A": "False", "B": "True"}),
			"incremental: B, not touched this time, stays")

		b = batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), "readiness", widgets.SetCondition("A", metav1.ConditionFalse, "Changed"),
			ssa.Declarative)).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(map[string]metav1.ConditionStatus{"A": "False"}),
			"declarative: B, not stated, is released and deleted")
	})

	It("removes a condition its manager owns", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("A", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("B", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(batcher.Status(b, w, "readiness", widgets.RemoveCondition("A"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(map[string]metav1.ConditionStatus{"B": "True"}))
	})

	It("lands a guarded entry after a real concurrent write, re-running its mutators on fresh state", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		runs := 0
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "planner", func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
			runs++
			if runs == 1 {
				// Another writer lands between observe and apply. The mutator
				// runs in Flush's goroutine: it returns errors, Flush reports them.
				other := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("10.0.0.1"))
				if err := env.Client.Status().Apply(ctx, other, client.FieldOwner("networking")); err != nil {
					return fmt.Errorf("the concurrent write: %w", err)
				}
			}
			widgets.Status(ac).WithPhase("Planned").WithPlan(acv1alpha1.WidgetPlan().WithID("p-" + o.Status.Endpoint))
			return nil
		}, ssa.Guarded)).To(Succeed())

		counts, err := flushCounted(ctx, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(runs).To(Equal(2), "the mutator ran again on the re-read object")
		Expect(counts).To(Equal(map[string]int{"apply": 2, "get": 1}), "409, one re-read from the API server, one retry")
		got := getWidget(ctx, key)
		Expect(got.Status.Plan.ID).To(Equal("p-10.0.0.1"))
		Expect(got.Status.Endpoint).To(Equal("10.0.0.1"))
	})

	It("gives up a guarded entry after its retry budget, keeping it queued and wrapping the last 409", func(ctx context.Context) {
		applier, _, requests = newApplier(ssa.WithGuardBackoff(wait.Backoff{Steps: 3, Duration: time.Millisecond, Factor: 1}))
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		runs := 0
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "planner", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			runs++
			// Someone else writes every time, so the observed state is always stale.
			other := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithReadyReplicas(int32(runs)))
			if err := env.Client.Status().Apply(ctx, other, client.FieldOwner("busy")); err != nil {
				return errors.Join(errConcurrentWrite, err)
			}
			widgets.Status(ac).WithPhase("Planned")
			return nil
		}, ssa.Guarded)).To(Succeed())

		err := b.Flush(ctx)
		Expect(err).NotTo(MatchError(errConcurrentWrite))
		Expect(err).To(MatchError(ssa.ErrRetriesExhausted))
		Expect(apierrors.IsConflict(err)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("after 3 attempts"))
		var applyErr *ssa.Error
		Expect(errors.As(err, &applyErr)).To(BeTrue())
		Expect(applyErr.Attempts).To(Equal(3))
		Expect(runs).To(Equal(3))
		Expect(b.Pending()).To(HaveLen(1))
		Expect(getWidget(ctx, key).Status.Phase).To(BeEmpty())
	})

	It("counts applies, no-op skips, conflicts, retries and reads per manager", func(ctx context.Context) {
		reg := prometheus.NewRegistry()
		applier, _, _ = newApplier(ssa.WithRegisterer(reg))
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		// counters returns every statusapply counter summed over its series,
		// each of which must be readiness's: the only manager writing through
		// the Applier.
		counters := func() map[string]float64 {
			families, err := reg.Gather()
			Expect(err).NotTo(HaveOccurred())
			got := map[string]float64{}
			for _, f := range families {
				if f.GetType() != dto.MetricType_COUNTER {
					continue // the latency histogram and the pending gauge are checked below
				}
				for _, m := range f.GetMetric() {
					got[f.GetName()] += m.GetCounter().GetValue()
					Expect(m.GetLabel()).To(ContainElement(HaveField("GetValue()", "readiness")), f.GetName())
				}
			}
			return got
		}
		counts := func(applies, skips, conflicts, retries, reads float64) map[string]float64 {
			out := map[string]float64{}
			for name, v := range map[string]float64{
				"statusapply_applies_total":    applies,
				"statusapply_noop_skips_total": skips,
				"statusapply_conflicts_total":  conflicts,
				"statusapply_retries_total":    retries,
				"statusapply_reads_total":      reads,
			} {
				if v != 0 { // a counter no apply has touched is not gathered
					out[name] = v
				}
			}
			return out
		}

		By("an apply, then the same apply again: one apply, one no-op skip")
		for range 2 {
			b := batcher.New(applier)
			Expect(batcher.Status(b, getWidget(ctx, key), "readiness",
				widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
			Expect(b.Flush(ctx)).To(Succeed())
		}
		Expect(counters()).To(Equal(counts(1, 1, 0, 0, 0)))

		By("a guarded entry built on the object as created, before the first apply: " +
			"a 409 for the stale resourceVersion, a read, a retry that lands")
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "readiness", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithPhase("Guarded")
			return nil
		}, ssa.Guarded)).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(getWidget(ctx, key).Status.Phase).To(Equal("Guarded"))
		Expect(counters()).To(Equal(counts(2, 1, 1, 1, 1)))

		By("an entry changing a field another manager owns: a field-manager conflict, no apply")
		other := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("10.0.0.1"))
		Expect(env.Client.Status().Apply(ctx, other, client.FieldOwner("networking"))).To(Succeed())
		b = batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), "readiness", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithEndpoint("10.0.0.2")
			return nil
		})).To(Succeed())
		err := b.Flush(ctx)
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "%v", err)
		Expect(getWidget(ctx, key).Status.Endpoint).To(Equal("10.0.0.1"))
		Expect(counters()).To(Equal(counts(2, 1, 2, 1, 1)))

		By("conflicts are told apart by class; every request's latency is observed; the refused entry is pending")
		families, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		byName := map[string]*dto.MetricFamily{}
		for _, f := range families {
			byName[f.GetName()] = f
		}
		classes := map[string]float64{}
		for _, m := range byName["statusapply_conflicts_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "class" {
					classes[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
		Expect(classes).To(Equal(map[string]float64{"stale-resource-version": 1, "field-manager": 1}))
		Expect(byName["statusapply_apply_duration_seconds"].GetMetric()).To(HaveLen(1))
		Expect(byName["statusapply_apply_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleCount()).
			To(BeEquivalentTo(4), "2 applies, a stale 409 and a conflicting 409")
		Expect(byName["statusapply_pending_entries"].GetMetric()).To(HaveLen(1))
		Expect(byName["statusapply_pending_entries"].GetMetric()[0].GetGauge().GetValue()).To(BeEquivalentTo(1))
	})

	It("dry-runs a Flush: the API server's answer for each entry, nothing written, everything still queued", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		other := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("10.0.0.1"))
		Expect(env.Client.Status().Apply(ctx, other, client.FieldOwner("networking"))).To(Succeed())
		before := getWidget(ctx, key)

		b := batcher.New(applier)
		Expect(batcher.Status(b, before, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		Expect(batcher.Status(b, before, "summary", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithEndpoint("10.0.0.2") // networking's field: a conflict
			return nil
		})).To(Succeed())
		requests.Reset()
		results, err := b.DryRun(ctx)
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "the conflicting entry's error: %v", err)
		Expect(requests.Snapshot()).To(HaveKeyWithValue("apply", 2), "two dry-run applies")
		Expect(results).To(HaveLen(2))
		Expect(results[0].Target.Manager).To(Equal("readiness"))
		Expect(results[0].Err).NotTo(HaveOccurred())
		Expect(results[0].Result.Sent).To(BeTrue())
		Expect(string(results[0].Result.Intent)).To(ContainSubstring(`"type":"Ready"`))
		would, ok := results[0].Result.Object.(*v1alpha1.Widget)
		Expect(ok).To(BeTrue())
		Expect(widgets.Conditions(would)).To(Equal(widgets.CS("Ready", "True")), "the object the API server would store")
		Expect(results[1].Err).To(MatchError(cerr))

		after := getWidget(ctx, key)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing was written")
		Expect(after.ManagedFields).To(Equal(before.ManagedFields))
		Expect(b.Pending()).To(HaveLen(2), "every entry is still queued")

		By("the real Flush then writes what the dry run showed")
		err = b.Flush(ctx)
		Expect(errors.As(err, &cerr)).To(BeTrue())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("Ready", "True")))

		By("a dry run of an entry that changes nothing sends nothing")
		b = batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		requests.Reset()
		results, err = b.DryRun(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(results).To(HaveLen(1))
		Expect(results[0].Result.Sent).To(BeFalse())
		Expect(requests.Snapshot()).NotTo(HaveKey("apply"))
	})

	It("sends spec before status and holds status back when the spec apply fails", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		b := batcher.New(applier)
		var order []string
		Expect(batcher.Status(b, w, "ctrl", func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
			order = append(order, "status")
			widgets.Status(ac).WithPhase("Saw-" + o.Spec.Message)
			return nil
		})).To(Succeed())
		Expect(batcher.Object(b, w, "ctrl", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			order = append(order, "spec")
			ac.WithSpec(acv1alpha1.WidgetSpec().WithMessage("hello"))
			return nil
		})).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(order).To(Equal([]string{"spec", "status"}))
		Expect(getWidget(ctx, key).Status.Phase).To(Equal("Saw-hello"), "status built from the spec apply's response")

		// A spec apply the server refuses (it changes a field another manager
		// owns) holds the status entry back.
		other := acv1alpha1.Widget(key.Name, key.Namespace).WithSpec(acv1alpha1.WidgetSpec().WithReplicas(7))
		Expect(env.Client.Apply(ctx, other, client.FieldOwner("owner"), client.ForceOwnership)).To(Succeed())
		b = batcher.New(applier)
		cur := getWidget(ctx, key)
		Expect(batcher.Object(b, cur, "ctrl", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			ac.Spec.WithReplicas(9)
			return nil
		})).To(Succeed())
		Expect(batcher.Status(b, cur, "ctrl", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithPhase("Never")
			return nil
		})).To(Succeed())
		err := b.Flush(ctx)
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
		Expect(errors.Is(err, batcher.ErrHeldBack)).To(BeTrue())
		Expect(b.Pending()).To(HaveLen(2), "both entries stay queued")
		Expect(getWidget(ctx, key).Status.Phase).To(Equal("Saw-hello"))
	})

	It("keeps a NotFound entry queued and still lands the other objects", func(ctx context.Context) {
		w1 := createWidget(ctx, ns, "w1")
		w2 := createWidget(ctx, ns, "w2")
		Expect(env.Client.Delete(ctx, w1)).To(Succeed())

		b := batcher.New(applier)
		Expect(batcher.Status(b, w1, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		Expect(batcher.Status(b, w2, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		err := b.Flush(ctx)
		Expect(err).To(HaveOccurred())
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(ns + "/w1"))
		Expect(b.Pending()).To(ConsistOf(HaveField("Name", "w1")))
		Expect(widgets.Conditions(getWidget(ctx, client.ObjectKeyFromObject(w2)))).To(HaveKey("Ready"))
	})

	It("does not recreate a deleted object through a main-resource apply", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		Expect(env.Client.Delete(ctx, w)).To(Succeed())
		b := batcher.New(applier)
		// One entry through a generated apply configuration, one through
		// unstructured content: the two ways an intent is built.
		Expect(batcher.Object(b, w, "ctrl", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			ac.WithLabels(map[string]string{"seen": "yes"})
			return nil
		})).To(Succeed())
		Expect(batcher.Object(b, w, "ctrl-unstructured", func(ac *unstructured.Unstructured, _ *v1alpha1.Widget) error {
			return unstructured.SetNestedStringMap(ac.Object, map[string]string{"seen-unstructured": "yes"}, "metadata", "labels")
		})).To(Succeed())
		err := b.Flush(ctx)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		Expect(b.Pending()).To(HaveLen(2), "both entries failed")
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(w), &v1alpha1.Widget{}))).To(BeTrue())

		// The control: the same apply without the observed uid, as a plain
		// client sends it, creates the object again, under a new uid.
		plain := acv1alpha1.Widget(w.Name, w.Namespace).WithLabels(map[string]string{"seen": "yes"})
		Expect(env.Client.Apply(ctx, plain, client.FieldOwner("ctrl"))).To(Succeed())
		recreated := getWidget(ctx, client.ObjectKeyFromObject(w))
		Expect(recreated.Labels).To(HaveKeyWithValue("seen", "yes"))
		Expect(recreated.UID).NotTo(Equal(w.UID))
	})

	It("builds a second Flush in one reconcile on the first one's responses, without a GET", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("A", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())

		var seen []string
		Expect(batcher.Status(b, w, "readiness", func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
			for _, c := range o.Status.Conditions {
				seen = append(seen, c.Type)
			}
			return widgets.SetCondition("B", metav1.ConditionTrue, "Set")(ac, o)
		})).To(Succeed())
		counts, err := flushCounted(ctx, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal(map[string]int{"apply": 1}))
		Expect(seen).To(Equal([]string{"A"}), "the mutator observed the first Flush's result")
		Expect(widgets.Conditions(getWidget(ctx, client.ObjectKeyFromObject(w)))).To(HaveLen(2))
	})

	It("builds a second Flush of many objects on the responses it keeps packed, managers keeping what they own, without a GET", func(ctx context.Context) {
		// An Applier that remembers nothing: what each manager owns is read
		// from the kept responses' managedFields.
		forgetful, forgetfulRequests := newApplierCounted(ssa.WithOwnedCacheSize(0))
		b := batcher.New(forgetful)
		var queued []*v1alpha1.Widget
		for i := range 3 {
			w := createWidget(ctx, ns, fmt.Sprintf("w%d", i))
			queued = append(queued, w)
			Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("A", metav1.ConditionTrue, "Set"))).To(Succeed())
			Expect(batcher.Status(b, w, "networking", widgets.SetCondition("N", metav1.ConditionTrue, "Set"))).To(Succeed())
		}
		Expect(b.Flush(ctx)).To(Succeed())

		By("the next Flush names the stale objects queued first; readiness adds B incrementally")
		for _, w := range queued {
			Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("B", metav1.ConditionTrue, "Set"))).To(Succeed())
		}
		forgetfulRequests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		counts := forgetfulRequests.Snapshot()
		delete(counts, "discovery")
		Expect(counts).To(Equal(map[string]int{"apply": 3}), "built on the kept responses, nothing read again")
		for _, w := range queued {
			got := getWidget(ctx, client.ObjectKeyFromObject(w))
			Expect(widgets.Conditions(got)).To(Equal(map[string]metav1.ConditionStatus{"A": "True", "B": "True", "N": "True"}))
			Expect(ownsCondition(got, "readiness", "A")).To(BeTrue(), "readiness kept A: the kept response named it as its owner")
			Expect(ownsCondition(got, "networking", "N")).To(BeTrue())
		}
	})

	It("coalesces distinct pointers to one object and holds several kinds in one batch", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		g := &v1alpha1.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: ns}}
		Expect(env.Client.Create(ctx, g)).To(Succeed())

		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "ctrl", widgets.SetCondition("A", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(batcher.Status(b, w.DeepCopy(), "ctrl", widgets.SetCondition("B", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(batcher.Status(b, g, "ctrl", func(ac *acv1alpha1.GadgetApplyConfiguration, _ *v1alpha1.Gadget) error {
			ac.WithStatus(acv1alpha1.GadgetStatus().WithPhase("On"))
			return nil
		})).To(Succeed())
		Expect(b.Pending()).To(HaveLen(2))
		counts, err := flushCounted(ctx, b)
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal(map[string]int{"apply": 2}))
		Expect(widgets.Conditions(getWidget(ctx, client.ObjectKeyFromObject(w)))).To(HaveLen(2))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(g), g)).To(Succeed())
		Expect(g.Status.Phase).To(Equal("On"))
	})

	It("writes a built-in kind's status conditions next to the kubelet's", func(ctx context.Context) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		Expect(env.Client.Create(ctx, pod)).To(Succeed())
		kubelet := corev1ac.Pod(pod.Name, ns).WithStatus(corev1ac.PodStatus().WithConditions(
			corev1ac.PodCondition().WithType(corev1.PodReady).WithStatus(corev1.ConditionFalse)))
		Expect(env.Client.Status().Apply(ctx, kubelet, client.FieldOwner("kubelet"))).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())

		b := batcher.New(applier)
		Expect(batcher.Status(b, pod, "gate", func(ac *corev1ac.PodApplyConfiguration, _ *corev1.Pod) error {
			ac.WithStatus(corev1ac.PodStatus().WithConditions(corev1ac.PodCondition().
				WithType("example.com/Gate").WithStatus(corev1.ConditionTrue).WithLastTransitionTime(metav1.Now())))
			return nil
		})).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		var types []corev1.PodConditionType
		for _, c := range pod.Status.Conditions {
			types = append(types, c.Type)
		}
		Expect(types).To(ConsistOf(corev1.PodReady, corev1.PodConditionType("example.com/Gate")))
	})

	It("writes an unstructured object", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(w), u)).To(Succeed())

		b := batcher.New(applier)
		Expect(batcher.Status(b, u, "ctrl", func(ac, _ *unstructured.Unstructured) error {
			return unstructured.SetNestedField(ac.Object, "10.1.2.3", "status", "endpoint")
		})).To(Succeed())
		Expect(batcher.Status(b, u, "other", func(ac, _ *unstructured.Unstructured) error {
			return unstructured.SetNestedStringMap(ac.Object, map[string]string{"zone": "b"}, "status", "attributes")
		})).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		got := getWidget(ctx, client.ObjectKeyFromObject(w))
		Expect(got.Status.Endpoint).To(Equal("10.1.2.3"))
		Expect(got.Status.Attributes).To(Equal(map[string]string{"zone": "b"}))
	})

	It("re-reads an observed object whose managedFields were stripped instead of releasing what the manager owns", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		b := batcher.New(applier)
		Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("A", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())

		By("an Applier that remembers nothing of the object reads it again")
		stripped := getWidget(ctx, key)
		stripped.ManagedFields = nil
		fresh, freshRequests := newApplierCounted()
		b = batcher.New(fresh)
		Expect(batcher.Status(b, stripped, "readiness", widgets.SetCondition("B", metav1.ConditionTrue, "Set"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(freshRequests.Snapshot()).To(HaveKeyWithValue("get", 1))
		Expect(freshRequests.Snapshot()).To(HaveKeyWithValue("apply", 1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveLen(2), "A survived")

		By("the Applier that applied last needs no read: it remembers what it owns at that resourceVersion")
		stripped = getWidget(ctx, key)
		stripped.ManagedFields = nil
		b = batcher.New(fresh)
		Expect(batcher.Status(b, stripped, "readiness", widgets.SetCondition("C", metav1.ConditionTrue, "Set"))).To(Succeed())
		freshRequests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(freshRequests.Snapshot()).NotTo(HaveKey("get"))
		Expect(freshRequests.Snapshot()).To(HaveKeyWithValue("apply", 1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveLen(3), "A and B survived")
	})

	Describe("bad input", func() {
		It("is refused when queued, before any request, and loses nothing else", func(ctx context.Context) {
			w := createWidget(ctx, ns, "w1")
			requests.Reset()
			b := batcher.New(applier)
			Expect(batcher.Status(b, w, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())

			var typedNil *v1alpha1.Widget
			cases := map[string]error{
				"typed nil":  batcher.Status(b, typedNil, "m", widgets.SetCondition("X", metav1.ConditionTrue, "R")),
				"nil object": batcher.Status[client.Object](b, nil, "m", func(*unstructured.Unstructured, client.Object) error { return nil }),
				"no name": batcher.Status(b, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}, "m",
					widgets.SetCondition("X", metav1.ConditionTrue, "R")),
				"unknown kind": batcher.Status(b, &unregistered{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}, "m",
					func(*unstructured.Unstructured, *unregistered) error { return nil }),
				"empty manager":    batcher.Status(b, w, "", widgets.SetCondition("X", metav1.ConditionTrue, "R")),
				"long manager":     batcher.Status(b, w, strings.Repeat("m", 129), widgets.SetCondition("X", metav1.ConditionTrue, "R")),
				"nil mutator":      batcher.Status[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration](b, w, "m", nil),
				"non-pointer type": batcher.Status(b, w, "m", func(acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return nil }),
			}
			for name, err := range cases {
				Expect(err).To(MatchError(ssa.ErrInvalidInput), name)
			}
			Expect(requests.Total()).To(BeZero(), "requests for objects while queueing: %v", requests)
			Expect(b.Pending()).To(HaveLen(1))
			counts, err := flushCounted(ctx, b)
			Expect(err).NotTo(HaveOccurred())
			Expect(counts).To(Equal(map[string]int{"apply": 1}), "one apply, for the one entry queued")
			Expect(widgets.Conditions(getWidget(ctx, client.ObjectKeyFromObject(w)))).To(Equal(widgets.CS("Ready", "True")))
		})

		It("is refused at Flush, before the entry's request, keeping it queued and sending the rest", func(ctx context.Context) {
			w := createWidget(ctx, ns, "w1")
			b := batcher.New(applier)
			Expect(batcher.Status(b, w, "renamer", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				ac.WithName("someone-else")
				return nil
			})).To(Succeed())
			Expect(batcher.Status(b, w, "bad-condition", widgets.SetCondition("Ready", "Maybe", "Unsure"))).To(Succeed())
			Expect(batcher.Status(b, w, "bad-reason", widgets.SetCondition("Ready", metav1.ConditionTrue, "not a reason!"))).To(Succeed())
			Expect(batcher.Status(b, w, "fine", widgets.SetCondition("Fine", metav1.ConditionTrue, "Up"))).To(Succeed())

			counts, err := flushCounted(ctx, b)
			Expect(err).To(MatchError(ssa.ErrInvalidInput))
			Expect(err.Error()).To(ContainSubstring("someone-else"))
			Expect(err.Error()).To(ContainSubstring("status"))
			Expect(err.Error()).To(ContainSubstring("reason"))
			Expect(counts).To(Equal(map[string]int{"apply": 1}), "only the good entry was sent")
			Expect(b.Pending()).To(HaveLen(3))
			Expect(widgets.Conditions(getWidget(ctx, client.ObjectKeyFromObject(w)))).To(HaveKey("Fine"))
		})

		It("refuses conditions in an atomic list before sending", func(ctx context.Context) {
			g := &v1alpha1.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g1", Namespace: ns}}
			Expect(env.Client.Create(ctx, g)).To(Succeed())
			b := batcher.New(applier)
			Expect(batcher.Status(b, g, "readiness", func(ac *acv1alpha1.GadgetApplyConfiguration, o *v1alpha1.Gadget) error {
				ac.WithStatus(acv1alpha1.GadgetStatus())
				return ssa.SetCondition(&ac.Status.Conditions, o.Status.Conditions, o.Generation,
					metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up"})
			})).To(Succeed())
			counts, err := flushCounted(ctx, b)
			Expect(err).To(MatchError(ssa.ErrInvalidInput))
			Expect(err.Error()).To(ContainSubstring("atomic"))
			Expect(counts).To(BeEmpty())
			Expect(b.Pending()).To(HaveLen(1))
		})
	})
})

// unregistered is a kind no scheme knows.
type unregistered struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (u *unregistered) DeepCopyObject() runtime.Object {
	out := *u
	u.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// errConcurrentWrite marks a spec's own concurrent write failing inside a
// mutator, apart from the errors the library returns.
var errConcurrentWrite = errors.New("the concurrent write failed")
