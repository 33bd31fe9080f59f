package conflicts

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/test/suite"

	"github.com/statusapply/statusapply/ownership"
)

var _ = Describe("field-manager conflicts from a real API server", func() {
	var key client.ObjectKey

	BeforeEach(func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: ns}}
		Expect(env.Client.Create(ctx, w)).To(Succeed())
		key = client.ObjectKeyFromObject(w)
	})

	apply := func(ctx context.Context, manager string, ac *acv1alpha1.WidgetApplyConfiguration, opts ...client.SubResourceApplyOption) error {
		return env.Client.Status().Apply(ctx, ac, append([]client.SubResourceApplyOption{client.FieldOwner(manager)}, opts...)...)
	}

	// legacyPatch sets conditions and the phase the way a pre-apply controller
	// does: a merge patch of status with a field owner, which the server
	// records as an Update entry.
	legacyPatch := func(ctx context.Context, phase string, conds ...cond) {
		GinkgoHelper()
		w := getWidget(ctx, key)
		base := w.DeepCopy()
		for _, c := range conds {
			w.Status.Conditions = append(w.Status.Conditions, c.condition())
		}
		if phase != "" {
			w.Status.Phase = phase
		}
		Expect(env.Client.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner("legacy"))).To(Succeed())
	}

	// predictThenApply predicts the conflicts of an apply, sends it, and
	// returns both the prediction and the server's parsed report.
	predictThenApply := func(ctx context.Context, manager string, ac *acv1alpha1.WidgetApplyConfiguration, opts ...conflicts.PredictOption) (predicted, reported []conflicts.Conflict, err error) {
		GinkgoHelper()
		predicted, perr := conflicts.Predict(getWidget(ctx, key), typeConverter(), manager, "status", unstructuredOf(ac), opts...)
		Expect(perr).NotTo(HaveOccurred())
		err = apply(ctx, manager, ac)
		if err != nil && conflicts.Classify(err) == conflicts.ClassFieldManagerConflict {
			reported, perr = conflicts.Parse(err)
			Expect(perr).NotTo(HaveOccurred())
		}
		return predicted, reported, err
	}

	It("reads an Apply owner's conflict and predicts it", func(ctx context.Context) {
		Expect(apply(ctx, "readiness", statusIntent(key, cond{"Ready", metav1.ConditionTrue, "Up"}))).To(Succeed())

		predicted, reported, err := predictThenApply(ctx, "network", statusIntent(key, cond{"Ready", metav1.ConditionFalse, "Down"}))
		Expect(err).To(HaveOccurred())
		AddReportEntry("server message", err.Error())
		Expect(apierrors.IsConflict(err)).To(BeTrue())
		Expect(conflicts.Classify(err)).To(Equal(conflicts.ClassFieldManagerConflict))

		want := []record{
			{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].message`, "Ready"},
			{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].reason`, "Ready"},
			{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].status`, "Ready"},
		}
		Expect(records(reported)).To(ConsistOf(want))
		Expect(records(predicted)).To(ConsistOf(want))

		// The message fallback reads the same records as the causes.
		var se *apierrors.StatusError
		Expect(errors.As(err, &se)).To(BeTrue())
		fromMessage, perr := conflicts.ParseMessage(se.ErrStatus.Message)
		Expect(perr).NotTo(HaveOccurred())
		Expect(records(fromMessage)).To(ConsistOf(want))

		typed, ok := conflicts.FromError(err, "network", widgetRef(key))
		Expect(ok).To(BeTrue())
		Expect(typed.Error()).To(HavePrefix("manager network cannot change 3 fields of Widget " + key.Namespace + "/w1:"))
		Expect(typed.Error()).To(ContainSubstring(`- .status.conditions[type="Ready"].status: owned by readiness (Apply, subresource status)`))
		Expect(apierrors.IsConflict(typed)).To(BeTrue())
	})

	It("shares ownership instead of conflicting when the value is the same", func(ctx context.Context) {
		Expect(apply(ctx, "readiness", statusIntent(key, cond{"Ready", metav1.ConditionTrue, "Up"}))).To(Succeed())
		legacyPatch(ctx, "Running", cond{"Synced", metav1.ConditionTrue, "Done"})

		ac := statusIntent(key, cond{"Ready", metav1.ConditionTrue, "Up"}, cond{"Synced", metav1.ConditionTrue, "Done"})
		ac.Status.WithPhase("Running")
		predicted, _, err := predictThenApply(ctx, "network", ac)
		Expect(predicted).To(BeEmpty())
		Expect(err).NotTo(HaveOccurred())
	})

	It("reads an Update owner's conflict with its apiVersion and predicts it", func(ctx context.Context) {
		legacyPatch(ctx, "", cond{"Ready", metav1.ConditionTrue, "Up"})

		predicted, reported, err := predictThenApply(ctx, "network", statusIntent(key, cond{"Ready", metav1.ConditionFalse, "Up"}))
		Expect(err).To(HaveOccurred())
		AddReportEntry("server message", err.Error())
		want := []record{{"legacy", "Update", "status", "demo.statusapply.io/v1alpha1", `.status.conditions[type="Ready"].status`, "Ready"}}
		Expect(records(reported)).To(Equal(want))
		Expect(records(predicted)).To(Equal(want))

		typed, ok := conflicts.FromError(err, "network", widgetRef(key))
		Expect(ok).To(BeTrue())
		Expect(typed.Error()).To(Equal(`manager network cannot change .status.conditions[type="Ready"].status of Widget ` +
			key.Namespace + `/w1: owned by legacy (Update, subresource status)`))
	})

	It("reads the before-first-apply owner of an untracked object and predicts it", func(ctx context.Context) {
		legacyPatch(ctx, "Running", cond{"Ready", metav1.ConditionTrue, "Up"})
		// Clearing managedFields leaves an object the server does not track, as
		// objects written before field management were.
		w := getWidget(ctx, key)
		Expect(env.Client.Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"managedFields":[{}]}}`)))).To(Succeed())
		Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())

		_, err := conflicts.Predict(getWidget(ctx, key), typeConverter(), "network", "status", unstructuredOf(statusIntent(key)))
		Expect(err).To(MatchError(ownership.ErrNoManagedFields))

		predicted, reported, err := predictThenApply(ctx, "network", statusIntent(key, cond{"Ready", metav1.ConditionFalse, "Up"}), conflicts.AssumeUntracked())
		Expect(err).To(HaveOccurred())
		AddReportEntry("server message", err.Error())
		want := []record{{ownership.BeforeFirstApplyManager, "Update", "status", "demo.statusapply.io/v1alpha1", `.status.conditions[type="Ready"].status`, "Ready"}}
		Expect(records(reported)).To(Equal(want))
		Expect(records(predicted)).To(Equal(want))
	})

	It("reads several conflicts with several owners in one response", func(ctx context.Context) {
		Expect(apply(ctx, "readiness", statusIntent(key, cond{"Ready", metav1.ConditionTrue, "Up"}))).To(Succeed())
		legacyPatch(ctx, "Running", cond{"Synced", metav1.ConditionTrue, "Done"})

		ac := statusIntent(key)
		ac.Status.WithConditions(cond{"Ready", metav1.ConditionFalse, "Up"}.ac(), cond{"Synced", metav1.ConditionFalse, "Done"}.ac()).
			WithPhase("Failed")
		predicted, reported, err := predictThenApply(ctx, "network", ac)
		Expect(err).To(HaveOccurred())
		AddReportEntry("server message", err.Error())
		Expect(err.Error()).To(HavePrefix("Apply failed with 3 conflicts: "))
		want := []record{
			{"legacy", "Update", "status", "demo.statusapply.io/v1alpha1", `.status.conditions[type="Synced"].status`, "Synced"},
			{"legacy", "Update", "status", "demo.statusapply.io/v1alpha1", `.status.phase`, ""},
			{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].status`, "Ready"},
		}
		Expect(records(reported)).To(ConsistOf(want))
		Expect(records(predicted)).To(Equal(want), "sorted by owner, then path")

		var se *apierrors.StatusError
		Expect(errors.As(err, &se)).To(BeTrue())
		fromMessage, perr := conflicts.ParseMessage(se.ErrStatus.Message)
		Expect(perr).NotTo(HaveOccurred())
		Expect(records(fromMessage)).To(ConsistOf(want))
	})

	It("classifies a stale resourceVersion as stale, not as a field conflict", func(ctx context.Context) {
		old := getWidget(ctx, key).ResourceVersion
		Expect(apply(ctx, "readiness", statusIntent(key, cond{"Ready", metav1.ConditionTrue, "Up"}))).To(Succeed())

		err := apply(ctx, "network", statusIntent(key, cond{"Reachable", metav1.ConditionTrue, "Up"}).WithResourceVersion(old))
		Expect(err).To(HaveOccurred())
		AddReportEntry("server message", err.Error())
		Expect(apierrors.IsConflict(err)).To(BeTrue())
		Expect(conflicts.Classify(err)).To(Equal(conflicts.ClassStale))
		Expect(conflicts.Classify(errors.Join(errors.New("flush"), err))).To(Equal(conflicts.ClassStale))
		_, ok := conflicts.FromError(err, "network", widgetRef(key))
		Expect(ok).To(BeFalse())
		_, perr := conflicts.Parse(err)
		Expect(perr).To(MatchError(conflicts.ErrNotFieldConflict))
		d, ok := conflicts.RequeueAfter(err)
		Expect(ok).To(BeTrue())
		Expect(d).To(Equal(conflicts.StaleRetryAfter))
	})

	It("yields: re-applies without the contested condition and leaves other writers alone", func(ctx context.Context) {
		Expect(apply(ctx, "readiness", statusIntent(key, cond{"Ready", metav1.ConditionTrue, "Up"}))).To(Succeed())
		Expect(apply(ctx, "control", statusIntent(key, cond{"Reachable", metav1.ConditionTrue, "Up"}))).To(Succeed())

		intent := func() *acv1alpha1.WidgetApplyConfiguration {
			ac := statusIntent(key, cond{"Ready", metav1.ConditionFalse, "Down"}, cond{"Degraded", metav1.ConditionTrue, "Slow"})
			ac.Status.WithEndpoint("10.0.0.1")
			return ac
		}
		err := apply(ctx, "network", intent())
		Expect(conflicts.Classify(err)).To(Equal(conflicts.ClassFieldManagerConflict))
		found, perr := conflicts.Parse(err)
		Expect(perr).NotTo(HaveOccurred())

		d := conflicts.Yield().Decide(found)
		Expect(d.Action).To(Equal(conflicts.ActionRetryWithout))
		u := unstructuredOf(intent())
		removed, rerr := conflicts.RemoveFields(u.Object, appliedFields(getWidget(ctx, key), "network"), d.Paths...)
		Expect(rerr).NotTo(HaveOccurred())
		Expect(removed).To(HaveLen(1))
		Expect(removed[0].String()).To(Equal(`.status.conditions[type="Ready"]`))

		Expect(env.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("network"))).To(Succeed())

		w := getWidget(ctx, key)
		Expect(conditionOf(w, "Ready").Status).To(Equal(metav1.ConditionTrue), "the owner keeps its value")
		Expect(conditionOf(w, "Reachable").Status).To(Equal(metav1.ConditionTrue))
		Expect(conditionOf(w, "Degraded").Status).To(Equal(metav1.ConditionTrue), "the writer's other fields land")
		Expect(w.Status.Endpoint).To(Equal("10.0.0.1"))
		Expect(ownsCondition(w, "readiness", "Ready")).To(BeTrue())
		Expect(ownsCondition(w, "control", "Reachable")).To(BeTrue())
		Expect(ownsCondition(w, "network", "Degraded")).To(BeTrue())
		Expect(ownsCondition(w, "network", "Ready")).To(BeFalse())
	})

	It("takes exactly the declared condition with force and refuses undeclared ones", func(ctx context.Context) {
		Expect(apply(ctx, "control", statusIntent(key,
			cond{"Ready", metav1.ConditionTrue, "Up"}, cond{"Reachable", metav1.ConditionTrue, "Up"}))).To(Succeed())
		policy := conflicts.TakeDeclared(conflicts.Declaration{ConditionTypes: []string{"Ready"}})

		// Contesting an undeclared condition too: nothing is forced.
		err := apply(ctx, "network", statusIntent(key, cond{"Ready", metav1.ConditionFalse, "Down"}, cond{"Reachable", metav1.ConditionFalse, "Down"}))
		found, perr := conflicts.Parse(err)
		Expect(perr).NotTo(HaveOccurred())
		d := policy.Decide(found)
		Expect(d.Action).To(Equal(conflicts.ActionFail))
		Expect(d.Conflicts).NotTo(BeEmpty())
		for _, c := range d.Conflicts {
			Expect(c.ConditionType).To(Equal("Reachable"))
		}

		// Contesting only the declared condition: force, and take just that.
		ac := func() *acv1alpha1.WidgetApplyConfiguration {
			return statusIntent(key, cond{"Ready", metav1.ConditionFalse, "Down"})
		}
		err = apply(ctx, "network", ac())
		found, perr = conflicts.Parse(err)
		Expect(perr).NotTo(HaveOccurred())
		d = policy.Decide(found)
		Expect(d.Action).To(Equal(conflicts.ActionForce))
		Expect(apply(ctx, "network", ac(), client.ForceOwnership)).To(Succeed())

		w := getWidget(ctx, key)
		Expect(conditionOf(w, "Ready").Status).To(Equal(metav1.ConditionFalse))
		Expect(conditionOf(w, "Reachable").Status).To(Equal(metav1.ConditionTrue))
		Expect(ownsCondition(w, "network", "Ready")).To(BeTrue())
		Expect(ownsCondition(w, "control", "Reachable")).To(BeTrue())
	})
})
