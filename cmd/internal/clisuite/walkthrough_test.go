package clisuite

import (
	"bytes"
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/cmd/internal/demo"
	"github.com/statusapply/statusapply/test/suite"
)

var _ = Describe("the demo", func() {
	It("shows every claim on a real API server", func(ctx context.Context) {
		out := &bytes.Buffer{}
		err := demo.RunSteps(ctx, &demo.Walkthrough{Env: env, Namespace: suite.Namespace(ctx, env), Out: out}, demo.Steps())
		Expect(err).NotTo(HaveOccurred(), out.String())
		Expect(out.String()).To(ContainSubstring("0 of 9 writer updates lost"))
		Expect(out.String()).To(MatchRegexp(`[1-9] of 9 writer updates lost`))
		Expect(out.String()).NotTo(ContainSubstring("FAIL"))
	})

	It("fails when a step does not show what it claims", func(ctx context.Context) {
		out := &bytes.Buffer{}
		failing := demo.Step{Title: "a claim that does not hold", Run: func(context.Context, *demo.Walkthrough) (string, error) {
			return "", errFalseClaim
		}}
		err := demo.RunSteps(ctx, &demo.Walkthrough{Env: env, Namespace: suite.Namespace(ctx, env), Out: out}, []demo.Step{failing})
		Expect(err).To(MatchError(errFalseClaim))
		Expect(out.String()).To(ContainSubstring("FAIL"))
	})
})

var _ = Describe("the demo against an existing cluster", func() {
	It("runs in a namespace it creates and deletes, with the CRDs already installed", func(ctx context.Context) {
		out := &bytes.Buffer{}
		Expect(demo.RunAgainst(ctx, out, env.Config)).To(Succeed(), out.String())
		Expect(out.String()).To(ContainSubstring("working in namespace statusapply-demo-"))
		Expect(out.String()).NotTo(ContainSubstring("FAIL"))
	})
})

// errFalseClaim is the error of a step whose claim does not hold.
var errFalseClaim = errors.New("the claim does not hold")
