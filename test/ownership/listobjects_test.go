package ownership

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/test/suite"
)

var _ = Describe("ListObjects", func() {
	It("yields every object page by page, stops when the caller stops, and feeds Audit", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		other := suite.Namespace(ctx, env)
		for i := range 5 {
			key := createWidget(ctx, ns, fmt.Sprintf("w%d", i))
			legacyWrite(ctx, key, "Running", map[string]metav1.ConditionStatus{"A": "True"})
		}
		createWidget(ctx, other, "elsewhere")
		gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")

		By("pages of two: three list requests for five objects, in the namespace asked for")
		c, requests, err := env.CountingClient()
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for obj, err := range fleet.ListObjects(ctx, c, gvk, 2, client.InNamespace(ns)) {
			Expect(err).NotTo(HaveOccurred())
			Expect(obj.GetManagedFields()).NotTo(BeEmpty(), "read from the API server, managedFields included")
			names = append(names, obj.GetName())
		}
		Expect(names).To(Equal([]string{"w0", "w1", "w2", "w3", "w4"}))
		Expect(requests.Count("get")).To(Equal(3))

		By("a caller that stops after the first object ends the listing there: no page beyond the next is read")
		requests.Reset()
		for _, err := range fleet.ListObjects(ctx, c, gvk, 2, client.InNamespace(ns)) {
			Expect(err).NotTo(HaveOccurred())
			break
		}
		// The pager may have fetched the next page meanwhile, never the third.
		Expect(requests.Count("get")).To(BeNumerically("<=", 2))

		By("an unknown kind is one error, not an empty fleet")
		r, err := fleet.Audit(fleet.ListObjects(ctx, c, v1alpha1.SchemeGroupVersion.WithKind("Nothing"), 2), fleet.AuditOptions{})
		Expect(err).To(HaveOccurred())
		Expect(r).To(BeNil())

		By("the audit of the pages")
		r, err = fleet.Audit(fleet.ListObjects(ctx, c, gvk, 2, client.InNamespace(ns)), fleet.AuditOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Objects).To(Equal(5))
		Expect(r.ActiveLegacyWriters).To(HaveLen(1))
		Expect(r.ActiveLegacyWriters[0].Objects).To(Equal(5))
	})
})
