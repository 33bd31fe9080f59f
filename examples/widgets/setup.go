package widgets

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
)

// EventSource is the name the Applier's conflict events are reported under.
const EventSource = "widgets"

// NewApplier returns the Applier a manager's status writers share. It is
// long-lived and process-wide on purpose: its per-object lanes serialise the
// applies of all three controllers to the same Widget, which the API server
// handles much faster than concurrent applies to one object.
//
//   - The client is the manager's: applies go straight to the API server.
//   - The type converter knows the Widget schema, so that conditions merge per
//     type and what each manager owns can be extracted from managedFields.
//   - The reader is the manager's API reader, not the cache: a guarded apply
//     that finds the object changed must read what the server has now.
//   - The event recorder reports field-manager conflicts on the object.
func NewApplier(mgr manager.Manager) (*ssa.Applier, error) {
	return ssa.NewApplier(mgr.GetClient(),
		ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(mgr.GetScheme())),
		ssa.WithReader(mgr.GetAPIReader()),
		ssa.WithEventRecorder(mgr.GetEventRecorder(EventSource)),
	)
}

// Add registers the readiness, networking and planner controllers with mgr,
// all three writing through one Applier.
//
// The reconcilers read Widgets from the manager's cache, which must keep
// managedFields (controller-runtime's default; do not set
// cache.TransformStripManagedFields as a transform for Widgets). statusapply
// starts each manager's apply from the fields it owns, extracted from
// managedFields; on an object without them it cannot tell "owns nothing" from
// "was stripped", and reads the object again from the API server on every
// apply instead.
func Add(mgr manager.Manager) error {
	return AddWithTuning(mgr, Tuning{})
}

// Tuning is what the example's reconcilers share besides their reader and
// Applier. The zero value is the plain example.
type Tuning struct {
	// WrapOptions are passed to ctrlbatch.Wrap for every reconcile: under
	// leader election, ctrlbatch.WithFence keeps a replica that lost its lease
	// from writing (see cmd/widgets' --lease-fence).
	WrapOptions []ctrlbatch.Option
	// Work, when set, stands for what a real reconciler does between reading
	// the Widget and writing its status (calls to other systems): every
	// reconcile waits a random time up to Work before its batch is flushed.
	// The failover soak uses it so that a leader is stopped mid-reconcile.
	Work time.Duration
}

// reconcile runs fn under ctrlbatch.Wrap with t's options.
func (t Tuning) reconcile(ctx context.Context, applier *ssa.Applier, fn reconcile.Func, req ctrl.Request) (ctrl.Result, error) {
	return ctrlbatch.Wrap(applier, fn, t.WrapOptions...).Reconcile(ctx, req)
}

// work waits up to t.Work, as a reconcile doing real work would.
func (t Tuning) work(ctx context.Context) {
	if t.Work <= 0 {
		return
	}
	timer := time.NewTimer(rand.N(t.Work))
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// AddWithTuning is Add with the reconcilers tuned by t.
func AddWithTuning(mgr manager.Manager, t Tuning) error {
	applier, err := NewApplier(mgr)
	if err != nil {
		return fmt.Errorf("creating the status applier: %w", err)
	}
	reader := mgr.GetClient() // reads from the cache
	if err := (&ReadinessReconciler{Reader: reader, Applier: applier, Tuning: t}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up %s: %w", ReadinessManager, err)
	}
	if err := (&NetworkingReconciler{Reader: reader, Applier: applier, Tuning: t}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up %s: %w", NetworkingManager, err)
	}
	if err := (&PlannerReconciler{Reader: reader, Applier: applier, Tuning: t}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up %s: %w", PlannerManager, err)
	}
	return nil
}
