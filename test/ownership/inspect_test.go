package ownership

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("inspecting managedFields", func() {
	It("reads typed and unstructured objects alike, and tells stripped objects apart", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		key := createWidget(ctx, ns, "inspected")
		legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
		Expect(widgets.ApplyExisting(ctx, env.Client, key, "networking", "B")).To(Succeed())
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("R", "True"))).To(Succeed())

		typed, err := ownership.Inspect(getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		Expect(env.Client.Get(ctx, key, u)).To(Succeed())
		untyped, err := ownership.Inspect(u)
		Expect(err).NotTo(HaveOccurred())

		for _, o := range []*ownership.Ownership{typed, untyped} {
			Expect(o.Object.String()).To(Equal("Widget " + ns + "/inspected"))
			Expect(o.ConditionTypes()).To(Equal(map[string][]string{
				legacyManager: {"A", "B"}, "networking": {"B"}, "readiness": {"R"},
			}))
			statusOfB := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "B"), "status")
			Expect(o.Owners(statusOfB)).To(ConsistOf(HaveField("Manager", legacyManager), HaveField("Manager", "networking")))
			Expect(o.Legacy()).To(ConsistOf(HaveField("Manager", legacyManager)))
			Expect(o.SharedStatusFields()).To(ContainElement(And(
				HaveField("Path", WithTransform(fieldpath.Path.String, Equal(`.status.conditions[type="B"].status`))),
				HaveField("Managers", Equal([]string{legacyManager, "networking"})),
			)))
		}

		By("an object read through a cache that strips managedFields")
		stripped := getWidget(ctx, key)
		stripped.ManagedFields = nil
		_, err = ownership.Inspect(stripped)
		Expect(err).To(MatchError(ownership.ErrNoManagedFields))
		Expect(err.Error()).To(ContainSubstring("Widget " + ns + "/inspected"))
	})
})
