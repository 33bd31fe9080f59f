package faults

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/testenv"
)

type widgetMutator = batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration]

// writer is a controller's view of the API: a client that counts its
// requests and responses, and an Applier through it.
type writer struct {
	client    client.Client
	requests  *testenv.Requests
	responses *testenv.Responses
	applier   *ssa.Applier
}

// newWriter returns a writer acting as cfg's user.
func newWriter(cfg *rest.Config, opts ...ssa.Option) *writer {
	GinkgoHelper()
	cfg, responses := testenv.WithResponses(cfg)
	c, requests, err := env.CountingClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	return &writer{client: c, requests: requests, responses: responses, applier: newApplier(c, opts...)}
}

func newApplier(c client.Client, opts ...ssa.Option) *ssa.Applier {
	GinkgoHelper()
	a, err := ssa.NewApplier(c, append([]ssa.Option{
		ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(env.Scheme)),
		ssa.WithRegisterer(nil),
	}, opts...)...)
	Expect(err).NotTo(HaveOccurred())
	return a
}

func (w *writer) reset() {
	w.requests.Reset()
	w.responses.Reset()
}

// status returns ac's status, allocating it when the manager owned none.
func status(ac *acv1alpha1.WidgetApplyConfiguration) *acv1alpha1.WidgetStatusApplyConfiguration {
	if ac.Status == nil {
		ac.WithStatus(acv1alpha1.WidgetStatus())
	}
	return ac.Status
}

// setCondition is a mutator that sets one condition.
func setCondition(condType string, st metav1.ConditionStatus, reason string) widgetMutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, w *v1alpha1.Widget) error {
		return ssa.SetCondition(&status(ac).Conditions, w.Status.Conditions, w.Generation,
			metav1.Condition{Type: condType, Status: st, Reason: reason, Message: reason})
	}
}

// planFor is a mutator that creates a plan when the object has none.
func planFor(id string) widgetMutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
		if observed.Status.Plan == nil {
			status(ac).WithPlan(acv1alpha1.WidgetPlan().WithID(id).WithCreatedBy(id).WithSteps("provision"))
		}
		return nil
	}
}

func createWidget(ctx context.Context, ns, name string) *v1alpha1.Widget {
	GinkgoHelper()
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.WidgetSpec{Replicas: 1}}
	Expect(env.Client.Create(ctx, w)).To(Succeed())
	return getWidget(ctx, client.ObjectKeyFromObject(w))
}

func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w := &v1alpha1.Widget{}
	Expect(env.Client.Get(ctx, key, w)).To(Succeed())
	return w
}

func conditionsOf(w *v1alpha1.Widget) map[string]metav1.ConditionStatus {
	out := map[string]metav1.ConditionStatus{}
	for _, c := range w.Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}

// ownsCondition reports whether manager's status Apply entry holds the condition of condType.
func ownsCondition(w *v1alpha1.Widget, manager, condType string) bool {
	GinkgoHelper()
	for _, mf := range w.ManagedFields {
		if mf.Manager != manager || mf.Subresource != "status" || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		Expect(set.FromJSON(mf.FieldsV1.GetRawReader())).To(Succeed())
		return set.Has(fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", condType)))
	}
	return false
}

// managers lists the field managers with an entry on w's status.
func managers(w *v1alpha1.Widget) []string {
	var out []string
	for _, mf := range w.ManagedFields {
		if mf.Subresource == "status" {
			out = append(out, mf.Manager)
		}
	}
	return out
}
