package ownership

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("objects that were never tracked", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	// The conditions go to their writers and the rest of before-first-apply
	// (the phase) to summary: every field keeps an owner.
	plan := fleet.Plan{
		Conditions:    map[string]string{"A": "readiness", "B": "networking"},
		Managers:      map[string]string{ownership.BeforeFirstApplyManager: "summary"},
		ReleaseShared: true,
	}

	It("seeds an object without managedFields and hands its conditions over", func(ctx context.Context) {
		key := createWidget(ctx, ns, "untracked")
		clearManagedFields(ctx, key)
		legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
		Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty(), "untracked objects stay untracked under merge patches")

		_, err := ownership.Inspect(getWidget(ctx, key))
		Expect(err).To(MatchError(ownership.ErrNoManagedFields), "no managedFields is not \"owns nothing\"")

		By("a dry run shows the server's attribution without storing it")
		dry, err := fleet.NewMigrator(env.Client, plan)
		Expect(err).NotTo(HaveOccurred())
		res, err := dry.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Seeded).To(BeTrue())
		Expect(res.Changed).To(BeTrue())
		Expect(res.Before.ConditionTypes()).To(Equal(map[string][]string{ownership.BeforeFirstApplyManager: {"A", "B"}}))
		Expect(res.After.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}}))
		Expect(res.After.Managers(ownership.BeforeFirstApplyManager)).To(BeEmpty())
		Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())

		By("the real run seeds, then migrates")
		m, err := fleet.NewMigrator(env.Client, plan, fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		res, err = m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Seeded).To(BeTrue())
		Expect(res.Changed).To(BeTrue())
		o := inspect(ctx, key)
		Expect(o.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}}))
		Expect(o.Managers(ownership.BeforeFirstApplyManager)).To(BeEmpty(), "before-first-apply is cleaned up")
		Expect(o.Managers(fleet.DefaultSeedManager)).To(BeEmpty(), "the seeding apply owns nothing")

		By("the apply managers change and remove their types without force")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "False"))).To(Succeed())
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "False")))
		Expect(getWidget(ctx, key).Status.Phase).To(Equal("Running"), "the phase stays, owned by summary")
		Expect(widgets.ApplyPhase(ctx, env.Client, key, "summary", "Ready")).To(Succeed(), "summary changes what it took over")
	})

	It("cleans up before-first-apply left by an earlier first apply", func(ctx context.Context) {
		key := createWidget(ctx, ns, "first-apply")
		clearManagedFields(ctx, key)
		legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "other", widgets.CS("C", "True"))).To(Succeed())

		o := inspect(ctx, key)
		Expect(o.ConditionTypes()).To(Equal(map[string][]string{ownership.BeforeFirstApplyManager: {"A", "B"}, "other": {"C"}}))
		Expect(o.Legacy()).To(ConsistOf(HaveField("Manager", ownership.BeforeFirstApplyManager)))

		By("before the migration, before-first-apply blocks changes (the control)")
		err := widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS("B", "False"))
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "expected a conflict, got %v", err)
		Expect(err.Error()).To(ContainSubstring(ownership.BeforeFirstApplyManager))

		m, err := fleet.NewMigrator(env.Client, plan, fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		res, err := m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Seeded).To(BeFalse())
		Expect(res.Changed).To(BeTrue())

		o = inspect(ctx, key)
		Expect(o.Managers(ownership.BeforeFirstApplyManager)).To(BeEmpty())
		Expect(o.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}, "other": {"C"}}))

		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS("B", "False"))).To(Succeed())
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("B", "False", "C", "True")))
	})
})
