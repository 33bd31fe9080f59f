package widgets

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
)

// NetworkingManager is the field manager of the networking controller.
const NetworkingManager = "widgets-networking"

// ReasonEndpointAssigned is the reason of the Reachable condition.
const ReasonEndpointAssigned = "EndpointAssigned"

// NetworkingReconciler gives every Widget an endpoint and reports it
// Reachable. One of its status functions is written the merge-patch way
// (editing the typed object with meta.SetStatusCondition) and queued with
// batcher.EditStatus: existing status code moves over unchanged.
type NetworkingReconciler struct {
	// Reader reads Widgets: the manager's cache in a controller.
	Reader client.Reader
	// Applier is the process's shared Applier.
	Applier *ssa.Applier
	// Tuning holds the options every reconcile is wrapped with.
	Tuning
}

// SetupWithManager registers the controller. It deliberately has no
// predicate: it reconciles on every change to a Widget, the other controllers'
// status writes included, and relies on statusapply sending nothing when the
// apply would change nothing. That is what keeps it out of a hot loop, and
// what the tests check.
func (r *NetworkingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(NetworkingManager).
		For(&v1alpha1.Widget{}).
		Complete(r)
}

// Reconcile runs reconcile with a batch of its own (ctrlbatch.Wrap): the
// endpoint and the Reachable condition go out as one apply, at every exit,
// and a conflict requeues.
func (r *NetworkingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.Tuning.reconcile(ctx, r.Applier, r.reconcile, req)
}

// reconcile queues the endpoint and the Reachable condition into the
// reconcile's batch.
func (r *NetworkingReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := ctrlbatch.FromContext(ctx)
	w := &v1alpha1.Widget{}
	if err := r.Reader.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	endpoint := Endpoint(w.Namespace, w.Name)
	err := errors.Join(
		batcher.Status(b, w, NetworkingManager, setEndpoint(endpoint)),
		batcher.EditStatus(b, w, NetworkingManager, markReachable(endpoint)),
	)
	r.work(ctx)
	return ctrl.Result{}, err
}

// Endpoint is the address the example assigns to a Widget: a fake IP in
// 10.0.0.0/8 derived from its namespace and name, so every reconcile decides
// the same one without storing anything.
func Endpoint(namespace, name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	sum := h.Sum32()
	return fmt.Sprintf("10.%d.%d.%d", byte(sum>>16), byte(sum>>8), byte(sum))
}

// setEndpoint is a Mutator, the apply-configuration way: it adds
// status.endpoint to what this manager applies, allocating the status when the
// manager owned none yet.
func setEndpoint(endpoint string) batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		if ac.Status == nil {
			ac.WithStatus(acv1alpha1.WidgetStatus())
		}
		ac.Status.WithEndpoint(endpoint)
		return nil
	}
}

// markReachable is a status function as it would be written for a merge
// patch: it edits the object. statusapply turns what it changed into this
// manager's apply configuration; when it changes nothing, nothing is claimed.
func markReachable(endpoint string) batcher.Edit[*v1alpha1.Widget] {
	return func(w *v1alpha1.Widget) error {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type:               ConditionReachable,
			Status:             metav1.ConditionTrue,
			Reason:             ReasonEndpointAssigned,
			Message:            "reachable at " + endpoint,
			ObservedGeneration: w.Generation,
		})
		return nil
	}
}
