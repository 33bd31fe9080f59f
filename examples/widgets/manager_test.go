package widgets

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/test/suite"
)

// settle is how long a converged Widget must stay unwritten to count as
// stable: several rounds of the controllers waking each other up.
const settle = 3 * time.Second

var _ = Describe("The widgets manager", func() {
	var (
		ns      string
		history *planHistory
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		history = watchPlans(ns)
		startManager(ns)
	})

	// convergedWidget waits until every controller has caught up with key's
	// current generation and returns the Widget.
	convergedWidget := func(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
		GinkgoHelper()
		var w *v1alpha1.Widget
		Eventually(func(g Gomega) {
			w = &v1alpha1.Widget{}
			g.Expect(env.Client.Get(ctx, key, w)).To(Succeed())
			g.Expect(converged(w)).To(BeTrue(), "status %+v", w.Status)
		}).Should(Succeed())
		return w
	}

	// onePlanEver checks that the watch saw w's plan and no other, up to w.
	onePlanEver := func(w *v1alpha1.Widget) {
		GinkgoHelper()
		Eventually(func() bool { return history.Seen(w.Name, w.ResourceVersion) }).Should(BeTrue())
		Expect(history.IDs(w.Name)).To(Equal([]string{w.Status.Plan.ID}), "plans seen on %s", w.Name)
	}

	It("gives a new Widget every writer's conditions and fields, each owned by its writer", func(ctx context.Context) {
		reads := map[string]float64{}
		for _, m := range []string{ReadinessManager, NetworkingManager} {
			reads[m] = counterOf("statusapply_reads_total", m)
		}
		w := convergedWidget(ctx, createWidget(ctx, ns, "w1", 3))

		Expect(findCondition(w, ConditionReady)).To(PointTo(MatchFields(IgnoreExtras, Fields{
			"Status": Equal(metav1.ConditionTrue), "Reason": Equal(ReasonReplicasAvailable),
		})))
		Expect(findCondition(w, ConditionReachable)).To(PointTo(MatchFields(IgnoreExtras, Fields{
			"Status": Equal(metav1.ConditionTrue), "Reason": Equal(ReasonEndpointAssigned),
		})))
		Expect(findCondition(w, ConditionPlanned)).To(PointTo(MatchFields(IgnoreExtras, Fields{
			"Status": Equal(metav1.ConditionTrue), "Message": Equal("plan " + w.Status.Plan.ID),
		})))
		Expect(w.Status.Conditions).To(HaveLen(3))
		Expect(w.Status.ReadyReplicas).To(Equal(int32(3)))
		Expect(w.Status.ObservedGeneration).To(Equal(w.Generation))
		Expect(w.Status.Endpoint).To(Equal(Endpoint(ns, "w1")))
		Expect(w.Status.Plan.ID).NotTo(BeEmpty())
		Expect(w.Status.Plan.CreatedBy).To(Equal(PlannerManager))
		Expect(w.Status.Plan.Steps).To(Equal(planSteps()))
		onePlanEver(w)

		owners := statusOwners(w)
		Expect(owners).To(HaveLen(3), "status managers: %v", w.ManagedFields)
		owns := map[string][]string{
			ReadinessManager:  {ConditionReady},
			NetworkingManager: {ConditionReachable},
			PlannerManager:    {ConditionPlanned},
		}
		fields := map[string][]fieldpath.Path{
			ReadinessManager:  {statusPath("readyReplicas"), statusPath("observedGeneration")},
			NetworkingManager: {statusPath("endpoint")},
			PlannerManager:    {statusPath("plan", "id"), statusPath("plan", "createdBy"), statusPath("plan", "steps")},
		}
		for manager, conds := range owns {
			Expect(owners).To(HaveKey(manager))
			Expect(owners[manager]).To(HaveLen(1), "%s has status entries other than Apply", manager)
			applied := owners[manager][metav1.ManagedFieldsOperationApply]
			Expect(applied).NotTo(BeNil(), "%s has no status Apply entry", manager)
			for _, other := range []string{ConditionReady, ConditionReachable, ConditionPlanned} {
				Expect(applied.Has(conditionPath(other))).To(Equal(other == conds[0]),
					"%s owning condition %s", manager, other)
			}
			for _, f := range fields[manager] {
				Expect(applied.Has(f)).To(BeTrue(), "%s owns %s", manager, f)
			}
		}
		for _, mf := range w.ManagedFields {
			if mf.Subresource == "status" {
				Expect(mf.Operation).To(Equal(metav1.ManagedFieldsOperationApply), "status entry of %s", mf.Manager)
			}
		}

		// The unguarded writers never read from the API server: the cached
		// objects carry managedFields, from which statusapply extracts what
		// each manager owns.
		for m, before := range reads {
			Expect(counterOf("statusapply_reads_total", m)).To(Equal(before), "%s read the Widget from the API server", m)
		}
	})

	It("flips Ready to False when replicas go to 0 and leaves the other writers' conditions and the plan alone", func(ctx context.Context) {
		key := createWidget(ctx, ns, "scaled", 2)
		before := convergedWidget(ctx, key)

		patch := client.MergeFrom(before.DeepCopy())
		scaled := before.DeepCopy()
		scaled.Spec.Replicas = 0
		Expect(env.Client.Patch(ctx, scaled, patch)).To(Succeed())
		Expect(scaled.Generation).To(Equal(before.Generation + 1))

		after := convergedWidget(ctx, key)
		Expect(findCondition(after, ConditionReady)).To(PointTo(MatchFields(IgnoreExtras, Fields{
			"Status": Equal(metav1.ConditionFalse), "Reason": Equal(ReasonNoReplicas),
		})))
		Expect(after.Status.ReadyReplicas).To(BeZero())
		for _, t := range []string{ConditionReachable, ConditionPlanned} {
			was, is := findCondition(before, t), findCondition(after, t)
			Expect(is.Status).To(Equal(metav1.ConditionTrue), t)
			Expect(is.Reason).To(Equal(was.Reason), t)
			Expect(is.LastTransitionTime).To(Equal(was.LastTransitionTime), "%s did not transition", t)
			Expect(is.ObservedGeneration).To(Equal(after.Generation), "%s is stamped with the new generation", t)
		}
		Expect(after.Status.Plan).To(Equal(before.Status.Plan))
		Expect(after.Status.Endpoint).To(Equal(before.Status.Endpoint))
		onePlanEver(after)
	})

	It("stops writing once converged, even for the controller without a predicate", func(ctx context.Context) {
		key := createWidget(ctx, ns, "quiet", 1)
		w := convergedWidget(ctx, key)
		managers := []string{ReadinessManager, NetworkingManager, PlannerManager}

		// Sync point: no controller is reconciling or has a reconcile queued,
		// so each has acted on every event it was given, the events of its
		// own writes and the others' included; from here only a new event
		// can make one write.
		waitIdle(managers...)
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(w.ResourceVersion), "a converged Widget was written again")
		applies := map[string]float64{}
		for _, m := range managers {
			applies[m] = counterOf("statusapply_applies_total", m)
		}
		skips := counterOf("statusapply_noop_skips_total", NetworkingManager)
		flushes := func() float64 { // one per networking reconcile: an apply or a no-op skip
			return counterOf("statusapply_applies_total", NetworkingManager) + counterOf("statusapply_noop_skips_total", NetworkingManager)
		}
		before := flushes()

		// A metadata-only change wakes the networking controller (it has no
		// predicate), which finds nothing to change and sends nothing. The
		// patch is guarded by the converged resourceVersion: it would fail
		// had anything written the Widget since.
		touched := w.DeepCopy()
		touched.Annotations = map[string]string{"example.com/touched": fmt.Sprint(time.Now().UnixNano())}
		Expect(env.Client.Patch(ctx, touched, client.MergeFromWithOptions(w, client.MergeFromWithOptimisticLock{}))).To(Succeed())
		Expect(touched.Generation).To(Equal(w.Generation))

		// The known event: the networking controller reconciled again. Then
		// the next sync point, after which nothing is left to act on.
		Eventually(flushes).Should(BeNumerically(">", before), "the networking controller did not reconcile the touched Widget")
		waitIdle(managers...)
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(touched.ResourceVersion), "the touched Widget was written again")
		for _, m := range managers {
			Expect(counterOf("statusapply_applies_total", m)).To(Equal(applies[m]), "%s sent an apply", m)
		}
		Expect(counterOf("statusapply_noop_skips_total", NetworkingManager)).To(BeNumerically(">", skips))
	})

	It("converges two Widgets created at the same time, each with its own endpoint and plan", func(ctx context.Context) {
		names := []string{"left", "right"}
		done := make(chan client.ObjectKey, len(names))
		for _, name := range names {
			go func() {
				defer GinkgoRecover()
				done <- createWidget(ctx, ns, name, 1)
			}()
		}
		keys := make([]client.ObjectKey, len(names))
		for i := range names {
			Eventually(done).Should(Receive(&keys[i]))
		}

		var widgets []*v1alpha1.Widget
		for _, key := range keys {
			widgets = append(widgets, convergedWidget(ctx, key))
		}
		Expect(widgets[0].Status.Endpoint).NotTo(Equal(widgets[1].Status.Endpoint))
		Expect(widgets[0].Status.Plan.ID).NotTo(Equal(widgets[1].Status.Plan.ID))
		for _, w := range widgets {
			Expect(w.Status.Endpoint).To(Equal(Endpoint(ns, w.Name)))
			onePlanEver(w)
		}
		Consistently(func() []string {
			var rvs []string
			for _, key := range keys {
				rvs = append(rvs, getWidget(ctx, key).ResourceVersion)
			}
			return rvs
		}, settle, 200*time.Millisecond).Should(Equal([]string{widgets[0].ResourceVersion, widgets[1].ResourceVersion}))
	})
})
