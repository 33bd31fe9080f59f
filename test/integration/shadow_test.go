package integration

import (
	"context"
	"encoding/json"
	"errors"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"strings"
	"sync"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/internal/metricstest"
	"github.com/statusapply/statusapply/shadow"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

const (
	// legacyManager is the merge-patch writer being replaced.
	legacyManager = "legacy-controller"
	// shadowManager is the apply-based writer replacing it, run in shadow mode.
	shadowManager = "widgets-status"
	// divergenceLine is the message of shadow mode's log line.
	divergenceLine = "shadow apply diverges from the live object"
)

// condition is a Widget condition as both writers of these specs state it.
func condition(condType, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: reason, Message: message}
}

// legacyStatus writes conds and, unless empty, the phase the way the
// controller being migrated does: GET, meta.SetStatusCondition on the object
// (observedGeneration from it), JSON merge patch of /status as legacyManager,
// an Update owner.
func legacyStatus(ctx context.Context, key client.ObjectKey, phase string, conds ...metav1.Condition) error {
	w, err := widgets.Get(ctx, env.Client, key)
	if err != nil {
		return err
	}
	base := w.DeepCopy()
	for _, c := range conds {
		c.ObservedGeneration = w.Generation
		meta.SetStatusCondition(&w.Status.Conditions, c)
	}
	if phase != "" {
		w.Status.Phase = phase
	}
	return env.Client.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner(legacyManager))
}

// shadowWriter is the new writer's status function: the same conditions and
// phase as apply configurations. ssa.SetCondition keeps the observed
// lastTransitionTime while the status is unchanged and takes
// observedGeneration from the object, as the legacy writer does. It returns
// errors: it runs in Flush's goroutines.
func shadowWriter(phase string, conds ...metav1.Condition) widgets.Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
		for _, c := range conds {
			if err := ssa.SetCondition(&widgets.Status(ac).Conditions, observed.Status.Conditions, observed.Generation, c); err != nil {
				return err
			}
		}
		if phase != "" {
			widgets.Status(ac).WithPhase(phase)
		}
		return nil
	}
}

// shadowReports collects what shadow mode reports: divergences through the
// hook, and the log lines of a logger put in the context.
type shadowReports struct {
	mu          sync.Mutex
	divergences []batcher.Divergence
	lines       []string
}

func (r *shadowReports) onDivergence(_ context.Context, d batcher.Divergence) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.divergences = append(r.divergences, d)
}

// into returns ctx with a logger that records every V(0) line.
func (r *shadowReports) into(ctx context.Context) context.Context {
	return log.IntoContext(ctx, funcr.New(func(prefix, args string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.lines = append(r.lines, args)
	}, funcr.Options{}))
}

func (r *shadowReports) reported() []batcher.Divergence {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]batcher.Divergence(nil), r.divergences...)
}

// divergenceLines are the log lines of shadow mode's divergence reports.
func (r *shadowReports) divergenceLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.lines {
		if strings.Contains(l, divergenceLine) {
			out = append(out, l)
		}
	}
	return out
}

// counterSeries returns the series of the counter name in reg, keyed by their
// labels as name=value pairs in name order, without group and manager (every
// series of these specs is the shadow writer's Widgets').
func counterSeries(reg *prometheus.Registry, name string) map[string]float64 {
	out, err := metricstest.CounterSeries(reg, name, prometheus.Labels{
		"manager": shadowManager, "group": v1alpha1.SchemeGroupVersion.Group, "kind": "Widget"})
	Expect(err).NotTo(HaveOccurred())
	return out
}

// divergenceSeries names a series of statusapply_shadow_divergences_total.
func divergenceSeries(condType, field, change string) string {
	return "change=" + change + ",condition_type=" + condType + ",field=" + field
}

// apiRequests are the requests counted, discovery (the REST mapper's first
// look at the kind) left out.
func apiRequests(r *apiserver.Requests) map[string]int {
	out := r.Snapshot()
	delete(out, "discovery")
	return out
}

