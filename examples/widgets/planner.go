package widgets

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conditions"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
)

// PlannerManager is the field manager of the planner controller.
const PlannerManager = "widgets-planner"

// Reasons of the Planned condition.
const (
	ReasonPlanCreated = "PlanCreated"
	ReasonNoPlan      = "NoPlan"
)

// planSteps are the steps of every plan the example creates.
func planSteps() []string { return []string{"provision", "configure", "verify"} }

// PlannerReconciler creates a Widget's plan once, when it observes none, and
// reports it with condition Planned.
//
// Creating the plan is a decision taken from observed state. Two reconciles
// that both observe no plan (two fast events, or a stale cache) would both
// create one, and since they apply as the same field manager the second
// silently replaces the first. The plan is therefore queued with
// ssa.Guarded: the apply carries the observed resourceVersion, and when
// the object changed meanwhile statusapply reads it again, runs the status
// functions against it (which now see the plan and create none) and retries.
type PlannerReconciler struct {
	// Reader reads Widgets: the manager's cache in a controller.
	Reader client.Reader
	// Applier is the process's shared Applier.
	Applier *ssa.Applier
	// Tuning holds the options every reconcile is wrapped with.
	Tuning

	// unguarded queues the plan without the guard. Only the tests set it, as
	// the control that shows the race the guard prevents.
	unguarded bool
}

// SetupWithManager registers the controller. It reconciles when the
// generation changes (to stamp Planned with it) and whenever it sees a Widget
// without a plan, so that a plan someone cleared is created again; the other
// controllers' status writes do not wake it.
func (r *PlannerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(PlannerManager).
		For(&v1alpha1.Widget{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{},
			predicate.NewPredicateFuncs(hasNoPlan),
		))).
		Complete(r)
}

// hasNoPlan selects Widgets the planner still has to plan.
func hasNoPlan(obj client.Object) bool {
	w, ok := obj.(*v1alpha1.Widget)
	return ok && w.Status.Plan == nil
}

// Reconcile runs reconcile with a batch of its own (ctrlbatch.Wrap): the plan
// and the Planned condition go out as one apply, at every exit, and a
// conflict requeues.
func (r *PlannerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.Tuning.reconcile(ctx, r.Applier, r.reconcile, req)
}

// reconcile queues the plan (when the Widget has none) and the Planned
// condition into the reconcile's batch.
func (r *PlannerReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := ctrlbatch.FromContext(ctx)
	w := &v1alpha1.Widget{}
	if err := r.Reader.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var errs []error
	if w.Status.Plan == nil {
		// Only the decision needs the guard; a Widget that has a plan is
		// written unguarded, with no read when the cache is behind.
		var opts []ssa.ApplyOption
		if !r.unguarded {
			opts = append(opts, ssa.Guarded)
		}
		errs = append(errs, batcher.EditStatus(b, w, PlannerManager, createPlan(string(uuid.NewUUID())), opts...))
	}
	errs = append(errs, batcher.EditStatus(b, w, PlannerManager, setPlanned))
	r.work(ctx)
	return ctrl.Result{}, errors.Join(errs...)
}

// createPlan is an Edit that creates a plan with id when the Widget has none.
// On a guarded retry it is handed the object read again, so a plan another
// reconcile created in between is kept.
func createPlan(id string) batcher.Edit[*v1alpha1.Widget] {
	return func(w *v1alpha1.Widget) error {
		if w.Status.Plan != nil {
			return nil
		}
		w.Status.Plan = &v1alpha1.WidgetPlan{ID: id, CreatedBy: PlannerManager, Steps: planSteps()}
		return nil
	}
}

// setPlanned is an Edit that sets Planned from the Widget's plan: the one
// createPlan just created (the entry's earlier Edits have run on w), or the one
// it had.
func setPlanned(w *v1alpha1.Widget) error {
	cond := metav1.Condition{Type: ConditionPlanned, Status: metav1.ConditionFalse, Reason: ReasonNoPlan, Message: "no plan yet"}
	if w.Status.Plan != nil && w.Status.Plan.ID != "" {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonPlanCreated, "plan "+w.Status.Plan.ID
	}
	conditions.Set(w, cond)
	return nil
}
