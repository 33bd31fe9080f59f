package clisuite

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("migrate", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	// legacyObject is createLegacyWidget, checked to be owned by the legacy
	// writer alone.
	legacyObject := func(ctx context.Context, name string) client.ObjectKey {
		key := createLegacyWidget(ctx, ns, name)
		Expect(inspect(ctx, key).ConditionTypes()).To(Equal(map[string][]string{legacyManager: {"A", "B"}}))
		return key
	}

	split := []string{"--condition", "A=readiness", "--condition", "B=networking", "--from", legacyManager + "=summary"}

	It("dry-runs, applies what the dry run showed, and hands the conditions to their apply managers", func(ctx context.Context) {
		key := legacyObject(ctx, "w1")

		By("without an apply manager owning them, the conditions cannot be changed (the control)")
		err := widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "False"))
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "expected a field-manager conflict, got %v", err)

		By("a dry run prints before and after and writes nothing")
		before := getWidget(ctx, key)
		r := run(ctx, append([]string{"migrate", "widget/w1", "-n", ns}, split...)...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(ContainSubstring("Widget " + ns + "/w1: would migrate\n"))
		beforeSection, afterSection, found := strings.Cut(r.stdout, "  after:\n")
		Expect(found).To(BeTrue(), "an after section:\n%s", r.stdout)
		Expect(beforeSection).To(ContainSubstring("  before:\n"))
		Expect(lineWith(beforeSection, " legacy ", "Update", "status", "A,B", ".status.phase", "legacy writer")).NotTo(BeEmpty())
		Expect(lineWith(afterSection, " readiness ", "Apply", "status", " A ")).NotTo(BeEmpty())
		Expect(lineWith(afterSection, " networking ", "Apply", "status", " B ")).NotTo(BeEmpty())
		Expect(lineWith(afterSection, " summary ", "Apply", "status", ".status.phase")).NotTo(BeEmpty())
		Expect(lineWith(afterSection, " legacy ")).To(BeEmpty(), "the legacy writer is gone after")
		Expect(r.stderr).To(ContainSubstring("dry run: 1 object, 1 would change, 0 unchanged, 0 failed; nothing was written"),
			"the summary goes to stderr")
		Expect(r.stdout).NotTo(ContainSubstring("dry run:"))
		Expect(r.stderr).NotTo(ContainSubstring("[1/1]"), "no progress for a named object")
		Expect(r.stderr).To(ContainSubstring("warning: --condition B=networking: networking does not apply on the object; "+
			"--condition A=readiness: readiness does not apply on the object; --from legacy=summary: summary does not apply on the object"),
			"the new destinations are named")

		after := getWidget(ctx, key)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "a dry run writes nothing")
		Expect(after.ManagedFields).To(Equal(before.ManagedFields))

		By("--apply writes the ownership it prints")
		r = run(ctx, append([]string{"migrate", "widgets", "w1", "-n", ns, "--apply", "--allow-active", "-o", "json"}, split...)...)
		Expect(r.err).NotTo(HaveOccurred())
		var out migrateJSON
		decode(r, &out)
		Expect(out.APIVersion).To(Equal(documentGroupVersion))
		Expect(out.Kind).To(Equal("MigrationList"))
		Expect(out.DryRun).To(BeFalse())
		Expect(out.Plan.Conditions).To(Equal(map[string]string{"A": "readiness", "B": "networking"}))
		Expect(out.Plan.Managers).To(Equal(map[string]string{legacyManager: "summary"}))
		Expect(out.Summary.Total).To(Equal(1))
		Expect(out.Summary.Changed).To(Equal(1))
		Expect(out.Items).To(HaveLen(1))
		obj := out.Items[0]
		Expect(obj.Kind).To(Equal("Migration"))
		Expect(obj.Outcome).To(Equal("migrated"))
		Expect(obj.Object).To(Equal(objectRefJSON{APIVersion: "demo.statusapply.io/v1alpha1", Kind: "Widget", Namespace: ns, Name: "w1"}))
		Expect(obj.Before).NotTo(BeNil())
		Expect(obj.After).NotTo(BeNil())
		Expect(conditionsByManager(obj.Before.Managers)).To(Equal(map[string][]string{legacyManager: {"A", "B"}}))
		printed := conditionsByManager(obj.After.Managers)
		Expect(printed).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}}))

		o := inspect(ctx, key)
		Expect(o.ConditionTypes()).To(Equal(printed), "the server holds what was printed")
		Expect(o.Legacy()).To(BeEmpty())
		Expect(o.Owners(ownership.StatusPath())).To(ConsistOf(HaveField("Manager", "summary")))

		By("a second --apply is a no-op")
		migrated := getWidget(ctx, key)
		r = run(ctx, append([]string{"migrate", "widget/w1", "-n", ns, "--apply", "--allow-active"}, split...)...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(ContainSubstring("Widget " + ns + "/w1: unchanged\n"))
		Expect(r.stdout).To(ContainSubstring("  ownership:\n"))
		Expect(r.stderr).To(ContainSubstring("1 object: 0 migrated, 1 unchanged, 0 failed"))
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(migrated.ResourceVersion))

		By("the new apply managers change and remove their conditions without conflict or force")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("A", "False"))).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "False", "B", "True")))
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "False")))
		// summary took over the legacy writer's hold on the conditions list
		// itself; its first apply, which sets only the phase, lets go of it,
		// so that the list may become empty.
		Expect(widgets.ApplyPhase(ctx, env.Client, key, "summary", "Degraded")).To(Succeed())
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS())).To(Succeed())
		Expect(conditions(ctx, key)).To(BeEmpty())
		Expect(getWidget(ctx, key).Status.Phase).To(Equal("Degraded"))
	})

	It("migrates a list, seeding untracked objects, with a summary, progress only when asked, and -o wide per object", func(ctx context.Context) {
		legacyObject(ctx, "tracked")
		untracked := createWidget(ctx, ns, "untracked")
		clearManagedFields(ctx, untracked)
		legacyWrite(ctx, untracked, "Running", widgets.CS("A", "True", "B", "True"))
		Expect(getWidget(ctx, untracked).ManagedFields).To(BeEmpty())
		plan := []string{"--condition", "A=readiness", "--condition", "B=networking", "--release-shared"}

		By("a dry run of a list prints a summary on stderr; stderr, not a terminal here, gets no progress")
		r := run(ctx, append([]string{"migrate", "widgets", "-n", ns, "--new-destination", "readiness", "--new-destination", "networking"}, plan...)...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(MatchRegexp(`^dry run: 2 objects, 2 would change, 0 unchanged, 0 failed; nothing was written \(add --apply to write\)\n`+
			`warning: legacy writer legacy wrote 1 object within 24h \(last [^)]+ ago\): --apply refuses to take its fields [^\n]*\n$`),
			"the summary, and the legacy writer that just wrote; no progress")

		By("-o wide prints one line per object, then every object's ownership before and after")
		r = run(ctx, append([]string{"migrate", "widgets", "-n", ns, "-o", "wide"}, plan...)...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(MatchRegexp(`^NAME\s+OUTCOME\s+ATTEMPTS\s+SEEDED\s+BEFORE\s+AFTER\s+ERROR\n`))
		Expect(lineWith(r.stdout, "tracked ", "would migrate", " false ", "legacy=A,B,.status.phase", "readiness=A", "networking=B")).NotTo(BeEmpty())
		Expect(lineWith(r.stdout, "untracked ", "would migrate", " true ", "before-first-apply=A,B,.status.phase")).NotTo(BeEmpty())
		Expect(r.stdout).To(ContainSubstring("\n\nWidget " + ns + "/tracked: would migrate\n  before:\n"))
		Expect(r.stdout).To(ContainSubstring("Widget " + ns + "/untracked: would migrate\n  (it had no managedFields"))

		By("-v is the log verbosity, as in kubectl, not a detail level")
		r = run(ctx, append([]string{"migrate", "widgets", "-n", ns, "-v"}, plan...)...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("-o wide")))

		By("--apply with --progress and two workers")
		r = run(ctx, append([]string{"migrate", "widgets", "-n", ns, "--apply", "--allow-active", "-o", "json", "--progress", "--concurrency", "2"}, plan...)...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(progressLines(r.stderr)).To(Equal([]string{"[1/2] Widget " + ns + "/tracked: migrated", "[2/2] Widget " + ns + "/untracked: migrated"}))
		var out migrateJSON
		decode(r, &out)
		Expect(out.Summary.Changed).To(Equal(2))
		Expect(out.Items).To(ConsistOf(
			And(HaveField("Object.Name", "tracked"), HaveField("Seeded", BeFalse())),
			And(HaveField("Object.Name", "untracked"), HaveField("Seeded", BeTrue())),
		))
		for _, key := range []client.ObjectKey{{Namespace: ns, Name: "tracked"}, untracked} {
			o := inspect(ctx, key)
			Expect(o.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}}), "%s", key)
			Expect(o.Owners(fieldpath.MakePathOrDie("status", "phase"))).To(ConsistOf(HaveField("Operation", metav1.ManagedFieldsOperationUpdate)),
				"%s: the phase, which no apply manager took, keeps its legacy owner", key)
		}
	})

	It("migrates many objects concurrently, reporting them in order", func(ctx context.Context) {
		var names []string
		for i := range 12 {
			name := fmt.Sprintf("w%02d", i)
			legacyObject(ctx, name)
			names = append(names, name)
		}
		r := run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=summary", "--apply", "--allow-active",
			"--concurrency", "4", "--progress", "-o", "name")
		Expect(r.err).NotTo(HaveOccurred())
		var progress, printed []string
		for i, name := range names {
			progress = append(progress, fmt.Sprintf("[%d/12] Widget %s/%s: migrated", i+1, ns, name))
			printed = append(printed, "widget.demo.statusapply.io/"+name)
		}
		Expect(progressLines(r.stderr)).To(Equal(progress))
		Expect(strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")).To(Equal(printed),
			"-o name lists the objects that changed, and nothing else: no summary, no warning")
		Expect(r.stderr).To(ContainSubstring("12 objects: 12 migrated, 0 unchanged, 0 failed"), "the summary is on stderr")
		for _, name := range names {
			Expect(inspect(ctx, client.ObjectKey{Namespace: ns, Name: name}).ConditionTypes()).
				To(Equal(map[string][]string{"summary": {"A", "B"}}))
		}

		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=summary", "--concurrency", "4", "--exit-code", "-o", "name")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(BeEmpty(), "nothing left to change")
	})

	It("reports a failing object and migrates the others, exiting non-zero", func(ctx context.Context) {
		key := legacyObject(ctx, "w1")

		r := run(ctx, "migrate", "widgets", "missing", "w1", "-n", ns, "--from", legacyManager+"=summary", "--apply", "--allow-active")
		Expect(r.err).To(HaveOccurred())
		Expect(r.err.Error()).To(ContainSubstring("1 of 2 objects failed to migrate"))
		Expect(cli.ExitCode(r.err)).To(Equal(2), "a failed object is an error, not a finding")
		Expect(r.stdout).To(MatchRegexp(`(?s)missing: failed.*w1: migrated`), "objects are reported in argument order")
		Expect(lineWith(r.stdout, "Widget "+ns+"/missing: failed:", "not found")).NotTo(BeEmpty())
		Expect(r.stdout).To(ContainSubstring("Widget " + ns + "/w1: migrated\n"))
		Expect(inspect(ctx, key).ConditionTypes()).To(Equal(map[string][]string{"summary": {"A", "B"}}))
	})

	It("refuses a plan with nothing to do before touching the cluster", func(ctx context.Context) {
		r := run(ctx, "migrate", "widgets", "-n", ns)
		Expect(r.err).To(MatchError(ContainSubstring("nothing to migrate")))
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", "legacy")
		Expect(r.err).To(MatchError(ContainSubstring("want KEY=MANAGER")))
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		r = run(ctx, "migrate", "widgets", "-n", ns, "--no-such-flag")
		Expect(cli.ExitCode(r.err)).To(Equal(2), "a flag error is a usage error")
	})

	It("refuses, with exit code 2 and before writing, a plan that matches nothing on the objects", func(ctx context.Context) {
		key := legacyObject(ctx, "w1")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "networking", widgets.CS("C", "True"))).To(Succeed())
		before := getWidget(ctx, key)

		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"widget/w1", "--from", "nosuch=x"}, "--from nosuch: no manager of that name on any of the 1 objects"},
			{[]string{"widgets", "--from", "nosuch=x", "--apply"}, "--from nosuch: no manager of that name"},
			{[]string{"widget/w1", "--from", "networking=x"}, "--from networking: not a legacy writer (Update)"},
			{[]string{"widget/w1", "--condition", "A=" + legacyManager}, "legacy is a legacy writer (Update) on 1 of the 1 objects"},
			{[]string{"widget/w1", "--condition", "Redy=readiness", "--apply"}, "--condition Redy: no manager holds that condition type"},
		} {
			r := run(ctx, append([]string{"migrate", "-n", ns}, tc.args...)...)
			Expect(r.err).To(MatchError(ContainSubstring(tc.want)), "%v", tc.args)
			Expect(cli.ExitCode(r.err)).To(Equal(2), "%v", tc.args)
			Expect(r.stdout).To(BeEmpty(), "%v: no per-object report for a refused plan", tc.args)
		}
		after := getWidget(ctx, key)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing was written")
	})

	It("exits 1 from a dry run that would change something only when asked with --exit-code", func(ctx context.Context) {
		legacyObject(ctx, "w1")
		args := []string{"migrate", "widgets", "-n", ns, "--from", legacyManager + "=summary", "--new-destination", "summary"}

		r := run(ctx, args...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(cli.ExitCode(r.err)).To(Equal(0))

		r = run(ctx, append(args, "--exit-code")...)
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("1 would change"), "the dry run still prints what would change")

		r = run(ctx, append(args, "--apply", "--allow-active", "--exit-code")...)
		Expect(r.err).NotTo(HaveOccurred(), "--exit-code does not apply to a real run")

		r = run(ctx, append(args, "--exit-code")...)
		Expect(r.err).NotTo(HaveOccurred(), "nothing left to change: a migrated fleet passes the check")
	})
})

// progressLines returns the lines of out that report progress, without
// the rate and time left that a run longer than a second adds.
func progressLines(out string) []string {
	var lines []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "[") {
			lines = append(lines, progressETA.ReplaceAllString(strings.TrimSuffix(line, "\n"), ""))
		}
	}
	return lines
}

// progressETA matches the rate and time left at the end of a progress line.
var progressETA = regexp.MustCompile(` \(\d+/s, \S+ left\)$`)
