package clisuite

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/cmd/internal/cli"
)

var _ = Describe("lint", func() {
	var gadgets, widgets string

	BeforeEach(func() {
		gadgets = crdFile("demo.statusapply.io_gadgets.yaml")
		widgets = crdFile("demo.statusapply.io_widgets.yaml")
	})

	It("fails on Gadget's atomic conditions and names file, CRD, version and path", func(ctx context.Context) {
		r := run(ctx, "lint", gadgets, widgets)
		Expect(r.err).To(HaveOccurred(), "an error finding fails the command")
		Expect(r.err.Error()).To(ContainSubstring("lint found 1 error"))
		Expect(cli.ExitCode(r.err)).To(Equal(1), "findings exit 1")
		Expect(lineWith(r.stdout, "SOURCE", "CRD", "VERSION", "PATH", "SEVERITY", "MESSAGE")).NotTo(BeEmpty())
		Expect(lineWith(r.stdout, gadgets, "gadgets.demo.statusapply.io", "v1alpha1", "status.conditions", "error",
			"+listType=map and +listMapKey=type")).NotTo(BeEmpty())
		Expect(lineWith(r.stdout, widgets, "widgets.demo.statusapply.io", "v1alpha1", "status.plan.steps", "warning")).NotTo(BeEmpty())
		Expect(r.stdout).NotTo(ContainSubstring("checked"), "the summary line is not part of the table")
		Expect(r.stderr).To(ContainSubstring("2 CRDs checked: 1 error, 1 warning\n"))

		r = run(ctx, "lint", gadgets, "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		var out lintJSON
		decode(r, &out)
		Expect(out.APIVersion).To(Equal(documentGroupVersion))
		Expect(out.Kind).To(Equal("LintFindingList"))
		Expect(out.Summary.CRDs).To(Equal(1))
		Expect(out.Summary.Errors).To(Equal(1))
		Expect(out.Items).To(ContainElement(And(HaveField("Kind", "LintFinding"),
			HaveField("File", gadgets), HaveField("CRD", "gadgets.demo.statusapply.io"), HaveField("Version", "v1alpha1"),
			HaveField("Path", "status.conditions"), HaveField("Severity", "error"), HaveField("Message", ContainSubstring("atomic")),
		)))
	})

	It("passes with warnings only for the Widget CRD", func(ctx context.Context) {
		r := run(ctx, "lint", widgets)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(cli.ExitCode(r.err)).To(Equal(0))
		Expect(r.stderr).To(ContainSubstring("1 CRD checked: 0 errors, 1 warning"))

		r = run(ctx, "lint", widgets, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var out lintJSON
		decode(r, &out)
		Expect(out.Summary.Errors).To(BeZero())
		Expect(out.Summary.Warnings).To(Equal(1))
		Expect(out.Items).To(HaveEach(HaveField("Severity", "warning")))

		By("-o yaml, jsonpath and name")
		r = run(ctx, "lint", widgets, "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(HavePrefix("apiVersion: " + documentGroupVersion + "\n"))
		Expect(r.stdout).To(ContainSubstring("kind: LintFindingList\n"))
		r = run(ctx, "lint", gadgets, widgets, "-o", "jsonpath={.summary.errors} {.items[*].severity}")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.stdout).To(Equal("1 error warning"))
		Expect(r.stderr).NotTo(ContainSubstring("checked"), "a document holds the counts")
		r = run(ctx, "lint", gadgets, widgets, "-o", "name")
		Expect(r.stdout).To(Equal("customresourcedefinition.apiextensions.k8s.io/gadgets.demo.statusapply.io\n"+
			"customresourcedefinition.apiextensions.k8s.io/widgets.demo.statusapply.io\n"), "the names and nothing else")
		Expect(r.stderr).To(Equal("2 CRDs checked: 1 error, 1 warning\n"))

		By("--no-headers: the rows alone on stdout, ready for a pipe")
		r = run(ctx, "lint", gadgets, widgets, "--no-headers")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")).To(HaveExactElements(
			HavePrefix(gadgets+" "), HavePrefix(widgets+" ")), "one row per finding, no header, no summary")
		Expect(r.stderr).To(Equal("2 CRDs checked: 1 error, 1 warning\n"))
	})

	It("checks the cluster's CRDs without files, or with --cluster-crds", func(ctx context.Context) {
		r := run(ctx, "lint")
		Expect(r.err).To(HaveOccurred(), "the cluster serves Gadget")
		Expect(lineWith(r.stdout, "cluster", "gadgets.demo.statusapply.io", "status.conditions", "error")).NotTo(BeEmpty())
		Expect(lineWith(r.stdout, "cluster", "widgets.demo.statusapply.io", "status.plan.steps", "warning")).NotTo(BeEmpty())

		r = run(ctx, "lint", widgets, "--cluster-crds", "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		var out lintJSON
		decode(r, &out)
		Expect(out.Summary.CRDs).To(Equal(4), "one CRD from the file, three from the cluster")
		Expect(out.Summary.Errors).To(Equal(1))
		Expect(out.Items).To(ContainElement(And(HaveField("File", ""), HaveField("CRD", "gadgets.demo.statusapply.io"))))
		Expect(out.Items).To(ContainElement(And(HaveField("File", widgets), HaveField("Severity", "warning"))))
	})

	It("warns, without failing, on a served version that is not the storage version, and lints only --version", func(ctx context.Context) {
		machines := machineCRDFile()

		By("every served version: v1beta1's atomic conditions are a warning naming the storage version")
		r := run(ctx, "lint", machines)
		Expect(r.err).NotTo(HaveOccurred(), "a warning does not fail lint")
		Expect(lineWith(r.stdout, machines, machineCRDName, "v1beta1", "status.conditions", "warning",
			"is served but is not the storage version (v1beta2)", "crds-you-do-not-own.md")).NotTo(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("1 CRD checked: 0 errors, 1 warning"))

		r = run(ctx, "lint", machines, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var out lintJSON
		decode(r, &out)
		Expect(out.Summary.Errors).To(BeZero())
		Expect(out.Items).To(ConsistOf(And(HaveField("Version", "v1beta1"), // v1beta2 is clean HaveField("Path", "status.conditions"),
			HaveField("Severity", "warning"), HaveField("Message", ContainSubstring("--version v1beta2")))))

		By("--version v1beta2: only the version the writers send, which is clean")
		r = run(ctx, "lint", machines, "--version", "v1beta2")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(BeEmpty(), "no finding, no table")
		Expect(r.stderr).To(Equal("1 CRD checked: 0 errors, 0 warnings\n"))

		By("the cluster's CRDs: the same warning from the installed CRD; --version skips Gadget's v1alpha1")
		r = run(ctx, "lint")
		Expect(lineWith(r.stdout, "cluster", machineCRDName, "v1beta1", "status.conditions", "warning")).NotTo(BeEmpty())
		r = run(ctx, "lint", "--version", "v1beta2", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred(), "Gadget's atomic conditions are in v1alpha1, not checked")
		decode(r, &out)
		Expect(out.Items).To(BeEmpty())

		By("the controls: the storage version's error still fails, and a version nothing serves is a usage error")
		r = run(ctx, "lint", machines, crdFile("demo.statusapply.io_gadgets.yaml"), "--version", "v1beta2", "--version", "v1alpha1")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("2 CRDs checked: 1 error, 0 warnings"))
		r = run(ctx, "lint", machines, "--version", "v1beta3")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err.Error()).To(ContainSubstring("--version v1beta3: no CRD checked serves it"))
	})

	It("refuses a file it cannot read, naming it, with exit code 2 (not a finding)", func(ctx context.Context) {
		r := run(ctx, "lint", crdFile("missing.yaml"))
		Expect(r.err).To(HaveOccurred())
		Expect(r.err.Error()).To(ContainSubstring("missing.yaml"))
		Expect(cli.ExitCode(r.err)).To(Equal(2))

		r = run(ctx, "lint", gadgets, crdFile("missing.yaml"))
		Expect(cli.ExitCode(r.err)).To(Equal(2), "a tool error wins over findings")
	})
})
