package widgets

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
)

// ReadinessManager is the field manager of the readiness controller.
const ReadinessManager = "widgets-readiness"

// Reasons of the Ready condition.
const (
	ReasonReplicasAvailable = "ReplicasAvailable"
	ReasonNoReplicas        = "NoReplicas"
)

// ReadinessReconciler reports whether a Widget's replicas are ready: condition
// Ready, status.readyReplicas and status.observedGeneration. Its status is
// written by three small status functions that the batch sends as one apply.
type ReadinessReconciler struct {
	// Reader reads Widgets: the manager's cache in a controller.
	Reader client.Reader
	// Applier is the process's shared Applier.
	Applier *ssa.Applier
	// Tuning holds the options every reconcile is wrapped with.
	Tuning
}

// SetupWithManager registers the controller. Everything it writes follows from
// the spec, so it reconciles only when the generation changes (and on create):
// the status writes of the other controllers do not wake it.
func (r *ReadinessReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ReadinessManager).
		For(&v1alpha1.Widget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// Reconcile runs reconcile with a batch of its own (ctrlbatch.Wrap): what it
// queues is flushed once, at every exit, and a conflict requeues.
func (r *ReadinessReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.Tuning.reconcile(ctx, r.Applier, r.reconcile, req)
}

// reconcile queues the readiness status functions into the reconcile's batch.
func (r *ReadinessReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &v1alpha1.Widget{}
	if err := r.Reader.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	err := queueStatus(ctrlbatch.FromContext(ctx), w, ReadinessManager, setReady, setReadyReplicas, setObservedGeneration)
	r.work(ctx)
	return ctrl.Result{}, err
}

// setReady sets Ready: True when the Widget asks for replicas, False with
// reason NoReplicas when it asks for none.
func setReady(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
	cond := metav1.Condition{
		Type:    ConditionReady,
		Status:  metav1.ConditionTrue,
		Reason:  ReasonReplicasAvailable,
		Message: fmt.Sprintf("%d replicas ready", observed.Spec.Replicas),
	}
	if observed.Spec.Replicas <= 0 {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonNoReplicas, "spec.replicas is 0"
	}
	return setCondition(ac, observed, cond)
}

// setReadyReplicas reports every requested replica as ready: the example has
// no pods to count.
func setReadyReplicas(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
	statusOf(ac).WithReadyReplicas(max(0, observed.Spec.Replicas))
	return nil
}

// setObservedGeneration records which spec the status was computed from.
func setObservedGeneration(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
	statusOf(ac).WithObservedGeneration(observed.Generation)
	return nil
}
