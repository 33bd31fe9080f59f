package ownership

import (
	"context"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// manyObjects is how many Widgets the bulk migration spec migrates, the size
// of a fleet a migrating team meets.
const manyObjects = 1000

var _ = Describe("migrating many objects", func() {
	It("reports progress and accounts for every object", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		for i := range manyObjects {
			key := createWidget(ctx, ns, fmt.Sprintf("w%03d", i))
			legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "False"))
		}
		list := &v1alpha1.WidgetList{}
		Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(manyObjects))
		// One object vanishes between the list and the migration.
		list.Items = append(list.Items, v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"}})

		var seen []fleet.Progress
		m, err := fleet.NewMigrator(env.Client,
			fleet.Plan{
				Conditions: map[string]string{"A": "readiness", "B": "networking"},
				Managers:   map[string]string{legacyManager: "summary"},
			},
			fleet.WithDryRun(false),
			fleet.WithProgress(func(p fleet.Progress) { seen = append(seen, p) }))
		Expect(err).NotTo(HaveOccurred())

		report, err := m.MigrateList(ctx, list)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Println(report)

		Expect(seen).To(HaveLen(manyObjects + 1))
		for i, p := range seen {
			Expect(p.Done).To(Equal(i + 1))
			Expect(p.Total).To(Equal(manyObjects + 1))
		}
		Expect(seen[manyObjects].Err).To(HaveOccurred())

		Expect(report.Results).To(HaveLen(manyObjects))
		Expect(report.Changed()).To(Equal(manyObjects))
		Expect(report.Errors).To(HaveLen(1))
		var oe *ownership.ObjectError
		Expect(errors.As(report.Errors[0], &oe)).To(BeTrue())
		Expect(oe.Object.String()).To(Equal("Widget " + ns + "/gone"))
		Expect(apierrors.IsNotFound(report.Err())).To(BeTrue())

		Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for i := range list.Items {
			o, err := ownership.Inspect(&list.Items[i])
			Expect(err).NotTo(HaveOccurred())
			Expect(o.Legacy()).To(BeEmpty(), "%s", o.Object)
			Expect(o.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A"}, "networking": {"B"}}), "%s", o.Object)
		}

		By("a second run finds nothing to do")
		again, err := m.MigrateList(ctx, list)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Err()).NotTo(HaveOccurred())
		Expect(again.Changed()).To(BeZero())
	})
})
