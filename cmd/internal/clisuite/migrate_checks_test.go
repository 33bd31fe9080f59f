package clisuite

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("migrate's plan checks", func() {
	var (
		ns   string
		keys []client.ObjectKey
	)

	// fleet creates n Widgets whose conditions only the legacy writer
	// holds, and has summary apply the phase on the first two of them.
	fleet := func(ctx context.Context, n int) {
		ns = suite.Namespace(ctx, env)
		keys = nil
		for i := range n {
			key := createWidget(ctx, ns, fmt.Sprintf("w%02d", i))
			legacyWrite(ctx, key, "", widgets.CS("A", "True", "B", "True"))
			if i < 2 {
				Expect(widgets.ApplyPhase(ctx, env.Client, key, "summary", "Running")).To(Succeed())
			}
			keys = append(keys, key)
		}
	}

	// versions returns every object's resourceVersion, to show nothing was
	// written.
	versions := func(ctx context.Context) []string {
		var out []string
		for _, key := range keys {
			out = append(out, getWidget(ctx, key).ResourceVersion)
		}
		return out
	}

	It("refuses a --from source no object has while a legacy writer is left, even when its destination applies, unless --allow-missing-source", func(ctx context.Context) {
		fleet(ctx, 16)
		before := versions(ctx)

		By("the CI gate on a misspelled source fails instead of passing with 0 would change")
		r := run(ctx, "migrate", "widgets", "-n", ns, "--from", "typo=summary", "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("--from typo: no manager of that name on any of the 16 objects")))
		Expect(r.err).To(MatchError(ContainSubstring("legacy writers still hold status fields on them: legacy (16 objects)")))
		Expect(r.err).To(MatchError(ContainSubstring("--allow-missing-source")))
		Expect(r.stdout).To(BeEmpty())

		By("so does --apply, before writing anything")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", "typo=summary", "--apply")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("--from typo: no manager of that name")))
		Expect(versions(ctx)).To(Equal(before), "nothing was written")

		By("the control: with --allow-missing-source the plan runs, and changes nothing")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", "typo=summary", "--allow-missing-source", "--exit-code")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("dry run: 16 objects, 0 would change, 16 unchanged, 0 failed"))
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", "typo=summary", "--allow-missing-source", "--apply")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("16 objects: 0 migrated, 16 unchanged, 0 failed"))
		Expect(versions(ctx)).To(Equal(before))

		By("the control: the legacy writer's own name makes the gate fail with 1, while something is left")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=summary", "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("16 would change"))

		By("once nothing legacy is left, the gone source is a finished migration: the gate passes")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=summary", "--apply", "--allow-active")
		Expect(r.err).NotTo(HaveOccurred())
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=summary", "--exit-code")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("0 would change"))
	})

	It("refuses a --condition type no object has, naming those the legacy writers hold, unless --allow-missing-source", func(ctx context.Context) {
		fleet(ctx, 3)
		r := run(ctx, "migrate", "widgets", "-n", ns, "--condition", "Redy=summary", "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("--condition Redy: no manager holds that condition type on any of the 3 objects; legacy writers hold A, B")))

		r = run(ctx, "migrate", "widgets", "-n", ns, "--condition", "Redy=summary", "--allow-missing-source", "--exit-code")
		Expect(r.err).NotTo(HaveOccurred(), "the control: allowed, the plan runs and changes nothing")
		Expect(r.stderr).To(ContainSubstring("0 would change"))
	})

	It("warns about a destination that applies on none of the objects, refuses it under --exit-code, and accepts it named with --new-destination", func(ctx context.Context) {
		const misspelt = "sumary" //nolint:misspell // the misspelled destination the spec is about
		fleet(ctx, 3)
		before := versions(ctx)
		warning := "warning: --from " + legacyManager + "=" + misspelt + ": " + misspelt + " applies on none of the 3 objects " +
			"(apply managers there: summary)"

		By("a dry run warns on stderr and goes on")
		r := run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"="+misspelt)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring(warning))
		Expect(r.stderr).To(ContainSubstring("--new-destination"))
		Expect(r.stderr).To(ContainSubstring("3 would change"))

		By("--exit-code refuses it, with --apply too, and writes nothing")
		for _, extra := range [][]string{{"--exit-code"}, {"--exit-code", "--apply"}} {
			r = run(ctx, append([]string{"migrate", "widgets", "-n", ns, "--from", legacyManager + "=" + misspelt}, extra...)...)
			Expect(cli.ExitCode(r.err)).To(Equal(2), "%v", extra)
			Expect(r.err).To(MatchError(ContainSubstring(misspelt+" applies on none of the 3 objects")), "%v", extra)
			Expect(r.err).To(MatchError(ContainSubstring("refused under --exit-code")), "%v", extra)
			Expect(r.stdout).To(BeEmpty())
		}
		Expect(versions(ctx)).To(Equal(before), "nothing was written")

		By("the control: named with --new-destination, the gate works as usual and nothing warns")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"="+misspelt, "--new-destination", misspelt, "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(1), "it would change something")
		Expect(r.stderr).NotTo(ContainSubstring("warning: --from"))

		By("a --new-destination the plan does not hand anything to is a usage error")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"="+misspelt, "--new-destination", "readiness")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("--new-destination readiness: no --from or --condition hands fields to readiness")))

		By("--apply without it warns, and writes")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"="+misspelt, "--apply", "--allow-active")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring(warning))
		Expect(inspect(ctx, keys[2]).ConditionTypes()).To(Equal(map[string][]string{misspelt: {"A", "B"}}))
	})
})

