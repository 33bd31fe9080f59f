package cli

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

	It("prints a table of who owns which condition and field, legacy and shared marked", func(ctx context.Context) {
		mixedObject(ctx, "w1")

		r := run(ctx, "owners", "widget/w1", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(HavePrefix("Widget " + ns + "/w1\n"))
		Expect(lineWith(r.stdout, "MANAGER", "OPERATION", "SUBRESOURCE", "CONDITIONS", "OTHER STATUS FIELDS", "NOTES")).NotTo(BeEmpty())
		Expect(lineWith(r.stdout, " legacy ", "Update", "status", "A,B", ".status.phase",
			"legacy writer", "shares condition B with networking")).NotTo(BeEmpty(), "the legacy row")
		Expect(lineWith(r.stdout, " networking ", "Apply", "status", " B ", "shares condition B with legacy")).
			NotTo(BeEmpty(), "the networking row")
		readiness := lineWith(r.stdout, " readiness ", "Apply", "status", " R ")
		Expect(readiness).NotTo(BeEmpty(), "the readiness row")
		Expect(readiness).NotTo(ContainSubstring("legacy writer"))
		Expect(readiness).NotTo(ContainSubstring("shares"))
		Expect(r.stdout).To(ContainSubstring("1 more managedFields entry owns no status field; --all-managers lists them"),
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
		Expect(lineWith(r.stdout, " "+creator+" ", "Update")).NotTo(BeEmpty(), "a row for the creating client")
		Expect(r.stdout).NotTo(ContainSubstring("--all-managers lists them"))
	})

	It("writes JSON with every entry, legacy flags and shared fields", func(ctx context.Context) {
		mixedObject(ctx, "w1")

		r := run(ctx, "owners", "widgets.demo.statusapply.io/w1", "-n", ns, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var out ownersJSON
		decode(r, &out)
		Expect(out.Errors).To(BeEmpty())
		Expect(out.Objects).To(HaveLen(1))
		obj := out.Objects[0]
		Expect(obj.Kind).To(Equal("Widget"))
		Expect(obj.Namespace).To(Equal(ns))
		Expect(obj.Name).To(Equal("w1"))
		Expect(obj.ManagedFields).To(BeTrue())
		Expect(obj.Note).To(BeEmpty())

		Expect(conditionsByManager(obj.Managers)).To(Equal(map[string][]string{
			legacyManager: {"A", "B"}, "networking": {"B"}, "readiness": {"R"},
		}))
		Expect(obj.Managers).To(ContainElement(And(
			HaveField("Manager", legacyManager), HaveField("Operation", "Update"), HaveField("Subresource", "status"),
			HaveField("Legacy", BeTrue()), HaveField("OtherStatusFields", ContainElement(".status.phase")),
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
		)), "JSON lists the creating client's entry too")

		Expect(obj.SharedStatusFields).NotTo(BeEmpty())
		for _, s := range obj.SharedStatusFields {
			Expect(s.Condition).To(Equal("B"), "only condition B is shared: %+v", s)
			Expect(s.Managers).To(Equal([]string{legacyManager, "networking"}))
		}
		Expect(obj.SharedStatusFields).To(ContainElement(HaveField("Path", `.status.conditions[type="B"].status`)))
	})

	It("lists a namespace and says clearly when an object has no managedFields", func(ctx context.Context) {
		mixedObject(ctx, "w1")
		untracked := createWidget(ctx, ns, "w2")
		legacyWrite(ctx, untracked, "Pending", widgets.CS("A", "False"))
		clearManagedFields(ctx, untracked)

		r := run(ctx, "owners", "widgets", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(ContainSubstring("Widget " + ns + "/w1\n"))
		Expect(r.stdout).To(ContainSubstring("Widget " + ns + "/w2\n  no managedFields:"))
		Expect(r.stdout).To(ContainSubstring("not the same as owned by nobody"))
		Expect(r.stdout).NotTo(ContainSubstring("no manager owns status fields"))

		r = run(ctx, "owners", "wd", "-A", "-o", "json")
		Expect(r.err).To(HaveOccurred(), "wd is no short name of Widget")
		Expect(r.err.Error()).To(ContainSubstring(`resource type "wd"`))

		r = run(ctx, "owners", "widget", "-A", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var out ownersJSON
		decode(r, &out)
		names := map[string]bool{}
		for _, o := range out.Objects {
			if o.Namespace == ns {
				names[o.Name] = o.ManagedFields
				if !o.ManagedFields {
					Expect(o.Managers).To(BeEmpty())
					Expect(o.Note).To(ContainSubstring("no managedFields"))
				}
			}
		}
		Expect(names).To(Equal(map[string]bool{"w1": true, "w2": false}))
	})

	It("reports a missing object by name and still prints the others", func(ctx context.Context) {
		mixedObject(ctx, "w1")

		r := run(ctx, "owners", "widgets", "w1", "missing", "-n", ns)
		Expect(r.err).To(HaveOccurred())
		Expect(r.err.Error()).To(ContainSubstring("Widget " + ns + "/missing"))
		Expect(r.err.Error()).To(ContainSubstring("not found"))
		Expect(r.stdout).To(ContainSubstring("Widget " + ns + "/w1\n"))

		r = run(ctx, "owners", "widgets", "-n", ns, "-l", "app=none")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("no widgets.demo.statusapply.io found in namespace " + ns + " matching app=none"))
	})
})
