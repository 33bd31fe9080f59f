package integration

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("writers whose managedFields were lost", func() {
	const (
		mutator = "readiness"  // batcher.Status
		editor  = "networking" // batcher.EditStatus
	)
	var (
		ns       string
		key      client.ObjectKey
		reg      *prometheus.Registry
		recorder *events
		reports  *shadowReports
		applier  *ssa.Applier
		requests *apiserver.Requests
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		reg = prometheus.NewRegistry()
		recorder = &events{}
		reports = &shadowReports{}
		applier, _, requests = newApplier(ssa.WithRegisterer(reg), ssa.WithEventRecorder(recorder))
		key = client.ObjectKeyFromObject(createWidget(ctx, ns, "w1"))

		By("each writer owns its condition, then managedFields are cleared")
		setReady(ctx, applier, key, metav1.ConditionTrue)
		edit(ctx, applier, key, markCondition("Reachable", metav1.ConditionTrue))
		w := getWidget(ctx, key)
		Expect(ownsCondition(w, mutator, "Ready")).To(BeTrue())
		Expect(ownsCondition(w, editor, "Reachable")).To(BeTrue())
		Expect(widgets.ClearManagedFields(ctx, env.Client, key)).To(Succeed())
		Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())
	})

	// recoveries reads statusapply_ownership_recoveries_total per manager.
	recoveries := func() map[string]float64 {
		families, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		got := map[string]float64{}
		for _, f := range families {
			if f.GetName() != "statusapply_ownership_recoveries_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "manager" {
						got[l.GetValue()] += m.GetCounter().GetValue()
					}
				}
			}
		}
		return got
	}
	heldBeforeFirstApply := func(ctx context.Context) []string {
		o, err := ownership.Inspect(getWidget(ctx, key))
		if errors.Is(err, ownership.ErrNoManagedFields) {
			return nil // every field released: nothing is left to own
		}
		Expect(err).NotTo(HaveOccurred())
		return o.ConditionTypes()[ownership.BeforeFirstApplyManager]
	}

	It("takes back the Mutator's and the Edit's conditions, so that their removals delete them, and says so", func(ctx context.Context) {
		ctx = reports.into(ctx)
		By("the Mutator writes again: its apply makes the API server attribute every field to before-first-apply")
		requests.Reset()
		setReady(ctx, applier, key, metav1.ConditionTrue)
		Expect(apiRequests(requests)).To(Equal(map[string]int{"get": 1, "apply": 1, "patch": 1}),
			"a read for the missing managedFields, the apply, the managedFields rewrite")
		w := getWidget(ctx, key)
		o, err := ownership.Inspect(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Owners(ownership.ConditionPath("Ready"))).To(ConsistOf(HaveField("Manager", mutator)), "Ready is the Mutator's alone")
		Expect(o.ConditionOwners("Reachable")).To(ConsistOf(HaveField("Manager", ownership.BeforeFirstApplyManager)),
			"Reachable is not the Mutator's to take")
		Expect(recoveries()).To(Equal(map[string]float64{mutator: 1}))
		Expect(recorder.reasons).To(Equal([]string{ssa.ReasonFieldsRecovered}))
		Expect(recorder.notes[0]).To(ContainSubstring(`.status.conditions[type="Ready"].status`))
		Expect(recorder.notes[0]).NotTo(ContainSubstring("Reachable"))
		Expect(strings.Join(reports.lines, "\n")).To(ContainSubstring("took back from before-first-apply"))

		By("steady reconciles pay nothing")
		requests.Reset()
		setReady(ctx, applier, key, metav1.ConditionTrue)
		edit(ctx, applier, key, markCondition("Reachable", metav1.ConditionTrue))
		Expect(apiRequests(requests)).To(BeEmpty())

		By("the Mutator's removal deletes Ready; Reachable stays, held as it was")
		b := batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), mutator, widgets.RemoveCondition("Ready"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		w = getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Reachable", "True")))
		Expect(ownsCondition(w, mutator, "Reachable")).To(BeFalse())
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Reachable"}))

		By("the Edit's removal takes Reachable back from before-first-apply and deletes it")
		requests.Reset()
		edit(ctx, applier, key, dropCondition("Reachable"))
		Expect(apiRequests(requests)).To(Equal(map[string]int{"patch": 1, "apply": 1}))
		w = getWidget(ctx, key)
		Expect(w.Status.Conditions).To(BeEmpty())
		Expect(heldBeforeFirstApply(ctx)).To(BeEmpty())
		Expect(recoveries()).To(Equal(map[string]float64{mutator: 1, editor: 1}))
		Expect(recorder.reasons).To(Equal([]string{ssa.ReasonFieldsRecovered, ssa.ReasonFieldsRecovered}))
		Expect(recorder.notes[1]).To(ContainSubstring(`.status.conditions[type="Reachable"]`))
	})

	It("takes back an Edit's changed condition before applying it, instead of conflicting", func(ctx context.Context) {
		By("another writer's apply makes the API server attribute every field to before-first-apply")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "other", widgets.CS("Other", "True"))).To(Succeed())
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Reachable", "Ready"}))

		requests.Reset()
		edit(ctx, applier, key, markCondition("Reachable", metav1.ConditionFalse))
		Expect(apiRequests(requests)).To(Equal(map[string]int{"patch": 1, "apply": 1}))
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "True", "Reachable", "False", "Other", "True")))
		Expect(ownsCondition(w, editor, "Reachable")).To(BeTrue())
		Expect(ownsCondition(w, "other", "Other")).To(BeTrue(), "the other writer keeps its condition")
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Ready"}))
		Expect(recoveries()).To(Equal(map[string]float64{editor: 1}))

		By("the control: the same change as a raw apply conflicts with before-first-apply")
		err := widgets.ApplyConditions(ctx, env.Client, key, "raw", widgets.CS("Ready", "False"))
		Expect(err).To(MatchError(ContainSubstring(ownership.BeforeFirstApplyManager)))
	})

	It("reads again and takes back anew when a write races the managedFields rewrite", func(ctx context.Context) {
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "other", widgets.CS("Other", "True"))).To(Succeed())
		c, counted, err := env.CountingClient()
		Expect(err).NotTo(HaveOccurred())
		racy := &racingClient{Client: c, race: func(ctx context.Context) error {
			return widgets.ApplyConditions(ctx, env.Client, key, "racer", widgets.CS("Racer", "True"))
		}}
		racing, err := widgets.NewApplier(racy, ssa.WithRegisterer(reg))
		Expect(err).NotTo(HaveOccurred())

		edit(ctx, racing, key, markCondition("Reachable", metav1.ConditionFalse))
		Expect(apiRequests(counted)).To(Equal(map[string]int{"patch": 2, "get": 1, "apply": 1}),
			"the rewrite met the racing write (409), the object was read again, taken back and applied")
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "True", "Reachable", "False", "Other", "True", "Racer", "True")))
		Expect(ownsCondition(w, editor, "Reachable")).To(BeTrue())
		Expect(ownsCondition(w, "racer", "Racer")).To(BeTrue(), "the racing write keeps its owner")
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Ready"}))
		Expect(recoveries()).To(Equal(map[string]float64{editor: 1}))
	})

	It("never takes a real manager's fields, only before-first-apply's", func(ctx context.Context) {
		By("a real manager applies Ready as it is, sharing it with before-first-apply")
		Expect(widgets.ApplyExisting(ctx, env.Client, key, "other", "Ready")).To(Succeed())
		Expect(ownsCondition(getWidget(ctx, key), "other", "Ready")).To(BeTrue())

		requests.Reset()
		setReady(ctx, applier, key, metav1.ConditionTrue)
		Expect(apiRequests(requests)).To(Equal(map[string]int{"patch": 1}), "taken back, then nothing left to apply")
		w := getWidget(ctx, key)
		Expect(ownsCondition(w, mutator, "Ready")).To(BeTrue())
		Expect(ownsCondition(w, "other", "Ready")).To(BeTrue(), "the real manager keeps Ready")
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Reachable"}))

		By("the Mutator's removal cannot take effect while the other manager holds Ready: refused, naming it")
		b := batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), mutator, widgets.RemoveCondition("Ready"))).To(Succeed())
		err := b.Flush(ctx)
		Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(err.Error()).To(ContainSubstring("other"))
		w = getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(HaveKey("Ready"))
		Expect(ownsCondition(w, "other", "Ready")).To(BeTrue())
		Expect(ownsCondition(w, mutator, "Ready")).To(BeTrue())
	})

	It("leaves the condition when the raw apply co-owns it with before-first-apply (the control)", func(ctx context.Context) {
		w := getWidget(ctx, key)
		ready := w.Status.Conditions[0]
		Expect(ready.Type).To(Equal("Ready"))
		Expect(widgets.ApplyExisting(ctx, env.Client, key, mutator, "Ready")).To(Succeed())
		Expect(heldBeforeFirstApply(ctx)).To(ContainElement("Ready"))
		Expect(widgets.ApplyConditions(ctx, env.Client, key, mutator, widgets.CS())).To(Succeed(), "the removal is accepted")
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKey("Ready"), "and the condition stays")

		By("a dry run does not take back: the Edit's removal is refused, naming before-first-apply")
		b := batcher.New(applier)
		Expect(batcher.EditStatus(b, getWidget(ctx, key), editor, dropCondition("Reachable"))).To(Succeed())
		results, err := b.DryRun(ctx)
		Expect(err).To(HaveOccurred())
		Expect(results).To(HaveLen(1))
		Expect(results[0].Err).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(results[0].Err.Error()).To(ContainSubstring(ownership.BeforeFirstApplyManager))
		Expect(recoveries()).To(BeEmpty())
	})

	// conflictOwners names the owners of the field-manager conflicts in err.
	conflictOwners := func(err error) []string {
		GinkgoHelper()
		cerr, ok := conflicts.FromError(err, mutator, ownership.ObjectRef{})
		Expect(ok).To(BeTrue(), "a field-manager conflict: %v", err)
		var owners []string
		for _, c := range cerr.Conflicts {
			if !slices.Contains(owners, c.Manager) {
				owners = append(owners, c.Manager)
			}
		}
		return owners
	}

	It("recovers a Mutator's first apply that changes a value, whose conflict names only the before-first-apply it makes", func(ctx context.Context) {
		By("the control: the raw apply conflicts with before-first-apply alone, and the refusal stores no attribution")
		err := widgets.ApplyConditions(ctx, env.Client, key, mutator, widgets.CS("Ready", "False"))
		Expect(conflictOwners(err)).To(Equal([]string{ownership.BeforeFirstApplyManager}))
		Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())

		requests.Reset()
		setReady(ctx, applier, key, metav1.ConditionFalse)
		Expect(apiRequests(requests)).To(Equal(map[string]int{"get": 2, "apply": 3, "patch": 1}),
			"a read for the missing managedFields, the conflicted apply, a read, the apply claiming nothing, "+
				"the managedFields rewrite, the apply again")
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "False", "Reachable", "True")))
		o, err := ownership.Inspect(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Owners(ownership.ConditionPath("Ready"))).To(ConsistOf(HaveField("Manager", mutator)), "Ready is the Mutator's alone")
		Expect(o.ConditionOwners("Reachable")).To(ConsistOf(HaveField("Manager", ownership.BeforeFirstApplyManager)),
			"the Edit's condition is not the Mutator's to take")
		Expect(recoveries()).To(Equal(map[string]float64{mutator: 1}))
		Expect(recorder.reasons).To(Equal([]string{ssa.ReasonFieldsRecovered}), "no conflict decided or recorded")
		Expect(recorder.notes[0]).To(ContainSubstring(`.status.conditions[type="Ready"].status`))
		Expect(recorder.notes[0]).NotTo(ContainSubstring("Reachable"))

		By("owning Ready alone, the Mutator's removal deletes it")
		b := batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), mutator, widgets.RemoveCondition("Ready"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("Reachable", "True")))
	})

	It("recovers an Edit's first apply that changes a value the same way", func(ctx context.Context) {
		By("the control: the raw apply conflicts with before-first-apply alone")
		err := widgets.ApplyConditions(ctx, env.Client, key, editor, widgets.CS("Reachable", "False"))
		Expect(conflictOwners(err)).To(Equal([]string{ownership.BeforeFirstApplyManager}))

		requests.Reset()
		edit(ctx, applier, key, markCondition("Reachable", metav1.ConditionFalse))
		Expect(apiRequests(requests)).To(Equal(map[string]int{"get": 2, "apply": 3, "patch": 1}))
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "True", "Reachable", "False")))
		o, err := ownership.Inspect(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Owners(ownership.ConditionPath("Reachable"))).To(ConsistOf(HaveField("Manager", editor)))
		Expect(o.ConditionOwners("Ready")).To(ConsistOf(HaveField("Manager", ownership.BeforeFirstApplyManager)),
			"the Mutator's condition is untouched")
		Expect(recoveries()).To(Equal(map[string]float64{editor: 1}))
		Expect(recorder.reasons).To(Equal([]string{ssa.ReasonFieldsRecovered}))

		By("owning Reachable alone, the Edit's removal deletes it")
		edit(ctx, applier, key, dropCondition("Reachable"))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(widgets.CS("Ready", "True")))
	})

	It("still returns a conflict that names a real manager, sending nothing again (the control)", func(ctx context.Context) {
		By("a real manager applies Ready as it is: it shares Ready with before-first-apply")
		Expect(widgets.ApplyExisting(ctx, env.Client, key, "other", "Ready")).To(Succeed())

		requests.Reset()
		b := batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), mutator, widgets.SetCondition("Ready", metav1.ConditionFalse, "Set"))).To(Succeed())
		err := b.Flush(ctx)
		var cerr *conflicts.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "a conflict: %v", err)
		Expect(conflictOwners(err)).To(Equal([]string{"other"}), "before-first-apply's share was taken back before sending")
		Expect(apiRequests(requests)).To(Equal(map[string]int{"patch": 1, "apply": 1}), "no read, no apply again")
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKeyWithValue("Ready", metav1.ConditionTrue))
		Expect(b.Pending()).To(HaveLen(1))
	})

	It("takes back from before-first-apply under a Yield policy instead of yielding to it", func(ctx context.Context) {
		yielding, _, counted := newApplier(ssa.WithRegisterer(reg), ssa.WithEventRecorder(recorder),
			ssa.WithConflictPolicy(mutator, conflicts.Yield()), ssa.WithConflictPolicy(editor, conflicts.Yield()))

		By("the Mutator's first apply after the loss conflicts with before-first-apply alone: taken back, not yielded")
		setReady(ctx, yielding, key, metav1.ConditionFalse)
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "False", "Reachable", "True")))
		Expect(ownsCondition(w, mutator, "Ready")).To(BeTrue())
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Reachable"}))

		By("before-first-apply holds Reachable: the Edit predicts a conflict with it, keeps the change and takes it back first")
		counted.Reset()
		edit(ctx, yielding, key, markCondition("Reachable", metav1.ConditionFalse))
		Expect(apiRequests(counted)).To(Equal(map[string]int{"patch": 1, "apply": 1}))
		w = getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "False", "Reachable", "False")))
		Expect(ownsCondition(w, editor, "Reachable")).To(BeTrue())
		Expect(heldBeforeFirstApply(ctx)).To(BeEmpty())
		Expect(recoveries()).To(Equal(map[string]float64{mutator: 1, editor: 1}))
		Expect(recorder.reasons).To(Equal([]string{ssa.ReasonFieldsRecovered, ssa.ReasonFieldsRecovered}), "nothing yielded")
	})

	It("takes back a condition a queued removal names that before-first-apply alone holds, and removes it", func(ctx context.Context) {
		By("the Mutator writes again: the API server attributes Reachable to before-first-apply")
		setReady(ctx, applier, key, metav1.ConditionTrue)
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Reachable"}))

		By("a dry run takes nothing back: the removal is refused, naming before-first-apply")
		b := batcher.New(applier)
		Expect(batcher.RemoveCondition(b, getWidget(ctx, key), editor, "Reachable")).To(Succeed())
		results, err := b.DryRun(ctx)
		Expect(err).To(HaveOccurred())
		Expect(results).To(HaveLen(1))
		Expect(results[0].Err).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(results[0].Err.Error()).To(ContainSubstring(ownership.BeforeFirstApplyManager))
		Expect(heldBeforeFirstApply(ctx)).To(Equal([]string{"Reachable"}))

		By("the removal takes Reachable back and deletes it; Ready stays the Mutator's")
		b = batcher.New(applier)
		Expect(batcher.RemoveCondition(b, getWidget(ctx, key), editor, "Reachable")).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "True")))
		Expect(ownsCondition(w, mutator, "Ready")).To(BeTrue())
		Expect(heldBeforeFirstApply(ctx)).To(BeEmpty())
		Expect(recoveries()).To(Equal(map[string]float64{mutator: 1, editor: 1}))
	})

	It("still refuses a queued removal of a condition a real manager holds beside before-first-apply", func(ctx context.Context) {
		setReady(ctx, applier, key, metav1.ConditionTrue)
		Expect(widgets.ApplyExisting(ctx, env.Client, key, "other", "Reachable")).To(Succeed())
		b := batcher.New(applier)
		Expect(batcher.RemoveCondition(b, getWidget(ctx, key), editor, "Reachable")).To(Succeed())
		err := b.Flush(ctx)
		Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(err.Error()).To(ContainSubstring("other"))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKey("Reachable"))
		Expect(recoveries()).NotTo(HaveKey(editor))
	})

	// removedAfterWipe asserts that Reachable is gone, Ready stays held by
	// before-first-apply alone, not by the remover, and the recovery counts.
	removedAfterWipe := func(ctx context.Context) {
		GinkgoHelper()
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(Equal(widgets.CS("Ready", "True")))
		Expect(ownsCondition(w, editor, "Ready")).To(BeFalse())
		o, err := ownership.Inspect(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(o.ConditionOwners("Ready")).To(ConsistOf(HaveField("Manager", ownership.BeforeFirstApplyManager)),
			"the other writer's condition is untouched")
		Expect(recoveries()).To(Equal(map[string]float64{editor: 1}))
		Expect(recorder.reasons).To(Equal([]string{ssa.ReasonFieldsRecovered}))
		Expect(recorder.notes[0]).To(ContainSubstring(`.status.conditions[type="Reachable"]`))
		Expect(recorder.notes[0]).NotTo(ContainSubstring("Ready"))
	}

	It("recovers an Edit's removal while managedFields are empty altogether, in one Flush", func(ctx context.Context) {
		requests.Reset()
		b := batcher.New(applier)
		Expect(batcher.EditStatus(b, getWidget(ctx, key), editor, dropCondition("Reachable"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(apiRequests(requests)).To(Equal(map[string]int{"get": 1, "apply": 2, "patch": 1}),
			"a read for the missing managedFields, the apply claiming nothing, the managedFields rewrite, the removal")
		removedAfterWipe(ctx)
	})

	It("recovers a queued removal while managedFields are empty altogether, in one Flush", func(ctx context.Context) {
		requests.Reset()
		b := batcher.New(applier)
		Expect(batcher.RemoveCondition(b, getWidget(ctx, key), editor, "Reachable")).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(apiRequests(requests)).To(Equal(map[string]int{"get": 1, "apply": 2, "patch": 1}),
			"a read for the missing managedFields, the apply claiming nothing, the managedFields rewrite, the removal")
		removedAfterWipe(ctx)
	})

	It("refuses the same removals in a dry run while managedFields are empty altogether, writing nothing (the control)", func(ctx context.Context) {
		rv := getWidget(ctx, key).ResourceVersion
		for _, removal := range []struct {
			queue    func(b *batcher.Batch) error
			err      error
			requests map[string]int
		}{{
			queue: func(b *batcher.Batch) error {
				return batcher.EditStatus(b, getWidget(ctx, key), editor, dropCondition("Reachable"))
			},
			err:      objects.ErrNeedsManagedFields,
			requests: map[string]int{"get": 1},
		}, {
			queue: func(b *batcher.Batch) error {
				return batcher.RemoveCondition(b, getWidget(ctx, key), editor, "Reachable")
			},
			err:      ssa.ErrRemovesForeignField,
			requests: map[string]int{"get": 1, "apply": 1},
		}} {
			requests.Reset()
			b := batcher.New(applier)
			Expect(removal.queue(b)).To(Succeed())
			results, err := b.DryRun(ctx)
			Expect(err).To(HaveOccurred())
			Expect(results).To(HaveLen(1))
			Expect(results[0].Err).To(MatchError(removal.err))
			Expect(apiRequests(requests)).To(Equal(removal.requests), "the read, and the queued removal's dry-run apply")
		}
		w := getWidget(ctx, key)
		Expect(w.ResourceVersion).To(Equal(rv), "nothing written")
		Expect(w.ManagedFields).To(BeEmpty())
		Expect(widgets.Conditions(w)).To(HaveKey("Reachable"))
		Expect(recoveries()).To(BeEmpty())
	})

	It("leaves the condition when a plain apply omits it while managedFields are empty altogether (the control)", func(ctx context.Context) {
		Expect(widgets.ApplyConditions(ctx, env.Client, key, editor, widgets.CS())).To(Succeed(), "the removal is accepted")
		w := getWidget(ctx, key)
		Expect(widgets.Conditions(w)).To(HaveKey("Reachable"), "and the condition stays")
		Expect(heldBeforeFirstApply(ctx)).To(ContainElement("Reachable"))
	})
})

// setReady flushes one batch where the readiness Mutator sets Ready.
func setReady(ctx context.Context, applier *ssa.Applier, key client.ObjectKey, st metav1.ConditionStatus) {
	GinkgoHelper()
	b := batcher.New(applier)
	Expect(batcher.Status(b, getWidget(ctx, key), "readiness", widgets.SetCondition("Ready", st, "Set"))).To(Succeed())
	Expect(b.Flush(ctx)).To(Succeed())
}

// edit flushes one batch where the networking writer runs fn as an Edit.
func edit(ctx context.Context, applier *ssa.Applier, key client.ObjectKey, fn func(*v1alpha1.Widget) error) {
	GinkgoHelper()
	b := batcher.New(applier)
	Expect(batcher.EditStatus(b, getWidget(ctx, key), "networking", fn)).To(Succeed())
	Expect(b.Flush(ctx)).To(Succeed())
}

// racingClient runs race once, just before the first Patch: a write that
// lands between the Applier's read and its managedFields rewrite.
type racingClient struct {
	client.Client
	race func(context.Context) error
	once sync.Once
}

func (r *racingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	var err error
	r.once.Do(func() { err = r.race(ctx) })
	if err != nil {
		return err
	}
	return r.Client.Patch(ctx, obj, patch, opts...)
}
