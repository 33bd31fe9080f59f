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
		func(ctx SpecContext, broken string, su setUp) {
			c := cfg
			c.broken, c.stopAtFirstViolation, c.su = broken, true, su
			c.duration = min(c.duration, controlDuration)
			rep := runSoak(ctx, c)
			Expect(rep.violations).To(BeNumerically(">", 0), "vacuous: the checker saw nothing wrong in %s", rep.elapsed)
			if broken == brokenNoFence {
				Expect(rep.regressions).To(BeNumerically(">", 0), "vacuous: no value went back")
				Expect(rep.audit.stale).To(BeNumerically(">", 0),
					"vacuous: the audit log shows no apply of a replica that had lost the lease")
			}
		},
		Entry("status written by whole-array merge patches", brokenMergePatch, normalSetUp),
		Entry("starved replicas without the lease fence, the leader paused past its lease", brokenNoFence, starvedSetUp),
	)

	// expectClean asserts that a run with the fence saw nothing go back and
	// no apply land while another replica led; under SOAK_BROKEN it expects
	// violations instead, and with the lease fence alone it only reports.
	expectClean := func(rep *report, faults int64) {
		GinkgoHelper()
		switch cfg.broken {
		case brokenLeaseOnly:
			return
		case "":
		default:
			Expect(rep.violations).To(BeNumerically(">", 0), "SOAK_BROKEN=%s: the checker saw nothing wrong", cfg.broken)
			return
		}
		Expect(rep.violations).To(BeZero(), "violations:\n%s", strings.Join(rep.reported, "\n"))
		Expect(rep.audit.stale).To(BeZero(), "applies that landed while another replica led:\n%s", strings.Join(rep.audit.reported, "\n"))
		Expect(rep.audit.applies).To(BeNumerically(">", 0), "vacuous: the audit log shows no status apply")
		Expect(rep.convergeErr).NotTo(HaveOccurred(), "not converged within %s of the faults' end", convergeWithin)
		Expect(faults).To(BeNumerically(">", 0), "no leader was killed or paused")
	}

	It("keeps every invariant while leaders are killed, paused and replaced", func(ctx SpecContext) {
		rep := runSoak(ctx, cfg)
		expectClean(rep, rep.st.kills.Load()+rep.st.pauses.Load())
	})

	It("lets no paused leader write after a takeover while the replicas are starved of CPU", func(ctx SpecContext) {
		c := cfg
		c.su = starvedSetUp
		rep := runSoak(ctx, c)
		expectClean(rep, rep.st.pauses.Load())
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
