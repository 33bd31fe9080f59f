// Package widgets is a controller-runtime example with several status writers
// on the same objects. Three controllers watch Widgets, and each writes its own
// conditions and fields of the status as its own field manager:
//
//   - readiness ("widgets-readiness"): condition Ready, status.readyReplicas and
//     status.observedGeneration, from spec.replicas;
//   - networking ("widgets-networking"): condition Reachable and status.endpoint,
//     from the Widget's name;
//   - planner ("widgets-planner"): status.plan, created once, and condition
//     Planned.
//
// Each reconciler runs under ctrlbatch.Wrap: a reconcile queues small status
// functions into the batch ctrlbatch.FromContext returns, and the wrapper
// flushes it once, at every exit: one server-side apply per (object, field
// manager), ForceOwnership off, none at all when nothing changed. A flush that
// met a conflict requeues the reconcile after the conflicts package's hint.
// The writers never read-modify-write the conditions array, so none of them
// can erase what another wrote, and an object whose status is current is not
// written again: after convergence its resourceVersion stays put even though
// every status write wakes the other controllers.
//
// Add wires the three controllers into a manager with one shared
// ssa.Applier, so that the applies the process sends to one object go one at a
// time.
package widgets
