package demo

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// The few Widget helpers the steps use, written against the library alone:
// a shipped binary links no test package.

// widgetMutator is a status contribution for a Widget, as batcher.Status takes it.
type widgetMutator = batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration]

// newApplier returns an Applier writing through c that knows the example
// API's list and map markers. Its counters stay out of controller-runtime's
// global registry, which every writer of the demo would otherwise feed.
func newApplier(c client.Client) (*ssa.Applier, error) {
	return ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(c.Scheme())), ssa.WithRegisterer(nil))
}

// createWidget creates a Widget asking for one replica through c and returns
// it as read back from the server, ready to be the observed object of a batch.
func createWidget(ctx context.Context, c client.Client, ns, name string) (*v1alpha1.Widget, error) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.WidgetSpec{Replicas: 1}}
	if err := c.Create(ctx, w); err != nil {
		return nil, err
	}
	got := &v1alpha1.Widget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
		return nil, err
	}
	return got, nil
}

// widgetStatus returns ac's status, allocating it when the manager owned
// none: in incremental mode ac holds only what the manager owns.
func widgetStatus(ac *acv1alpha1.WidgetApplyConfiguration) *acv1alpha1.WidgetStatusApplyConfiguration {
	if ac.Status == nil {
		ac.WithStatus(acv1alpha1.WidgetStatus())
	}
	return ac.Status
}

// putCondition is a mutator that sets cond through ssa.SetCondition, which
// keeps the observed lastTransitionTime while the status is unchanged.
func putCondition(cond metav1.Condition) widgetMutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
		return ssa.SetCondition(&widgetStatus(ac).Conditions, observed.Status.Conditions, observed.Generation, cond)
	}
}

// removeCondition is a mutator that drops one condition from what its
// manager owns; the Applier refuses it while another manager owns it too. A
// manager that owns no status has nothing to drop, and is not given an empty
// status.
func removeCondition(condType string) widgetMutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		if ac.Status != nil {
			ac.Status.Conditions = slices.DeleteFunc(ac.Status.Conditions, func(c metav1ac.ConditionApplyConfiguration) bool {
				return c.Type != nil && *c.Type == condType
			})
		}
		return nil
	}
}

// planFor is the decision of a reconcile that creates a plan named id with
// steps when the observed object has none: a deterministic function of the
// observed object, as a guarded mutator must be.
func planFor(id string, steps ...string) widgetMutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
		if observed.Status.Plan == nil {
			widgetStatus(ac).WithPlan(acv1alpha1.WidgetPlan().WithID(id).WithCreatedBy(id).WithSteps(steps...))
		}
		return nil
	}
}
