package races

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"

	"github.com/statusapply/statusapply/test/suite"
)

// attempts bounds the concurrent races: the guarded race is repeated this many
// times, and the blind control must reproduce the overwrite within as many.
const attempts = 20

var _ = Describe("the plan-creation race (two reconciles of one object)", func() {
	var (
		ns string
		pw *planWatch
		rs [2]*reconciler
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		pw = watchPlans(ns)
		rs = [2]*reconciler{newReconciler(), newReconciler()}
	})

	Context("both observing before either writes", func() {
		// observeBoth has both reconciles read a new object before either
		// decides, checks that both saw no plan, and forgets the reads.
		observeBoth := func(ctx context.Context, name string) (client.ObjectKey, [2]*v1alpha1.Widget) {
			key := createWidget(ctx, ns, name)
			var snapshots [2]*v1alpha1.Widget
			for i, r := range rs {
				var err error
				snapshots[i], err = r.observe(ctx, key)
				Expect(err).NotTo(HaveOccurred())
				Expect(snapshots[i].Status.Plan).To(BeNil())
				r.reset()
			}
			return key, snapshots
		}

		It("guarded: writes exactly one plan, and the second reconcile sees it and writes nothing", func(ctx context.Context) {
			key, snapshots := observeBoth(ctx, "guarded")

			Expect(rs[0].decide(ctx, snapshots[0], "reconcile-1", true)).To(Succeed())
			afterFirst, err := rs[0].observe(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			Expect(rs[1].decide(ctx, snapshots[1], "reconcile-2", true)).To(Succeed())

			plans, final := pw.plansOf(ctx, key)
			Expect(plans).To(Equal([]string{"reconcile-1"}), "the watch never saw a second plan")
			Expect(final.Status.Plan.ID).To(Equal("reconcile-1"))
			Expect(final.ResourceVersion).To(Equal(afterFirst.ResourceVersion), "the second reconcile wrote nothing at all")

			Expect(rs[0].responses.Succeeded("apply")).To(Equal(1))
			Expect(rs[1].responses.Count("apply", 409)).To(Equal(1), "its stale apply was refused: %s", rs[1].responses)
			Expect(rs[1].responses.Succeeded("apply")).To(BeZero(), "and not retried: the re-read showed the plan")
			Expect(rs[1].requests.Count("get")).To(Equal(1), "one re-read: %s", rs[1].requests)
		})

		It("control: a blind apply overwrites the first plan", func(ctx context.Context) {
			key, snapshots := observeBoth(ctx, "blind")

			Expect(rs[0].decide(ctx, snapshots[0], "reconcile-1", false)).To(Succeed())
			Expect(rs[1].decide(ctx, snapshots[1], "reconcile-2", false)).To(Succeed())

			plans, final := pw.plansOf(ctx, key)
			Expect(plans).To(Equal([]string{"reconcile-1", "reconcile-2"}), "vacuous unless the second plan replaced the first")
			Expect(final.Status.Plan.ID).To(Equal("reconcile-2"))
			Expect(rs[1].responses.Succeeded("apply")).To(Equal(1))
		})
	})

	Context("truly concurrent: both released at once", func() {
		It(fmt.Sprintf("guarded: never writes two plans in %d races", attempts), func(ctx context.Context) {
			raced := 0
			for i := range attempts {
				out := race(ctx, pw, rs, ns, fmt.Sprintf("guarded-%d", i), true)
				Expect(out.plans).To(HaveLen(1), "race %d: the watch saw %v", i, out.plans)
				Expect(out.final.Status.Plan.ID).To(Equal(out.plans[0]))

				applied := rs[0].responses.Succeeded("apply") + rs[1].responses.Succeeded("apply")
				refused := rs[0].responses.Count("apply", 409) + rs[1].responses.Count("apply", 409)
				Expect(applied).To(Equal(1), "race %d: one successful write in all", i)
				if out.bothSawNone {
					raced++
					Expect(refused).To(Equal(1), "race %d: both decided from no plan, the later apply was refused", i)
				} else {
					Expect(refused).To(BeZero(), "race %d: the later reconcile observed the plan and sent nothing", i)
				}
			}
			AddReportEntry("guarded races where both reconciles observed no plan", fmt.Sprintf("%d of %d", raced, attempts))
			Expect(raced).To(BeNumerically(">", 0), "vacuous: in no race did both reconciles observe no plan")
		})

		It(fmt.Sprintf("control: a blind apply overwrites the first plan within %d races", attempts), func(ctx context.Context) {
			reproducedAt := 0
			for i := 1; i <= attempts && reproducedAt == 0; i++ {
				out := race(ctx, pw, rs, ns, fmt.Sprintf("blind-%d", i), false)
				Expect(len(out.plans)).To(BeNumerically("<=", 2))
				if len(out.plans) == 2 {
					reproducedAt = i
					Expect(out.bothSawNone).To(BeTrue())
					Expect(out.final.Status.Plan.ID).To(Equal(out.plans[1]), "the later plan replaced the earlier one")
				}
			}
			AddReportEntry("blind race reproduced the overwrite at attempt", reproducedAt)
			Expect(reproducedAt).NotTo(BeZero(), "vacuous: the blind control wrote one plan in each of %d races", attempts)
		})
	})
})