var _ = Describe("migrate against an API server that goes away", func() {
	// failureLine matches a failed object's line and captures its error.
	failureLine := regexp.MustCompile(`(?m)^Widget \S+: failed: (.*)$`)

	It("stops after the first object that cannot reach it and prints the failure once, unless --continue-on-error", func(ctx context.Context) {
		ns := createLegacyWidgets(ctx, 8)
		args := migrateToSummary(ns, "--progress", "--apply")

		By("the proxy stops answering at the fourth object's write")
		proxy := newFailingProxy(ns, 3)
		r := runThrough(ctx, proxy.kubeconfig, args...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(fmt.Sprintf("stopped: Widget %s/w03 could not reach the API server, 4 of 8 objects not attempted "+
			"(--continue-on-error attempts every object); to finish, run the same command again: "+
			"the objects migrated so far are found unchanged and left as they are", ns)))
		failures := failureLine.FindAllStringSubmatch(r.stdout, -1)
		Expect(failures).To(HaveLen(1), "one failure line:\n%s", r.stdout)
		Expect(failures[0][0]).To(HavePrefix("Widget " + ns + "/w03: failed: "))
		printed := r.stdout + r.stderr + r.err.Error()
		Expect(strings.Count(printed, failures[0][1])).To(Equal(1), "the failure is printed once:\n%s", printed)
		Expect(r.stderr).To(ContainSubstring(fmt.Sprintf("[4/8] Widget %s/w03: failed", ns)))
		Expect(r.stderr).NotTo(ContainSubstring("[5/8]"), "no object after it was attempted")
		Expect(r.stderr).To(ContainSubstring("8 objects: 3 migrated, 0 unchanged, 1 failed, 4 not attempted"))
		Expect(proxy.objects.Load()).To(BeNumerically("<=", 5), "requests for objects after the failure: at most a client retry")

		By("the control: --continue-on-error attempts every object left, each failure printed once")
		proxy = newFailingProxy(ns, 3)
		r = runThrough(ctx, proxy.kubeconfig, append(args, "--continue-on-error")...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError("2 of 8 objects failed to migrate"))
		failures = failureLine.FindAllStringSubmatch(r.stdout, -1)
		Expect(failures).To(HaveLen(2), "a failure line per object:\n%s", r.stdout)
		for _, f := range failures {
			Expect(strings.Count(r.stdout+r.stderr+r.err.Error(), f[0])).To(Equal(1), "%s is printed once", f[0])
		}
		Expect(r.stderr).To(ContainSubstring(fmt.Sprintf("[8/8] Widget %s/w07: failed", ns)))
		Expect(r.stderr).To(ContainSubstring("8 objects: 3 migrated, 3 unchanged, 2 failed\n"),
			"the objects migrated by the first run are found unchanged, without a request")

		for i := range 8 {
			want := map[string][]string{"summary": {"A", "B"}}
			if i >= 6 {
				want = map[string][]string{legacyManager: {"A", "B"}}
			}
			Expect(inspect(ctx, widgetKey(ns, fmt.Sprintf("w%02d", i))).ConditionTypes()).To(Equal(want), "w%02d", i)
		}
	})
})
