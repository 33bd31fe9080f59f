package widgets

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// Condition types, one set per writer: a condition type has exactly one owner.
const (
	// ConditionReady is written by the readiness controller.
	ConditionReady = "Ready"
	// ConditionReachable is written by the networking controller.
	ConditionReachable = "Reachable"
	// ConditionPlanned is written by the planner controller.
	ConditionPlanned = "Planned"
)

// widgetMutator is a status function: it adds what it decides to one field
// manager's apply configuration of a Widget.
type widgetMutator = batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration]

// statusOf returns ac's status, allocating it when the manager owned none yet.
func statusOf(ac *acv1alpha1.WidgetApplyConfiguration) *acv1alpha1.WidgetStatusApplyConfiguration {
	if ac.Status == nil {
		ac.WithStatus(acv1alpha1.WidgetStatus())
	}
	return ac.Status
}

// setCondition sets one condition in ac, keeping its lastTransitionTime while
// its status does not change and stamping it with observed's generation, so
// that a reconcile that decides the same thing again applies nothing.
func setCondition(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget, cond metav1.Condition) error {
	return ssa.SetCondition(&statusOf(ac).Conditions, observed.Status.Conditions, observed.Generation, cond)
}

// queueStatus queues mutators, in order, for what manager applies to w's
// status. They all land in the same entry, so the batch sends them as one apply.
func queueStatus(b *batcher.Batch, w *v1alpha1.Widget, manager string, mutators ...widgetMutator) error {
	var errs []error
	for _, m := range mutators {
		errs = append(errs, batcher.Status(b, w, manager, m))
	}
	return errors.Join(errs...)
}
