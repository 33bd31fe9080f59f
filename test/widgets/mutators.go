package widgets

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// Mutator is a status contribution for a Widget, as batcher.Status takes it.
type Mutator = batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration]

// Status returns ac's status, allocating it when the manager owned none: in
// incremental mode ac holds only what the manager owns, so a manager's first
// contribution finds no status to add to.
func Status(ac *acv1alpha1.WidgetApplyConfiguration) *acv1alpha1.WidgetStatusApplyConfiguration {
	if ac.Status == nil {
		ac.WithStatus(acv1alpha1.WidgetStatus())
	}
	return ac.Status
}

// PutCondition is a mutator that sets cond through ssa.SetCondition, which
// keeps the observed lastTransitionTime while the status is unchanged and
// takes observedGeneration from the observed object.
func PutCondition(cond metav1.Condition) Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
		return ssa.SetCondition(&Status(ac).Conditions, observed.Status.Conditions, observed.Generation, cond)
	}
}

// SetCondition is a mutator that sets one condition, its message being its
// reason: the specs tell values apart by reason alone.
func SetCondition(condType string, status metav1.ConditionStatus, reason string) Mutator {
	return PutCondition(metav1.Condition{Type: condType, Status: status, Reason: reason, Message: reason})
}

// RemoveCondition is a mutator that drops one condition from what its
// manager owns (its apply configuration); the Applier refuses the apply with
// ssa.ErrRemovesForeignField while another manager owns the condition too. A
// manager that owns no status has nothing to drop, and is not given an empty
// status, which it would then apply.
func RemoveCondition(condType string) Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		if ac.Status != nil {
			ac.Status.Conditions = slices.DeleteFunc(ac.Status.Conditions, func(c metav1ac.ConditionApplyConfiguration) bool {
				return c.Type != nil && *c.Type == condType
			})
		}
		return nil
	}
}

// PlanFor is the decision of a reconcile that creates a plan: a plan named id,
// created by id, with steps, when the observed object has none. It is a
// deterministic function of the observed object, as a guarded mutator must be:
// on a retry it sees the plan another reconcile wrote, and writes nothing.
func PlanFor(id string, steps ...string) Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
		if observed.Status.Plan == nil {
			Status(ac).WithPlan(acv1alpha1.WidgetPlan().WithID(id).WithCreatedBy(id).WithSteps(steps...))
		}
		return nil
	}
}
