package schemas

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/config/crd"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
)

// widgetCRDWithout returns the Widget's CRD as an older one was: without the
// status fields named.
func widgetCRDWithout(fields ...string) *apiextensionsv1.CustomResourceDefinition {
	crds, err := crd.CRDs()
	Expect(err).NotTo(HaveOccurred())
	for _, c := range crds {
		if c.Spec.Names.Kind != "Widget" {
			continue
		}
		for i := range c.Spec.Versions {
			status := c.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["status"]
			for _, f := range fields {
				delete(status.Properties, f)
			}
			c.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["status"] = status
		}
		return c
	}
	Fail("no Widget CRD")
	return nil
}

// A writer of typed apply configurations whose schema is older than the CRD:
// its type can name a field the schema lacks, so each of its intents is typed
// before it is sent (a writer whose schema has every field of the type is not).
var _ = Describe("a typed writer whose schema is older than the CRD", func() {
	It("is refused an intent naming a field its schema lacks; sent as built, the intent locks the writer out", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w1"}}
		Expect(env.Client.Create(ctx, w)).To(Succeed())
		key := client.ObjectKeyFromObject(w)
		stale := newWriter(fromYAML(widgetCRDWithout("endpoint")))
		const manager = "networking"
		reconcile := func(mutate func(*acv1alpha1.WidgetStatusApplyConfiguration)) error {
			obs := &v1alpha1.Widget{}
			Expect(env.Client.Get(ctx, key, obs)).To(Succeed())
			b := batcher.New(stale.applier)
			Expect(batcher.Status(b, obs, manager, func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				st := acv1alpha1.WidgetStatus()
				mutate(st)
				ac.WithStatus(st)
				return nil
			})).To(Succeed())
			return b.Flush(ctx)
		}
		reachable := func(status metav1.ConditionStatus) func(*acv1alpha1.WidgetStatusApplyConfiguration) {
			return func(st *acv1alpha1.WidgetStatusApplyConfiguration) {
				st.WithConditions(metav1ac.Condition().WithType("Reachable").WithStatus(status).WithReason("Routed").
					WithMessage("m").WithLastTransitionTime(metav1.Unix(1700000000, 0)))
			}
		}
		endpoint := func(st *acv1alpha1.WidgetStatusApplyConfiguration) {
			reachable(metav1.ConditionTrue)(st)
			st.WithEndpoint("10.0.0.1")
		}
		read := func() *v1alpha1.Widget {
			got := &v1alpha1.Widget{}
			Expect(env.Client.Get(ctx, key, got)).To(Succeed())
			return got
		}

		By("an intent within its schema is sent")
		Expect(reconcile(reachable(metav1.ConditionTrue))).To(Succeed())
		Expect(stale.requests.Count("apply")).To(Equal(1), "%s", stale.requests)

		By("one naming status.endpoint, which its schema lacks, is refused before any request")
		stale.requests.Reset()
		err := reconcile(endpoint)
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(err).To(MatchError(ContainSubstring("the intent does not match the schema of Widget")))
		Expect(stale.requests.Total()).To(BeZero(), "%s", stale.requests)
		Expect(read().Status.Endpoint).To(BeEmpty())

		By("the control: the same intent sent as built, unchecked, writes status.endpoint for the manager")
		sent := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus())
		endpoint(sent.Status)
		Expect(env.Client.Status().Apply(ctx, sent, client.FieldOwner(manager))).To(Succeed())
		Expect(read().Status.Endpoint).To(Equal("10.0.0.1"))

		By("after which the writer's schema cannot read what it owns: every later write of it is refused")
		stale.requests.Reset()
		err = reconcile(reachable(metav1.ConditionFalse))
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(stale.requests.Count("apply")).To(BeZero(), "%s", stale.requests)
	})
})