// managedFieldsJSON is the object's managedFields as the API server encodes
// them: equal bytes mean nothing, timestamps included, was rewritten.
func managedFieldsJSON(w *v1alpha1.Widget) string {
	b, err := json.Marshal(w.ManagedFields)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("shadow mode", func() {
	var (
		ns       string
		reg      *prometheus.Registry
		recorder *events
		applier  *ssa.Applier
		requests *apiserver.Requests
		reports  *shadowReports
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		reg = prometheus.NewRegistry()
		recorder = &events{}
		applier, _, requests = newApplier(ssa.WithRegisterer(reg), ssa.WithEventRecorder(recorder))
		reports = &shadowReports{}
	})

	shadowBatch := func() *batcher.Batch {
		mode, err := shadow.New(shadow.Options{OnDivergence: reports.onDivergence, Recorder: recorder, Registerer: reg})
		Expect(err).NotTo(HaveOccurred())
		return batcher.New(applier, mode.Option())
	}
	shadowTarget := func(key client.ObjectKey) ssa.Target {
		return ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: key.Namespace, Name: key.Name,
			Subresource: ssa.StatusSubresource, Manager: shadowManager}
	}

	It("reports nothing and writes nothing when the writers agree; with shadow off the same writer writes", func(ctx context.Context) {
		ctx = reports.into(ctx)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Expect(legacyStatus(ctx, key, "Running", condition("Ready", "Up", "replicas ready"), condition("Synced", "Done", "in sync"))).To(Succeed())
		before := getWidget(ctx, key)
		writer := shadowWriter("Running", condition("Ready", "Up", "replicas ready"), condition("Synced", "Done", "in sync"))

		b := shadowBatch()
		Expect(batcher.Status(b, before, shadowManager, writer)).To(Succeed())
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(apiRequests(requests)).To(Equal(map[string]int{"apply": 1}), "one dry run")

		after := getWidget(ctx, key)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing was written")
		Expect(managedFieldsJSON(after)).To(Equal(managedFieldsJSON(before)), "managedFields byte for byte")
		Expect(reports.reported()).To(BeEmpty(), "no divergence for the hook")
		Expect(reports.divergenceLines()).To(BeEmpty(), "no log line")
		Expect(counterSeries(reg, "statusapply_shadow_divergences_total")).To(BeEmpty(), "no divergence counted")
		Expect(counterSeries(reg, "statusapply_shadow_entries_total")).To(Equal(map[string]float64{"outcome=agreed": 1}))
		Expect(counterSeries(reg, "statusapply_applies_total")).To(BeEmpty(), "a dry run is not an apply")
		Expect(recorder.reasons).To(BeEmpty(), "no Event")
		Expect(b.Pending()).To(BeEmpty(), "a compared entry is cleared")

		By("a second Flush of the batch has nothing left to compare")
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(requests.Total()).To(BeZero())
		Expect(counterSeries(reg, "statusapply_shadow_entries_total")).To(Equal(map[string]float64{"outcome=agreed": 1}))

		By("control: a batch observing the dry run's answer would take the writer for the owner of its fields and write nothing")
		other, _ := newApplierCounted()
		dry := batcher.New(other)
		Expect(batcher.Status(dry, before, shadowManager, writer)).To(Succeed())
		results, err := dry.DryRun(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(results).To(HaveLen(1))
		answer, ok := results[0].Result.Object.(*v1alpha1.Widget)
		Expect(ok).To(BeTrue())
		Expect(answer.ResourceVersion).To(Equal(before.ResourceVersion), "a dry run's answer carries the stored resourceVersion")
		Expect(ownsCondition(answer, shadowManager, "Ready")).To(BeTrue(), "and the managedFields that were never stored")
		unsafe := batcher.New(other)
		Expect(batcher.Status(unsafe, answer, shadowManager, writer)).To(Succeed())
		Expect(unsafe.Flush(ctx)).To(Succeed())
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(before.ResourceVersion), "the write was skipped as a no-op")
		Expect(ownsCondition(getWidget(ctx, key), shadowManager, "Ready")).To(BeFalse())

		By("shadow off: the same writer, through the Applier that ran the shadow Flush, writes")
		b = batcher.New(applier)
		Expect(batcher.Status(b, before, shadowManager, writer)).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		written := getWidget(ctx, key)
		Expect(written.ResourceVersion).NotTo(Equal(before.ResourceVersion), "the control writes")
		Expect(ownsCondition(written, shadowManager, "Ready")).To(BeTrue(), "so the shadow Flush left nothing remembered")
		Expect(counterSeries(reg, "statusapply_applies_total")).To(Equal(map[string]float64{"": 1}))
	})

	It("reports a condition whose reason differs, once, as that condition and field, through every channel", func(ctx context.Context) {
		ctx = reports.into(ctx)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Expect(legacyStatus(ctx, key, "Running", condition("Ready", "Up", "replicas ready"), condition("Synced", "Done", "in sync"))).To(Succeed())
		before := getWidget(ctx, key)

		b := shadowBatch()
		Expect(batcher.Status(b, before, shadowManager,
			shadowWriter("Running", condition("Ready", "ReplicasReady", "replicas ready"), condition("Synced", "Done", "in sync")))).To(Succeed())
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed(), "a conflict with the legacy owner is divergence, not an error")
		Expect(apiRequests(requests)).To(Equal(map[string]int{"apply": 2}),
			"a dry run refused on the legacy writer's field, then one as its owner")

		reported := reports.reported()
		Expect(reported).To(HaveLen(1))
		d := reported[0]
		Expect(d.Target).To(Equal(shadowTarget(key)))
		Expect(d.ResourceVersion).To(Equal(before.ResourceVersion))
		Expect(d.Conditions).To(HaveLen(1))
		Expect(d.Conditions[0].Type).To(Equal("Ready"))
		Expect(d.Conditions[0].Change).To(Equal(batcher.Changed))
		Expect(d.Conditions[0].Fields).To(Equal([]string{"reason"}))
		Expect(d.Conditions[0].Live).To(HaveKeyWithValue("reason", "Up"))
		Expect(d.Conditions[0].Shadow).To(HaveKeyWithValue("reason", "ReplicasReady"))
		Expect(d.Fields).To(BeEmpty())
		Expect(d.Contested).To(HaveLen(1))
		Expect(d.Contested[0].Manager).To(Equal(legacyManager))
		Expect(d.Contested[0].Path.String()).To(Equal(`.status.conditions[type="Ready"].reason`))

		lines := reports.divergenceLines()
		Expect(lines).To(HaveLen(1))
		Expect(lines[0]).To(ContainSubstring(`condition Ready: reason \"Up\" -> \"ReplicasReady\"`))
		Expect(lines[0]).To(ContainSubstring(`"manager"="widgets-status"`))
		Expect(lines[0]).To(ContainSubstring("owned by " + legacyManager))
		Expect(lines[0]).NotTo(ContainSubstring("Synced"))

		Expect(counterSeries(reg, "statusapply_shadow_divergences_total")).To(Equal(map[string]float64{
			divergenceSeries("Ready", "reason", "changed"): 1,
		}))
		Expect(counterSeries(reg, "statusapply_shadow_entries_total")).To(Equal(map[string]float64{"outcome=diverged": 1}))
		Expect(counterSeries(reg, "statusapply_conflicts_total")).To(BeEmpty(), "a dry run's conflict is not counted as one")
		Expect(recorder.reasons).To(Equal([]string{shadow.ReasonDivergence}))
		Expect(recorder.notes[0]).To(ContainSubstring(`condition Ready: reason "Up" -> "ReplicasReady"`))

		after := getWidget(ctx, key)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion))
		Expect(managedFieldsJSON(after)).To(Equal(managedFieldsJSON(before)))
		Expect(after.Status.Conditions).To(Equal(before.Status.Conditions))

		By("a second Flush reports nothing again")
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(reports.reported()).To(HaveLen(1))
		Expect(counterSeries(reg, "statusapply_shadow_divergences_total")).To(Equal(map[string]float64{
			divergenceSeries("Ready", "reason", "changed"): 1,
		}))

		By("control: a plain dry run of the same entry is refused on the legacy writer's field, with no object to compare")
		dry := batcher.New(applier)
		Expect(batcher.Status(dry, before, shadowManager,
			shadowWriter("Running", condition("Ready", "ReplicasReady", "replicas ready"), condition("Synced", "Done", "in sync")))).To(Succeed())
		results, err := dry.DryRun(ctx)
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "%v", err)
		Expect(results).To(HaveLen(1))
		Expect(results[0].Result.Sent).To(BeFalse(), "the API server answered with a 409, not an object")
		Expect(counterSeries(reg, "statusapply_conflicts_total")).To(BeEmpty(), "a dry run's conflict is not counted")
	})

	It("reports a condition only the shadow writer sets as absent -> present, and not the legacy writer's other conditions", func(ctx context.Context) {
		ctx = reports.into(ctx)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Expect(legacyStatus(ctx, key, "", condition("Ready", "Up", "replicas ready"), condition("Synced", "Done", "in sync"))).To(Succeed())
		before := getWidget(ctx, key)

		b := shadowBatch()
		Expect(batcher.Status(b, before, shadowManager,
			shadowWriter("", condition("Ready", "Up", "replicas ready"), condition("Healthy", "Probed", "probes pass")))).To(Succeed())
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(apiRequests(requests)).To(Equal(map[string]int{"apply": 1}), "no field another manager owns changes: no conflict")

		reported := reports.reported()
		Expect(reported).To(HaveLen(1))
		Expect(reported[0].Conditions).To(HaveLen(1))
		c := reported[0].Conditions[0]
		Expect(c.Type).To(Equal("Healthy"))
		Expect(c.Change).To(Equal(batcher.Added))
		Expect(c.Live).To(BeNil())
		Expect(c.Shadow).To(HaveKeyWithValue("reason", "Probed"))
		Expect(reported[0].Fields).To(BeEmpty())
		Expect(reported[0].Contested).To(BeEmpty())
		lines := reports.divergenceLines()
		Expect(lines).To(HaveLen(1))
		Expect(lines[0]).To(ContainSubstring("condition Healthy: absent -> present"))

		Expect(counterSeries(reg, "statusapply_shadow_divergences_total")).To(Equal(map[string]float64{
			divergenceSeries("Healthy", "", "added"): 1,
		}))
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(before.ResourceVersion))
		Expect(meta.FindStatusCondition(getWidget(ctx, key).Status.Conditions, "Healthy")).To(BeNil())
	})

	It("reports a field other than a condition with its path and values", func(ctx context.Context) {
		ctx = reports.into(ctx)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Expect(legacyStatus(ctx, key, "Running", condition("Ready", "Up", "replicas ready"))).To(Succeed())
		before := getWidget(ctx, key)

		b := shadowBatch()
		Expect(batcher.Status(b, before, shadowManager, shadowWriter("Ready", condition("Ready", "Up", "replicas ready")))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())

		reported := reports.reported()
		Expect(reported).To(HaveLen(1))
		Expect(reported[0].Conditions).To(BeEmpty())
		Expect(reported[0].Fields).To(HaveLen(1))
		f := reported[0].Fields[0]
		Expect(f.Path.String()).To(Equal(".status.phase"))
		Expect(f.Change).To(Equal(batcher.Changed))
		Expect(f.Live).To(Equal("Running"))
		Expect(f.Shadow).To(Equal("Ready"))
		Expect(reported[0].Contested).To(ConsistOf(HaveField("Manager", legacyManager)))
		lines := reports.divergenceLines()
		Expect(lines).To(HaveLen(1))
		Expect(lines[0]).To(ContainSubstring(`.status.phase: \"Running\" -> \"Ready\"`))

		Expect(counterSeries(reg, "statusapply_shadow_divergences_total")).To(Equal(map[string]float64{
			divergenceSeries("", ".status.phase", "changed"): 1,
		}))
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(before.ResourceVersion))
	})

	It("compares with the object as stored, not with a stale observation", func(ctx context.Context) {
		ctx = reports.into(ctx)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Expect(legacyStatus(ctx, key, "", condition("Ready", "Up", "replicas ready"))).To(Succeed())
		stale := getWidget(ctx, key)
		writer := shadowWriter("", condition("Ready", "ReplicasReady", "replicas ready"))

		b := shadowBatch()
		Expect(batcher.Status(b, stale, shadowManager, writer)).To(Succeed())
		By("the legacy writer writes what the shadow writer would, after the shadow writer queued its contribution")
		Expect(legacyStatus(ctx, key, "", condition("Ready", "ReplicasReady", "replicas ready"))).To(Succeed())
		stored := getWidget(ctx, key)

		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(apiRequests(requests)).To(Equal(map[string]int{"apply": 2, "get": 1}),
			"a dry run refused on the stale resourceVersion, a read, a dry run on the object as stored")
		Expect(reports.reported()).To(BeEmpty(), "the writers agree")
		Expect(counterSeries(reg, "statusapply_shadow_entries_total")).To(Equal(map[string]float64{"outcome=agreed": 1}))
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(stored.ResourceVersion))

		By("control: the same dry run compared with the stale observation reports the legacy writer's own change")
		dry := batcher.New(applier)
		Expect(batcher.Status(dry, stale, shadowManager, writer)).To(Succeed())
		results, err := dry.DryRun(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(results).To(HaveLen(1))
		d, err := batcher.Compare(applier.TypeConverter(), shadowTarget(key), stale, results[0].Result.Object)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Conditions).To(ConsistOf(HaveField("Fields", []string{"reason"})), "a divergence that is not the shadow writer's")
	})

	// The case shadow mode is for: the legacy writer is active and the
	// writers disagree. On an observation one write behind, the dry run meets
	// the legacy owner's field-manager 409 first (ownership is checked before
	// the resourceVersion), then, forced, the stale resourceVersion: it is
	// read again and compared on the object as stored, as a real Flush's
	// guarded apply would retry. The control sends that forced, guarded dry
	// run by hand: it is refused, with no object to compare.
	It("compares a disagreeing writer with the object as stored while the legacy writer goes on", func(ctx context.Context) {
		ctx = reports.into(ctx)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "busy"))
		Expect(legacyStatus(ctx, key, "", condition("Ready", "Up", "replicas ready"))).To(Succeed())
		stale := getWidget(ctx, key)
		writer := shadowWriter("", condition("Ready", "ReplicasReady", "replicas ready"))

		b := shadowBatch()
		Expect(batcher.Status(b, stale, shadowManager, writer)).To(Succeed())
		Expect(legacyStatus(ctx, key, "", condition("Ready", "StillUp", "replicas ready"))).To(Succeed())
		stored := getWidget(ctx, key)

		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(apiRequests(requests)).To(Equal(map[string]int{"apply": 4, "get": 1}),
			"refused on the legacy field, refused stale as the owner, a read, refused on the legacy field, answered as the owner")
		reported := reports.reported()
		Expect(reported).To(HaveLen(1))
		Expect(reported[0].ResourceVersion).To(Equal(stored.ResourceVersion))
		Expect(reported[0].Conditions).To(ConsistOf(HaveField("Fields", []string{"reason"})))
		Expect(reported[0].Conditions[0].Live).To(HaveKeyWithValue("reason", "StillUp"))
		Expect(reported[0].Conditions[0].Shadow).To(HaveKeyWithValue("reason", "ReplicasReady"))
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(stored.ResourceVersion), "a shadow batch writes nothing")

		By("control: the forced dry run guarded by the stale observation is refused")
		ac := acv1alpha1.Widget(key.Name, key.Namespace).WithResourceVersion(stale.ResourceVersion).
			WithStatus(acv1alpha1.WidgetStatus().WithConditions(metav1ac.Condition().WithType("Ready").WithStatus(metav1.ConditionTrue).
				WithReason("ReplicasReady").WithMessage("replicas ready").WithLastTransitionTime(metav1.Now())))
		err := env.Client.Status().Apply(ctx, ac, client.FieldOwner(shadowManager), client.ForceOwnership, client.DryRunAll)
		Expect(conflicts.Classify(err)).To(Equal(conflicts.ClassStale), "%v", err)
	})

	It("keeps an entry that cannot be compared queued, returns its error and compares the others", func(ctx context.Context) {
		ctx = reports.into(ctx)
		k1 := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		k2 := client.ObjectKeyFromObject(createWidget(ctx, ns, "w2"))
		Expect(legacyStatus(ctx, k2, "Running")).To(Succeed())
		errBroken := errors.New("the shadow writer is broken")

		b := shadowBatch()
		Expect(batcher.Status(b, getWidget(ctx, k1), shadowManager, func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error {
			return errBroken
		})).To(Succeed())
		Expect(batcher.Status(b, getWidget(ctx, k2), shadowManager, shadowWriter("Done"))).To(Succeed())
		err := b.Flush(ctx)
		Expect(err).To(MatchError(errBroken))
		Expect(err.Error()).To(ContainSubstring(ns + "/w1"))
		Expect(b.Pending()).To(Equal([]ssa.Target{shadowTarget(k1)}))
		Expect(reports.reported()).To(ConsistOf(HaveField("Target", shadowTarget(k2))))
		Expect(counterSeries(reg, "statusapply_shadow_entries_total")).To(Equal(map[string]float64{
			"outcome=diverged": 1, "outcome=failed": 1,
		}))
	})

	It("remembers nothing from a dry run's answer that a later entry of the same object was built on", func(ctx context.Context) {
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Expect(env.Client.Status().Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).
			WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("10.0.0.1")), client.FieldOwner("networking"))).To(Succeed())
		obs := getWidget(ctx, key)
		endpoint := fieldpath.MakePathOrDie("status", "endpoint")
		fresh, _ := newApplierCounted(ssa.WithConflictPolicy("summary",
			conflicts.TakeDeclared(conflicts.Declaration{Paths: []fieldpath.Path{endpoint}})))
		setEndpoint := func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithEndpoint("10.0.0.2")
			return nil
		}

		By("a dry run whose first entry takes networking's endpoint by force, and whose second is networking's")
		dry := batcher.New(fresh)
		Expect(batcher.Status(dry, obs, "summary", setEndpoint)).To(Succeed())
		Expect(batcher.Status(dry, obs, "networking", widgets.SetCondition("Healthy", metav1.ConditionTrue, "Ok"))).To(Succeed())
		results, err := dry.DryRun(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(results).To(HaveLen(2))
		Expect(results[0].Result.Taken).To(ConsistOf(HaveField("Manager", "networking")))
		answer, ok := results[0].Result.Object.(*v1alpha1.Widget)
		Expect(ok).To(BeTrue())
		Expect(answer.ResourceVersion).To(Equal(obs.ResourceVersion),
			"the second entry was built on an answer at the stored resourceVersion, where networking owns no endpoint")
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(obs.ResourceVersion))

		By("networking's real Flush on the stored object still starts from what it owns there")
		b := batcher.New(fresh)
		Expect(batcher.Status(b, obs, "networking", widgets.SetCondition("Healthy", metav1.ConditionTrue, "Ok"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		after := getWidget(ctx, key)
		Expect(after.Status.Endpoint).To(Equal("10.0.0.1"),
			"remembering the answer's ownership at that resourceVersion would have released the endpoint, and the API server deleted it")
		Expect(widgets.Conditions(after)).To(Equal(widgets.CS("Healthy", "True")))
	})

	It("ssa.DryRunAsOwner, which shadow mode sends, answers as the owner of the contested fields and stores nothing; ssa.DryRun meets the conflict", func(ctx context.Context) {
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		Expect(legacyStatus(ctx, key, "Running")).To(Succeed())
		before := getWidget(ctx, key)
		build := ssa.Build{Func: func(intent *unstructured.Unstructured, _ client.Object) (ssa.Built, error) {
			return ssa.Built{}, unstructured.SetNestedField(intent.Object, "Done", "status", "phase")
		}}

		requests.Reset()
		res, err := applier.Apply(ctx, shadowTarget(key), before, build, ssa.DryRunAsOwner, ssa.OnConflict(conflicts.Yield()))
		Expect(err).NotTo(HaveOccurred())
		Expect(apiRequests(requests)).To(Equal(map[string]int{"apply": 2}), "a dry run refused on the legacy field, then one forced")
		Expect(res.Sent).To(BeTrue())
		Expect(res.Taken).To(HaveLen(1), "the yielding policy is not consulted")
		Expect(res.Taken[0].Manager).To(Equal(legacyManager))
		Expect(res.Taken[0].Path.String()).To(Equal(".status.phase"))
		Expect(res.Object.(*v1alpha1.Widget).Status.Phase).To(Equal("Done"), "the answer as the owner")
		after := getWidget(ctx, key)
		Expect(after.Status.Phase).To(Equal("Running"))
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion))
		Expect(managedFieldsJSON(after)).To(Equal(managedFieldsJSON(before)))
		Expect(counterSeries(reg, "statusapply_applies_total")).To(BeEmpty(), "a dry run is not counted as an apply")

		By("control: ssa.DryRun alone meets the legacy writer's conflict")
		_, err = applier.Apply(ctx, shadowTarget(key), before, build, ssa.DryRun)
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "%v", err)
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(before.ResourceVersion))
	})

	It("runs under ctrlbatch.Wrap: the reconcile's batch compares and writes nothing", func(ctx context.Context) {
		ctx = reports.into(ctx)
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))
		r := ctrlreconcile.Func(func(ctx context.Context, req ctrlreconcile.Request) (ctrlreconcile.Result, error) {
			// The legacy writer writes, the shadow writer is compared.
			if err := legacyStatus(ctx, req.NamespacedName, "Running", condition("Ready", "Up", "replicas ready")); err != nil {
				return ctrlreconcile.Result{}, err
			}
			w, err := widgets.Get(ctx, env.Client, req.NamespacedName)
			if err != nil {
				return ctrlreconcile.Result{}, err
			}
			return ctrlreconcile.Result{}, batcher.Status(ctrlbatch.FromContext(ctx), w, shadowManager,
				shadowWriter("Running", condition("Ready", "Up", "replicas ready"), condition("Healthy", "Probed", "probes pass")))
		})
		mode, err := shadow.New(shadow.Options{OnDivergence: reports.onDivergence, Registerer: reg})
		Expect(err).NotTo(HaveOccurred())
		wrapped := ctrlbatch.Wrap(applier, r, ctrlbatch.WithBatchOptions(mode.Option()))
		res, err := wrapped.Reconcile(ctx, ctrlreconcile.Request{NamespacedName: key})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(ctrlreconcile.Result{}), "divergence does not requeue")
		written := getWidget(ctx, key)

		Expect(reports.reported()).To(ConsistOf(HaveField("Conditions", ConsistOf(HaveField("Type", "Healthy")))))
		Expect(ownsCondition(written, shadowManager, "Ready")).To(BeFalse())
		Expect(meta.FindStatusCondition(written.Status.Conditions, "Healthy")).To(BeNil())
		Expect(counterSeries(reg, "statusapply_shadow_divergences_total")).To(Equal(map[string]float64{
			divergenceSeries("Healthy", "", "added"): 1,
		}))
	})
})
