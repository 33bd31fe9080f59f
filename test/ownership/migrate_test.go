package ownership

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("migrating a legacy merge-patch writer", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	// legacyObject creates a Widget whose status was only ever written by
	// the legacy merge-patch writer: conditions A and B, and the phase.
	legacyObject := func(ctx context.Context, name string) client.ObjectKey {
		key := createWidget(ctx, ns, name)
		legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
		o := inspect(ctx, key)
		Expect(o.ConditionTypes()).To(Equal(map[string][]string{legacyManager: {"A", "B"}}))
		Expect(o.Legacy()).To(HaveLen(1))
		return key
	}

	It("conflicts and leaves stale conditions without a migration (the control)", func(ctx context.Context) {
		key := legacyObject(ctx, "control")

		// Changing a legacy-owned condition without forcing conflicts.
		err := widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "False"))
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "expected a field-manager conflict, got %v", err)
		Expect(err.Error()).To(ContainSubstring(`conflicts with "legacy"`))

		// Applying the same value shares ownership; giving it up again leaves
		// the condition behind, because the legacy writer still owns it.
		Expect(widgets.ApplyExisting(ctx, env.Client, key, "networking", "B")).To(Succeed())
		Expect(inspect(ctx, key).ConditionOwners("B")).To(HaveLen(2), "B is shared by legacy and networking")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(HaveKey("B"), "the stale condition outlives the manager that dropped it")
	})

	It("hands a whole legacy manager to one apply manager (csaupgrade)", func(ctx context.Context) {
		key := legacyObject(ctx, "whole")
		m, err := fleet.NewMigrator(env.Client, fleet.Plan{Managers: map[string]string{legacyManager: "readiness"}},
			fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())

		res, err := m.Migrate(ctx, &v1alpha1.Widget{ObjectMeta: metaOf(key)})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Changed).To(BeTrue())
		GinkgoWriter.Println(res)

		o := inspect(ctx, key)
		Expect(o.Legacy()).To(BeEmpty())
		Expect(o.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A", "B"}}))

		// The new owner changes and removes what it now owns, without force.
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "False", "B", "True"))).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "False", "B", "True")))
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "False"))).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "False")))
	})

	It("splits a legacy owner's conditions among two apply managers", func(ctx context.Context) {
		key := legacyObject(ctx, "split")
		plan := fleet.Plan{
			Conditions: map[string]string{"A": "readiness", "B": "networking"},
			Managers:   map[string]string{legacyManager: "summary"},
		}

		By("a dry run reports the new ownership and writes nothing")
		dry, err := fleet.NewMigrator(env.Client, plan)
		Expect(err).NotTo(HaveOccurred())
		before := getWidget(ctx, key)
		res, err := dry.Migrate(ctx, before)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.DryRun).To(BeTrue())
		Expect(res.Changed).To(BeTrue())
		Expect(res.Before.ConditionTypes()).To(Equal(map[string][]string{legacyManager: {"A", "B"}}))
		Expect(res.After.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}}))
		Expect(res.String()).To(ContainSubstring("would migrate"))
		after := getWidget(ctx, key)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion))
		Expect(after.ManagedFields).To(Equal(before.ManagedFields))

		By("the real run writes what the dry run showed")
		m, err := fleet.NewMigrator(env.Client, plan, fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		res, err = m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Changed).To(BeTrue())
		Expect(res.DryRun).To(BeFalse())
		GinkgoWriter.Println(res)
		o := inspect(ctx, key)
		Expect(o.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}}))
		Expect(o.Legacy()).To(BeEmpty())
		Expect(o.Owners(ownership.ConditionPath("A"))).To(ConsistOf(HaveField("Manager", "readiness")))
		Expect(o.Owners(ownership.StatusPath())).To(ConsistOf(HaveField("Manager", "summary")))

		By("running it again changes nothing")
		res, err = m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Changed).To(BeFalse())

		By("each apply manager changes and removes its own types without force")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "False"))).To(Succeed())
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS("B", "False"))).To(Succeed())
		Expect(widgets.ApplyPhase(ctx, env.Client, key, "summary", "Degraded")).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "False", "B", "False")))
		Expect(getWidget(ctx, key).Status.Phase).To(Equal("Degraded"))

		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("B", "False")))
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(BeEmpty())
	})
})
