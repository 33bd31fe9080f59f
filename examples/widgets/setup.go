package widgets

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
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
	applier, err := NewApplier(mgr)
	if err != nil {
		return fmt.Errorf("creating the status applier: %w", err)
	}
	reader := mgr.GetClient() // reads from the cache
	if err := (&ReadinessReconciler{Reader: reader, Applier: applier}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up %s: %w", ReadinessManager, err)
	}
	if err := (&NetworkingReconciler{Reader: reader, Applier: applier}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up %s: %w", NetworkingManager, err)
	}
	if err := (&PlannerReconciler{Reader: reader, Applier: applier}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up %s: %w", PlannerManager, err)
	}
	return nil
}
