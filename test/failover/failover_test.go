package failover

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/test/suite"
)

// controlDuration bounds a control run: it stops at its first violation.
const controlDuration = 60 * time.Second

var _ = Describe("the failover soak", func() {
	DescribeTable("control: the checker catches what goes back in time",
		func(ctx SpecContext, broken string) {
			c := cfg
			c.broken, c.stopAtFirstViolation = broken, true
			c.duration = min(c.duration, controlDuration)
			rep := runSoak(ctx, c)
			Expect(rep.violations).To(BeNumerically(">", 0), "vacuous: the checker saw nothing wrong in %s", rep.elapsed)
		},
		Entry("status written by whole-array merge patches", brokenMergePatch),
		Entry("replicas without the lease fence, the leader paused past its lease", brokenNoFence),
	)

	It("keeps every invariant while leaders are killed, paused and replaced", func(ctx SpecContext) {
		rep := runSoak(ctx, cfg)
		if cfg.broken != "" {
			Expect(rep.violations).To(BeNumerically(">", 0),
				"SOAK_BROKEN=%s: the checker saw nothing wrong", cfg.broken)
			return
		}
		Expect(rep.violations).To(BeZero(), "violations:\n%s", strings.Join(rep.reported, "\n"))
		Expect(rep.convergeErr).NotTo(HaveOccurred(), "not converged within %s of the faults' end", convergeWithin)
		Expect(rep.st.kills.Load()+rep.st.pauses.Load()).To(BeNumerically(">", 0), "no leader was killed or paused")
	})
})

func runSoak(ctx context.Context, c config) *report {
	GinkgoHelper()
	ns := suite.Namespace(ctx, env)
	rep, err := soak(ctx, ns, c, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	for _, r := range rep.reported {
		GinkgoWriter.Println("failover soak: violation:", r)
	}
	GinkgoWriter.Println(rep.line())
	Expect(rep.errs).To(BeEmpty(), "faults that could not be injected")
	return rep
}
