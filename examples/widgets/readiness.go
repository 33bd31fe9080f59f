package widgets

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// ReadinessManager is the field manager of the readiness controller.
const ReadinessManager = "widgets-readiness"

// Reasons of the Ready condition.
const (
	ReasonReplicasAvailable = "ReplicasAvailable"
	ReasonNoReplicas        = "NoReplicas"
)

// ReadinessReconciler reports whether a Widget's replicas are ready: condition
// Ready, status.readyReplicas and status.observedGeneration. Its status is
// written by three small contributions (the condition, queued with the
// conditions package, and two Edits) that the batch sends as one apply.
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
	b := ctrlbatch.FromContext(ctx)
	err := errors.Join(
		conditions.Status(b, w, ReadinessManager, readyCondition(w)),
		batcher.EditStatus(b, w, ReadinessManager, setReadyReplicas),
		batcher.EditStatus(b, w, ReadinessManager, setObservedGeneration),
	)
	r.work(ctx)
	return ctrl.Result{}, err
}

// readyCondition is Ready as decided from w: True when the Widget asks for
// replicas, False with reason NoReplicas when it asks for none. The conditions
// package keeps its lastTransitionTime while its status does not change and
// stamps it with the generation of the Widget it is set on, so a reconcile that
// decides the same again sends nothing.
func readyCondition(w *v1alpha1.Widget) metav1.Condition {
	cond := metav1.Condition{
		Type:    ConditionReady,
		Status:  metav1.ConditionTrue,
		Reason:  ReasonReplicasAvailable,
		Message: fmt.Sprintf("%d replicas ready", w.Spec.Replicas),
	}
	if w.Spec.Replicas <= 0 {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonNoReplicas, "spec.replicas is 0"
	}
	return cond
}

// setReadyReplicas reports every requested replica as ready: the example has
// no pods to count.
func setReadyReplicas(w *v1alpha1.Widget) error {
	w.Status.ReadyReplicas = max(0, w.Spec.Replicas)
	return nil
}

// setObservedGeneration records which spec the status was computed from.
func setObservedGeneration(w *v1alpha1.Widget) error {
	w.Status.ObservedGeneration = w.Generation
	return nil
}
