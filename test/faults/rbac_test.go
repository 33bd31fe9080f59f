package faults

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// statusWriterRole grants what a status writer through statusapply needs and
// nothing more: patch on the status subresource (an apply to an existing
// object is a patch) and get on the object, for guarded re-reads.
func statusWriterRole(ns string) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "widget-status-writer", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.SchemeGroupVersion.Group}, Resources: []string{"widgets/status"}, Verbs: []string{"patch"}},
			{APIGroups: []string{v1alpha1.SchemeGroupVersion.Group}, Resources: []string{"widgets"}, Verbs: []string{"get"}},
		},
	}
}

// newStatusWriter is a writer authenticated as user, bound in ns to
// statusWriterRole alone.
func newStatusWriter(ctx context.Context, ns, user string) *writer {
	GinkgoHelper()
	role := statusWriterRole(ns)
	Expect(env.Client.Create(ctx, role)).To(Succeed())
	Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "widget-status-writer", Namespace: ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
	})).To(Succeed())
	authn, err := env.Environment().ControlPlane.AddUser(envtest.User{Name: user}, nil)
	Expect(err).NotTo(HaveOccurred())
	return newWriter(authn.Config())
}

var _ = Describe("a status writer with least privilege", func() {
	const user = "status-writer"

	It("does all its work through statusapply with patch on widgets/status and get on widgets, and nothing else works", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		other := suite.Namespace(ctx, env)
		w := newStatusWriter(ctx, ns, user)

		obj := createWidget(ctx, ns, "w1")
		elsewhere := createWidget(ctx, other, "w1")
		key := client.ObjectKeyFromObject(obj)
		// The authorizer learns new bindings from its informers.
		Eventually(func(ctx context.Context) error {
			return w.client.Get(ctx, key, &v1alpha1.Widget{})
		}).WithContext(ctx).Should(Succeed())

		// The object as a cache would hand it over: read by another identity.
		observed := getWidget(ctx, key)
		b := batcher.New(w.applier)
		// Queued first, so that its apply carries the observed (soon stale)
		// resourceVersion.
		Expect(batcher.Status(b, observed, "planner", widgets.PlanFor("plan-1", "provision"), ssa.Guarded)).To(Succeed())
		Expect(batcher.Status(b, observed, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		Expect(batcher.Status(b, observed, "readiness", widgets.SetCondition("Available", metav1.ConditionFalse, "Starting"))).To(Succeed())
		Expect(batcher.Status(b, observed, "readiness", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithReadyReplicas(1).WithAttributes(map[string]string{"zone": "a"})
			return nil
		})).To(Succeed())

		// An administrator writes in between: the guarded apply must re-read.
		admin := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("10.0.0.1"))
		Expect(env.Client.Status().Apply(ctx, admin, client.FieldOwner("networking"))).To(Succeed())

		w.reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(b.Pending()).To(BeEmpty())
		Expect(w.responses.CountCode(403)).To(BeZero(), "%s", w.responses)
		Expect(w.responses.Count("apply", 409)).To(Equal(1), "the guarded apply was stale once: %s", w.responses)
		Expect(w.responses.Succeeded("get")).To(Equal(1), "and re-read the object with get: %s", w.responses)
		Expect(w.responses.Succeeded("apply")).To(Equal(2), "then the plan and the readiness entry landed: %s", w.responses)

		got := getWidget(ctx, key)
		Expect(got.Status.Plan).NotTo(BeNil())
		Expect(got.Status.Plan.ID).To(Equal("plan-1"))
		Expect(widgets.Conditions(got)).To(Equal(map[string]metav1.ConditionStatus{"Ready": "True", "Available": "False"}))
		Expect(got.Status.ReadyReplicas).To(BeEquivalentTo(1))
		Expect(got.Status.Attributes).To(Equal(map[string]string{"zone": "a"}))
		Expect(got.Status.Endpoint).To(Equal("10.0.0.1"), "the administrator's write stays")

		// Controls: the role really is that narrow.
		forbidden := map[string]error{}
		upd := got.DeepCopy()
		upd.Status.Phase = "Updated"
		forbidden["status update"] = w.client.Status().Update(ctx, upd)
		patched := got.DeepCopy()
		patched.Labels = map[string]string{"touched": "yes"}
		forbidden["merge patch of the object"] = w.client.Patch(ctx, patched, client.MergeFrom(got))
		forbidden["apply to the object"] = w.client.Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).
			WithLabels(map[string]string{"touched": "yes"}), client.FieldOwner("readiness"))
		forbidden["list"] = w.client.List(ctx, &v1alpha1.WidgetList{}, client.InNamespace(ns))
		forbidden["create"] = w.client.Create(ctx, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w2", Namespace: ns}})
		forbidden["delete"] = w.client.Delete(ctx, got.DeepCopy())
		forbidden["status apply in another namespace"] = w.client.Status().Apply(ctx,
			acv1alpha1.Widget(elsewhere.Name, other).WithStatus(acv1alpha1.WidgetStatus().WithPhase("Elsewhere")),
			client.FieldOwner("readiness"))
		b = batcher.New(w.applier)
		Expect(batcher.Status(b, elsewhere, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		forbidden["statusapply in another namespace"] = b.Flush(ctx)
		for what, err := range forbidden {
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", what, err)
		}
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(got.ResourceVersion), "none of them wrote")
		Expect(getWidget(ctx, client.ObjectKeyFromObject(elsewhere)).ResourceVersion).To(Equal(elsewhere.ResourceVersion))
	})
})
