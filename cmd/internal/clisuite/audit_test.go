package clisuite

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// auditJSON is the output of `audit -o json`: a StatusAudit, whose fields
// are fleet.AuditReport's plus the command's own.
type auditJSON struct {
	typeMetaJSON      `json:",inline"`
	Resource          string `json:"resource"`
	Namespace         string `json:"namespace"`
	fleet.AuditReport `json:",inline"`
	MigrateCommand    string `json:"migrateCommand"`
}

var _ = Describe("audit", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	legacyObject := func(ctx context.Context, name string) client.ObjectKey { return createLegacyWidget(ctx, ns, name) }
	// untrackedObject creates a Widget with the same status whose
	// managedFields were never recorded: created and merge-patched only.
	untrackedObject := func(ctx context.Context, name string) client.ObjectKey {
		key := legacyObject(ctx, name)
		clearManagedFields(ctx, key)
		return key
	}
	// applyExisting makes manager co-own condType with the same values.
	applyExisting := func(ctx context.Context, key client.ObjectKey, manager, condType string) {
		Expect(widgets.ApplyExisting(ctx, env.Client, key, manager, condType)).To(Succeed())
	}

	audit := func(ctx context.Context, extra ...string) (result, auditJSON) {
		r := run(ctx, append([]string{"audit", "widgets", "-n", ns, "-o", "json", "--chunk-size", "2"}, extra...)...)
		var out auditJSON
		if r.err == nil {
			decode(r, &out)
		}
		return r, out
	}

	It("summarises a mixed fleet exactly, and the migrate flags it prints are accepted and finish the job", func(ctx context.Context) {
		By("two untracked objects, two that saw a first apply, three the legacy writer shares with apply managers")
		untrackedObject(ctx, "u1")
		untrackedObject(ctx, "u2")
		for _, name := range []string{"f1", "f2"} {
			key := untrackedObject(ctx, name)
			applyExisting(ctx, key, "wa", "A") // the first apply: the rest goes to before-first-apply
		}
		for _, name := range []string{"m1", "m2", "m3"} {
			key := legacyObject(ctx, name)
			applyExisting(ctx, key, "wa", "A")
			applyExisting(ctx, key, "wb", "B")
		}
		// One field two managers own: the phase, on m1.
		Expect(widgets.ApplyPhase(ctx, env.Client, widgetKey(ns, "m1"), "summary", "Running")).To(Succeed())

		By("the audit, in pages of two objects")
		r, out := audit(ctx)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(out.APIVersion).To(Equal(documentGroupVersion))
		Expect(out.Kind).To(Equal("StatusAudit"))
		Expect(out.Resource).To(Equal("widgets.demo.statusapply.io"))
		Expect(out.Namespace).To(Equal(ns))
		Expect(out.Objects).To(Equal(7))
		Expect(out.Untracked.Objects).To(Equal(2))
		Expect(out.Untracked.Examples).To(ConsistOf("Widget "+ns+"/u1", "Widget "+ns+"/u2"))
		Expect(out.BeforeFirstApply.Objects).To(Equal(2))
		Expect(out.Unreadable).To(BeEmpty())

		type summary struct {
			Operation, Subresource string
			Objects                int
			Conditions, Fields     []fleet.FieldCount
		}
		statusWriters := map[string]summary{}
		for _, m := range out.Managers {
			if len(m.Conditions) == 0 && len(m.OtherStatusFields) == 0 {
				continue // whoever created the objects
			}
			Expect(statusWriters).NotTo(HaveKey(m.Manager), "one entry per status writer")
			statusWriters[m.Manager] = summary{m.Operation, m.Subresource, m.Objects, m.Conditions, m.OtherStatusFields}
			if m.Operation == "Apply" {
				// Each apply set values the object already had: the API
				// server records no time for a write that changed nothing.
				Expect(m.LastWrite).To(BeNil(), m.Manager)
			} else {
				Expect(m.LastWrite).NotTo(BeNil(), m.Manager)
			}
		}
		fc := func(pairs ...any) []fleet.FieldCount {
			out := []fleet.FieldCount{}
			for i := 0; i < len(pairs); i += 2 {
				out = append(out, fleet.FieldCount{Name: pairs[i].(string), Objects: pairs[i+1].(int)})
			}
			return out
		}
		bfa := statusWriters[ownership.BeforeFirstApplyManager]
		Expect(bfa.Operation).To(Equal("Update"))
		Expect(bfa.Objects).To(Equal(2))
		Expect(bfa.Conditions).To(Equal(fc("A", 2, "B", 2)))
		Expect(bfa.Fields).To(Equal(fc(".status.phase", 2)))
		delete(statusWriters, ownership.BeforeFirstApplyManager)
		Expect(statusWriters).To(Equal(map[string]summary{
			legacyManager: {"Update", "status", 3, fc("A", 3, "B", 3), fc(".status.phase", 3)},
			"wa":          {"Apply", "status", 5, fc("A", 5), fc()},
			"wb":          {"Apply", "status", 3, fc("B", 3), fc()},
			"summary":     {"Apply", "status", 1, fc(), fc(".status.phase", 1)},
		}))

		By("the legacy writer wrote just now: it is still active")
		Expect(out.ActiveLegacyWriters).To(HaveLen(1))
		Expect(out.ActiveLegacyWriters[0].Manager).To(Equal(legacyManager))
		Expect(out.ActiveLegacyWriters[0].Objects).To(Equal(3))

		By("shared fields: condition A with wa, B with wb, the phase with summary")
		shared := map[string]int{}
		for _, s := range out.SharedFields {
			shared[s.Path+" "+strings.Join(s.Managers, ",")] = s.Objects
		}
		want := map[string]int{".status.phase " + legacyManager + ",summary": 1}
		for _, f := range []string{"lastTransitionTime", "message", "reason", "status", "type"} {
			want[`.status.conditions[type="A"].`+f+" "+legacyManager+",wa"] = 3
			want[`.status.conditions[type="A"].`+f+" "+ownership.BeforeFirstApplyManager+",wa"] = 2
			want[`.status.conditions[type="B"].`+f+" "+legacyManager+",wb"] = 3
		}
		Expect(shared).To(Equal(want))

		By("the schema: read from the cluster, conditions a map-list")
		Expect(out.Schema.Checked).To(BeTrue())
		Expect(out.Schema.CRD).To(Equal("widgets.demo.statusapply.io"))
		Expect(out.Schema.Findings).NotTo(ContainElement(HaveField("Severity", "error")))

		By("the verdict")
		flags := []string{"--condition", "A=wa", "--condition", "B=wb",
			"--from", "before-first-apply=summary", "--from", legacyManager + "=summary", "--release-shared"}
		Expect(out.Verdict.MigrationNeeded).To(BeTrue())
		Expect(out.Verdict.Flags).To(Equal(flags))
		Expect(out.Verdict.Unresolved).To(BeEmpty())
		Expect(out.MigrateCommand).To(Equal("statusapply migrate widgets -n " + ns + " " + strings.Join(flags, " ")))

		By("--exit-code: findings exit 1")
		r, _ = audit(ctx, "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(1))

		By("the table says the same: the tables on stdout, the count, the verdict and the notes on stderr")
		r = run(ctx, "audit", "widgets", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(HavePrefix("widgets.demo.statusapply.io in namespace " + ns +
			": 7 objects, 2 never tracked (no managedFields), 2 with before-first-apply\n"))
		Expect(r.stdout).To(HavePrefix("MANAGER "))
		Expect(lineWith(r.stdout, legacyManager+" ", "Update", "status", " 3 ", "A(3),B(3)", ".status.phase(3)",
			"legacy writer; active within 24h")).NotTo(BeEmpty())
		Expect(lineWith(r.stdout, "condition A", legacyManager+",wa", " 3")).NotTo(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("\nmigrate: " + out.MigrateCommand + "\n"))
		Expect(r.stderr).To(ContainSubstring("\nnote: "))

		By("--no-headers: stdout holds the rows alone, for a pipe")
		r = run(ctx, "audit", "widgets", "-n", ns, "--no-headers")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).NotTo(BeEmpty())
		for line := range strings.Lines(r.stdout) {
			Expect(line).NotTo(Or(ContainSubstring(": "), ContainSubstring("MANAGER")), "a line that is no table row")
		}
		Expect(lineWith(r.stdout, legacyManager+" ", "Update", "status", " 3 ")).NotTo(BeEmpty())
		Expect(r.stderr).To(HavePrefix("widgets.demo.statusapply.io in namespace " + ns + ": 7 objects"))
		Expect(r.stderr).To(ContainSubstring("\nmigrate: " + out.MigrateCommand + "\n"))

		By("as the kubectl plugin, the command to run says kubectl statusapply, unquoted")
		r = runPlugin(ctx, "audit", "widgets", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("\nmigrate: kubectl " + out.MigrateCommand + "\n"))
		r = runPlugin(ctx, "audit", "widgets", "-n", ns, "-o", "jsonpath={.migrateCommand}")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(Equal("kubectl " + out.MigrateCommand))
		Expect(r.stderr).To(BeEmpty())

		By("the printed command, as printed, is accepted by migrate: a dry run first")
		args := strings.Fields(strings.TrimPrefix(out.MigrateCommand, "statusapply "))
		r = run(ctx, args...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("dry run: 7 objects, 7 would change, 0 unchanged, 0 failed"))

		Expect(r.stderr).To(ContainSubstring("warning: legacy writer legacy wrote 3 objects within 24h"))
		Expect(r.stderr).To(ContainSubstring("--apply refuses to take its fields until it is switched to apply or stopped"))

		By("--apply refuses while the legacy writer is active: the migration would remove the entries that show it, " +
			"and the audit after it would pass although the writer goes on")
		r = run(ctx, append(args, "--apply")...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(HavePrefix("not migrating from a legacy writer still active: legacy wrote 3 objects within 24h (last ")))
		Expect(r.err).To(MatchError(ContainSubstring("--allow-active migrates anyway")))
		Expect(r.stdout).To(BeEmpty())
		_, again := audit(ctx)
		Expect(again.ActiveLegacyWriters).To(HaveLen(1), "nothing was written: the audit still sees the writer")

		By("then for real, told the writer is switched; the audit again finds nothing left to migrate")
		r = run(ctx, append(args, "--apply", "--allow-active")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(MatchRegexp(`(?m)^7 objects: 7 migrated, 0 unchanged, 0 failed\nwarning: legacy writer legacy wrote 3 objects `+
			`within 24h \(last [^)]+ ago\): migrated from it anyway \(--allow-active\); its next write takes its fields back$`),
			"the summary says the source was active")
		r, out = audit(ctx, "--exit-code")
		Expect(r.err).NotTo(HaveOccurred(), "no findings left: exit 0")
		Expect(out.Objects).To(Equal(7))
		Expect(out.Untracked.Objects).To(BeZero())
		Expect(out.Verdict.MigrationNeeded).To(BeFalse())
		Expect(out.Verdict.Flags).To(BeEmpty())
		Expect(out.ActiveLegacyWriters).To(BeEmpty())
		for _, m := range out.Managers {
			if len(m.Conditions)+len(m.OtherStatusFields) > 0 {
				Expect(m.Operation).To(Equal("Apply"), "%s still owns status as %s", m.Manager, m.Operation)
			}
		}
		for _, name := range []string{"u1", "f1", "m1", "m3"} {
			Expect(conditions(ctx, widgetKey(ns, name))).To(Equal(widgets.CS("A", "True", "B", "True")), name)
		}

		By("an apply manager can now drop its own condition: no legacy owner keeps it alive")
		Expect(widgets.ApplyConditions(ctx, env.Client, widgetKey(ns, "m2"), "wb", nil)).To(Succeed())
		Expect(conditions(ctx, widgetKey(ns, "m2"))).To(Equal(widgets.CS("A", "True")))
	})

	It("reports what it cannot check instead of failing, and an empty selection", func(ctx context.Context) {
		r := run(ctx, "audit", "configmaps", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("schema: not checked: configmaps is a built-in resource"))
		Expect(r.stdout).To(BeEmpty(), "no object and no schema: no table")

		r = run(ctx, "audit", "widgets", "-n", ns, "-l", "app=none")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("no widgets.demo.statusapply.io found in namespace " + ns + " matching app=none"))
		Expect(r.stderr).To(ContainSubstring("migrate: nothing to migrate"))
		Expect(r.stdout).To(HavePrefix("SCHEMA FINDING "), "the schema's table alone")
		Expect(r.stdout).NotTo(ContainSubstring("migrate:"))

		r = run(ctx, "audit", "widgets,gadgets", "-n", ns)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err.Error()).To(ContainSubstring("one resource type at a time"))

		By("--exit-code on nothing fails, saying why, unless --allow-empty")
		r = run(ctx, "audit", "widgets", "-n", ns, "-l", "app=none", "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.err).To(MatchError("nothing audited: no widgets.demo.statusapply.io found in namespace " + ns +
			" matching app=none; give --allow-empty if nothing is expected"))
		Expect(r.stdout).To(HavePrefix("SCHEMA FINDING "))
		r = run(ctx, "audit", "widgets", "-n", ns, "-l", "app=none", "--exit-code", "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1), "a document is no excuse")
		r = run(ctx, "audit", "widgets", "-n", ns, "-l", "app=none", "--exit-code", "--allow-empty")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(cli.ExitCode(r.err)).To(Equal(0))

		By("the control: the same gate on objects without findings passes")
		untrackedObject(ctx, "clean")
		r = run(ctx, "migrate", "widgets", "-n", ns, "--from", "before-first-apply=summary", "--new-destination", "summary", "--apply")
		Expect(r.err).NotTo(HaveOccurred(), "before-first-apply is never an active writer")
		r = run(ctx, "audit", "widgets", "-n", ns, "--exit-code")
		Expect(r.err).NotTo(HaveOccurred())

		By("object names are a usage error, in one line")
		r = run(ctx, "audit", "widgets", "w1", "-n", ns)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError("audit takes one resource type, not 2 arguments (widgets w1): it audits every object " +
			"of the type; narrow it with -n or -l (see 'statusapply audit --help')"))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(BeEmpty(), "no usage dump")
	})
})
