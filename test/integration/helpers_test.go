package integration

import (
	"errors"
	"time"

	"context"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// removeCondition is a mutator that releases one condition.
func removeCondition(condType string) widgetMutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		ssa.RemoveCondition(&status(ac).Conditions, condType)
		return nil
	}
}

// newApplier returns an Applier through a counting client for the example API.
func newApplier(opts ...ssa.Option) (*ssa.Applier, client.Client, *testenv.Requests) {
	c, requests, err := env.CountingClient()
	Expect(err).NotTo(HaveOccurred())
	opts = append([]ssa.Option{
		ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(env.Scheme)),
		ssa.WithRegisterer(nil),
	}, opts...)
	a, err := ssa.NewApplier(c, opts...)
	Expect(err).NotTo(HaveOccurred())
	return a, c, requests
}

// createWidget creates a Widget and returns it as read back from the server.
func createWidget(ctx context.Context, ns, name string) *v1alpha1.Widget {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.WidgetSpec{Replicas: 1}}
	Expect(env.Client.Create(ctx, w)).To(Succeed())
	return getWidget(ctx, client.ObjectKeyFromObject(w))
}

func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
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

// sleepPastSecond waits until the wall clock has moved to the next second,
// the resolution of lastTransitionTime.
func sleepPastSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
}

var errFalseClaim = errors.New("the claim does not hold")
