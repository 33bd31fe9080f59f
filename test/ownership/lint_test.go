package ownership

import (
	"context"
	"maps"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/config/crd"
	"github.com/statusapply/statusapply/fleet"
)

var _ = Describe("CRD lint", func() {
	It("flags Gadget's atomic conditions and passes Widget, from the embedded manifests", func() {
		files, err := crd.Files()
		Expect(err).NotTo(HaveOccurred())
		var findings []fleet.Finding
		for _, name := range slices.Sorted(maps.Keys(files)) {
			f, err := fleet.LintManifest(name, files[name])
			Expect(err).NotTo(HaveOccurred())
			findings = append(findings, f...)
		}
		for _, f := range findings {
			GinkgoWriter.Println(f)
		}
		Expect(fleet.HasErrors(findings)).To(BeTrue())
		Expect(findings).To(ConsistOf(
			And(HaveField("File", "demo.statusapply.io_gadgets.yaml"), HaveField("CRD", "gadgets.demo.statusapply.io"),
				HaveField("Version", "v1alpha1"), HaveField("Path", "status.conditions"),
				HaveField("Severity", fleet.SeverityError), HaveField("Message", ContainSubstring("+listType=map"))),
			And(HaveField("File", "demo.statusapply.io_widgets.yaml"), HaveField("CRD", "widgets.demo.statusapply.io"),
				HaveField("Path", "status.plan.steps"), HaveField("Severity", fleet.SeverityWarning)),
		))
	})

	It("lints the CRDs as the API server serves them", func(ctx context.Context) {
		scheme := runtime.NewScheme()
		Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
		c, err := client.New(env.Config, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		widgets, gadgets := &apiextensionsv1.CustomResourceDefinition{}, &apiextensionsv1.CustomResourceDefinition{}
		Expect(c.Get(ctx, client.ObjectKey{Name: "widgets.demo.statusapply.io"}, widgets)).To(Succeed())
		Expect(c.Get(ctx, client.ObjectKey{Name: "gadgets.demo.statusapply.io"}, gadgets)).To(Succeed())

		Expect(fleet.HasErrors(fleet.LintCRDs(widgets))).To(BeFalse())
		findings := fleet.LintCRDs(gadgets)
		Expect(findings).To(ConsistOf(And(HaveField("Path", "status.conditions"), HaveField("Severity", fleet.SeverityError),
			HaveField("File", ""))))
	})
})
