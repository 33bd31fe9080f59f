package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/test/suite"
)

// These specs pin down, on a real API server, the two facts statusapply stands on.
var _ = Describe("status conditions with several writers", func() {
	var (
		ns  string
		key client.ObjectKey
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: ns}}
		Expect(env.Client.Create(ctx, w)).To(Succeed())
		key = client.ObjectKeyFromObject(w)
	})

	applyCondition := func(ctx context.Context, manager, condType string) error {
		ac := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithConditions(
			metav1ac.Condition().WithType(condType).WithStatus(metav1.ConditionTrue).
				WithReason("Set").WithMessage("set by " + manager).
				WithLastTransitionTime(metav1.Now()),
		))
		return env.Client.Status().Apply(ctx, ac, client.FieldOwner(manager))
	}

	conditionTypes := func(ctx context.Context) []string {
		w := &v1alpha1.Widget{}
		Expect(env.Client.Get(ctx, key, w)).To(Succeed())
		var types []string
		for _, c := range w.Status.Conditions {
			types = append(types, c.Type)
		}
		return types
	}

	It("keeps both writers' conditions when each applies its own type", func(ctx context.Context) {
		Expect(applyCondition(ctx, "readiness", "Ready")).To(Succeed())
		Expect(applyCondition(ctx, "networking", "Reachable")).To(Succeed())

		Expect(conditionTypes(ctx)).To(ConsistOf("Ready", "Reachable"))

		w := &v1alpha1.Widget{}
		Expect(env.Client.Get(ctx, key, w)).To(Succeed())
		owners := map[string]bool{}
		for _, mf := range w.ManagedFields {
			if mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "status" {
				owners[mf.Manager] = true
			}
		}
		Expect(owners).To(Equal(map[string]bool{"readiness": true, "networking": true}))
	})

	It("loses a condition when a merge patch is built from a stale snapshot (the control)", func(ctx context.Context) {
		stale := &v1alpha1.Widget{}
		Expect(env.Client.Get(ctx, key, stale)).To(Succeed())

		// Another writer sets its condition after the snapshot was taken.
		Expect(applyCondition(ctx, "networking", "Reachable")).To(Succeed())
		Expect(conditionTypes(ctx)).To(ConsistOf("Reachable"))

		// The stale writer merge-patches its own condition: the patch carries the
		// whole conditions array of its snapshot, which lacks Reachable.
		base := stale.DeepCopy()
		meta.SetStatusCondition(&stale.Status.Conditions, metav1.Condition{
			Type: "Ready", Status: metav1.ConditionTrue, Reason: "Set", Message: "set by readiness",
		})
		Expect(env.Client.Status().Patch(ctx, stale, client.MergeFrom(base))).To(Succeed())

		Expect(conditionTypes(ctx)).To(ConsistOf("Ready"), "the merge patch replaced the whole array")
	})

	It("conflicts on the whole list when conditions are atomic", func(ctx context.Context) {
		g := &v1alpha1.Gadget{ObjectMeta: metav1.ObjectMeta{Name: "g1", Namespace: ns}}
		Expect(env.Client.Create(ctx, g)).To(Succeed())
		apply := func(manager, condType string) error {
			ac := acv1alpha1.Gadget(g.Name, ns).WithStatus(acv1alpha1.GadgetStatus().WithConditions(
				metav1ac.Condition().WithType(condType).WithStatus(metav1.ConditionTrue).
					WithReason("Set").WithMessage("set").WithLastTransitionTime(metav1.Now()),
			))
			return env.Client.Status().Apply(ctx, ac, client.FieldOwner(manager))
		}
		Expect(apply("readiness", "Ready")).To(Succeed())
		err := apply("networking", "Reachable")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(".status.conditions"))
	})
})
