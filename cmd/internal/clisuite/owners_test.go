package clisuite

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("owners", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	// mixedObject creates a Widget written by a legacy merge-patch writer
	// (conditions A and B, the phase) and two apply managers: networking
	// shares B by applying it verbatim, readiness owns R alone.
	mixedObject := func(ctx context.Context, name string) {
		key := createWidget(ctx, ns, name)
		legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
		Expect(widgets.ApplyExisting(ctx, env.Client, key, "networking", "B")).To(Succeed())
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("R", "True"))).To(Succeed())
	}

	It("prints a table with one row per object, manager and condition or field, legacy and shared marked", func(ctx context.Context) {
		mixedObject(ctx, "w1")

		r := run(ctx, "owners", "widget/w1", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		Expect(lines[0]).To(MatchRegexp(`^NAME\s+MANAGER\s+OPERATION\s+SUBRESOURCE\s+OWNS\s+NOTES$`))
		Expect(lines[1:]).To(HaveEach(HavePrefix("w1 ")))
		row := func(parts ...string) string { return lineWith(r.stdout, parts...) }
		Expect(row(" legacy ", "Update", "status", "condition A ", "legacy writer")).NotTo(BeEmpty())
		Expect(row(" legacy ", "Update", "status", "condition B ", "legacy writer; shared with networking")).NotTo(BeEmpty())
		Expect(row(" legacy ", "Update", "status", ".status.phase ", "legacy writer")).NotTo(BeEmpty())
		Expect(row(" networking ", "Apply", "status", "condition B ", "shared with legacy")).NotTo(BeEmpty())
		readiness := row(" readiness ", "Apply", "status", "condition R ")
		Expect(readiness).NotTo(BeEmpty(), "the readiness row")
		Expect(readiness).NotTo(ContainSubstring("legacy writer"))
		Expect(readiness).NotTo(ContainSubstring("shared"))
		Expect(lines).To(HaveLen(6), "a header and five rows:\n%s", r.stdout)
		Expect(r.stderr).To(Equal("1 managedFields entry owns no status field and is not shown; --all-managers lists it\n"),
			"the creating client's entry is hidden by default")

		By("--all-managers lists the entry that only created the object")
		creator := ""
		for _, mf := range getWidget(ctx, client.ObjectKey{Namespace: ns, Name: "w1"}).ManagedFields {
			if mf.Subresource == "" {
				creator = mf.Manager
			}
		}
		Expect(creator).NotTo(BeEmpty())
		Expect(r.stdout).NotTo(ContainSubstring(" " + creator + " "))
		r = run(ctx, "owners", "widget/w1", "-n", ns, "--all-managers")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(lineWith(r.stdout, " "+creator+" ", "Update", "<none>", "no status field")).NotTo(BeEmpty(), "a row for the creating client")
		Expect(r.stderr).To(BeEmpty())

		By("-o wide adds the API version and the age of each entry; --no-headers drops the header")
		r = run(ctx, "owners", "widget/w1", "-n", ns, "-o", "wide", "--no-headers")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).NotTo(ContainSubstring("MANAGER"))
		Expect(lineWith(r.stdout, "w1 ", " readiness ", "condition R ", "demo.statusapply.io/v1alpha1")).To(MatchRegexp(`\s\d+s\s`))
	})

	It("does not list containers as owned fields, nor Kubernetes itself as a legacy writer", func(ctx context.Context) {
		key := createWidget(ctx, ns, "only-a")
		legacyWrite(ctx, key, "", widgets.CS("A", "True"))

		r := run(ctx, "owners", "widgets", "only-a", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(lineWith(r.stdout, " legacy ", "condition A ", "legacy writer")).NotTo(BeEmpty())
		Expect(r.stdout).NotTo(MatchRegexp(`\s\.status\s`), "a merge patch that set a condition does not own .status as a field")
		Expect(r.stdout).NotTo(ContainSubstring(".status.conditions "))
		var out ownersJSON
		decode(run(ctx, "owners", "widgets", "only-a", "-n", ns, "-o", "json"), &out)
		Expect(out.Items[0].Managers).To(ContainElement(And(HaveField("Manager", legacyManager),
			HaveField("Conditions", []string{"A"}), HaveField("OtherStatusFields", BeEmpty()))))

		By("the API server writes a CRD's status with Update on /status; it is no legacy writer")
		r = run(ctx, "owners", "customresourcedefinitions", "widgets.demo.statusapply.io")
		Expect(r.err).NotTo(HaveOccurred())
		apiserver := lineWith(r.stdout, "widgets.demo.statusapply.io ", " kube-apiserver ", "Update", "status", "condition Established")
		Expect(apiserver).NotTo(BeEmpty(), r.stdout)
		Expect(r.stdout).NotTo(ContainSubstring("legacy writer"))
		Expect(lineWith(r.stdout, " kube-apiserver ", ".status.acceptedNames.kind ")).NotTo(BeEmpty())
	})

	It("writes a StatusOwnershipList with every entry, legacy flags and shared fields", func(ctx context.Context) {
		mixedObject(ctx, "w1")

		r := run(ctx, "owners", "widgets.demo.statusapply.io/w1", "-n", ns, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var out ownersJSON
		decode(r, &out)
		Expect(out.APIVersion).To(Equal(documentGroupVersion))
		Expect(out.Kind).To(Equal("StatusOwnershipList"))
		Expect(out.Errors).To(BeEmpty())
		Expect(out.Items).To(HaveLen(1))
		obj := out.Items[0]
		Expect(obj.Kind).To(Equal("StatusOwnership"))
		Expect(obj.Object).To(Equal(objectRefJSON{APIVersion: "demo.statusapply.io/v1alpha1", Kind: "Widget", Namespace: ns, Name: "w1"}))
		Expect(obj.ManagedFields).To(BeTrue())
		Expect(obj.Note).To(BeEmpty())

		Expect(conditionsByManager(obj.Managers)).To(Equal(map[string][]string{
			legacyManager: {"A", "B"}, "networking": {"B"}, "readiness": {"R"},
		}))
		Expect(obj.Managers).To(ContainElement(And(
			HaveField("Manager", legacyManager), HaveField("Operation", "Update"), HaveField("Subresource", "status"),
			HaveField("Legacy", BeTrue()), HaveField("OtherStatusFields", ConsistOf(".status.phase")),
			HaveField("APIVersion", "demo.statusapply.io/v1alpha1"), HaveField("Time", Not(BeEmpty())),
		)))
		for _, apply := range []string{"networking", "readiness"} {
			Expect(obj.Managers).To(ContainElement(And(
				HaveField("Manager", apply), HaveField("Operation", "Apply"), HaveField("Subresource", "status"),
				HaveField("Legacy", BeFalse()), HaveField("OtherStatusFields", BeEmpty()),
			)))
		}
		Expect(obj.Managers).To(ContainElement(And(
			HaveField("Operation", "Update"), HaveField("Subresource", ""), HaveField("Conditions", BeEmpty()),
		)), "the document lists the creating client's entry too")

		Expect(obj.SharedStatusFields).NotTo(BeEmpty())
		for _, s := range obj.SharedStatusFields {
			Expect(s.Condition).To(Equal("B"), "only condition B is shared: %+v", s)
			Expect(s.Managers).To(Equal([]string{legacyManager, "networking"}))
		}
		Expect(obj.SharedStatusFields).To(ContainElement(HaveField("Path", `.status.conditions[type="B"].status`)))

		By("-o yaml prints the same document")
		r = run(ctx, "owners", "widget/w1", "-n", ns, "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(HavePrefix("apiVersion: " + documentGroupVersion + "\n"))
		Expect(r.stdout).To(ContainSubstring("kind: StatusOwnershipList\n"))
		Expect(r.stdout).To(ContainSubstring("- apiVersion: " + documentGroupVersion + "\n"))
	})

	It("prints names, jsonpath and go-template like kubectl get", func(ctx context.Context) {
		mixedObject(ctx, "w1")
		mixedObject(ctx, "w2")

		r := run(ctx, "owners", "widgets", "-n", ns, "-o", "name")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(Equal("widget.demo.statusapply.io/w1\nwidget.demo.statusapply.io/w2\n"))

		r = run(ctx, "owners", "widgets", "-n", ns, "-o", `jsonpath={range .items[*]}{.object.name}:{.managers[?(@.legacy==true)].manager}{"\n"}{end}`)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(Equal("w1:legacy\nw2:legacy\n"))

		r = run(ctx, "owners", "widgets", "-n", ns, "-o", `go-template={{range .items}}{{.object.name}} {{len .managers}}{{"\n"}}{{end}}`)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(Equal("w1 4\nw2 4\n"))

		r = run(ctx, "owners", "widgets", "-n", ns, "-o", "jsonpath={.items[0].nosuchfield}", "--allow-missing-template-keys=false")
		Expect(r.err).To(MatchError(ContainSubstring("nosuchfield is not found")))
		Expect(cli.ExitCode(r.err)).To(Equal(2))
	})

	It("lists a namespace, across namespaces with a NAMESPACE column, in chunks, and says when an object has no managedFields", func(ctx context.Context) {
		mixedObject(ctx, "w1")
		untracked := createWidget(ctx, ns, "w2")
		legacyWrite(ctx, untracked, "Pending", widgets.CS("A", "False"))
		clearManagedFields(ctx, untracked)

		r := run(ctx, "owners", "widgets", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(lineWith(r.stdout, "w1 ", " legacy ", "condition A ")).NotTo(BeEmpty())
		w2 := lineWith(r.stdout, "w2 ")
		Expect(w2).To(ContainSubstring("<unknown>"))
		Expect(w2).To(HaveSuffix("no managedFields (see the note below)"))
		Expect(r.stdout).NotTo(ContainSubstring("not the same as owned by nobody"), "the note does not widen the table")
		Expect(r.stderr).To(ContainSubstring("note: 1 object without managedFields: who owns its status is unknown, " +
			"which is not the same as owned by nobody; the first apply attributes every existing field to before-first-apply"))
		Expect(r.stdout).NotTo(ContainSubstring("no manager owns status fields"))

		r = run(ctx, "owners", "wd", "-A", "-o", "json")
		Expect(r.err).To(HaveOccurred(), "wd is no short name of Widget")
		Expect(r.err.Error()).To(ContainSubstring(`resource type "wd"`))
		Expect(cli.ExitCode(r.err)).To(Equal(2))

		r = run(ctx, "owners", "widget", "-A")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(MatchRegexp(`^NAMESPACE\s+NAME\s+MANAGER\s`))
		Expect(lineWith(r.stdout, ns+" ", " w1 ", " readiness ", "condition R ")).NotTo(BeEmpty())

		r = run(ctx, "owners", "widget", "-A", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var out ownersJSON
		decode(r, &out)
		names := map[string]bool{}
		for _, o := range out.Items {
			if o.Object.Namespace == ns {
				names[o.Object.Name] = o.ManagedFields
				if !o.ManagedFields {
					Expect(o.Managers).To(BeEmpty())
					Expect(o.Note).To(ContainSubstring("no managedFields"))
				}
			}
		}
		Expect(names).To(Equal(map[string]bool{"w1": true, "w2": false}))

		By("--chunk-size pages through the list")
		for i := range 5 {
			createWidget(ctx, ns, fmt.Sprintf("paged-%d", i))
		}
		for _, size := range []string{"1", "2", "500", "0"} {
			r = run(ctx, "owners", "widgets", "-n", ns, "-o", "name", "--chunk-size", size)
			Expect(r.err).NotTo(HaveOccurred())
			Expect(strings.Count(r.stdout, "\n")).To(Equal(7), "--chunk-size %s:\n%s", size, r.stdout)
		}
	})

	It("reports a missing object by name and still prints the others", func(ctx context.Context) {
		mixedObject(ctx, "w1")

		r := run(ctx, "owners", "widgets", "w1", "missing", "-n", ns)
		Expect(r.err).To(HaveOccurred())
		Expect(r.err.Error()).To(ContainSubstring("Widget " + ns + "/missing"))
		Expect(r.err.Error()).To(ContainSubstring("not found"))
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(lineWith(r.stdout, "w1 ", " legacy ")).NotTo(BeEmpty())

		var out ownersJSON
		r = run(ctx, "owners", "widget/w1", "widget/missing", "-n", ns, "-o", "json")
		decode(r, &out)
		Expect(out.Items).To(HaveLen(1))
		Expect(out.Errors).To(ConsistOf(HaveField("Object", "Widget "+ns+"/missing")))

		r = run(ctx, "owners", "widgets", "-n", ns, "-l", "app=none")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("no widgets.demo.statusapply.io found in namespace " + ns + " matching app=none"))
	})
})
