package soak

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// controlDuration bounds a control run: it stops at the first violation, which
// comes within seconds; the bound only matters when the checker is blind.
const controlDuration = 90 * time.Second

var _ = Describe("the soak", func() {
	// The controls come first: they take seconds, and a checker that cannot
	// see a broken writer makes the long run that follows worthless.
	DescribeTable("control: the checker catches a broken writer",
		func(ctx SpecContext, broken string) {
			c := cfg
			c.broken, c.stopAtFirstViolation = broken, true
			c.duration = min(c.duration, controlDuration)
			rep := runSoak(ctx, c)
			Expect(rep.violations).To(BeNumerically(">", 0), "vacuous: the checker saw nothing wrong in %s", rep.elapsed)
		},
		Entry("a writer merge-patching conditions from a stale snapshot", brokenMergePatch),
		Entry("plan creators without the guard", brokenUnguarded),
	)

	It("keeps every invariant through the seed's faults", func(ctx SpecContext) {
		rep := runSoak(ctx, cfg)
		if cfg.broken != "" {
			Expect(rep.violations).To(BeNumerically(">", 0),
				"SOAK_BROKEN=%s: the checker saw nothing wrong with a broken writer", cfg.broken)
			return
		}
		Expect(rep.violations).To(BeZero(), "violations:\n%s", strings.Join(rep.reported, "\n"))
	})
})

// runSoak runs one soak and prints its figures; a fault that could not be
// injected fails the spec.
func runSoak(ctx context.Context, c config) *report {
	GinkgoHelper()
	rep, err := soak(ctx, env, c, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	for _, r := range rep.reported {
		GinkgoWriter.Println("soak: violation:", r)
	}
	GinkgoWriter.Println(rep.line())
	Expect(rep.errs).To(BeEmpty(), "faults that could not be injected")
	return rep
}
