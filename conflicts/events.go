package conflicts

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// Event reasons of the conflict decisions an ssa.Applier records (see
// ssa.WithEventRecorder), for alerting and for tests that watch events.
const (
	// ReasonFieldYielded: a Yield writer re-applied without fields others own.
	ReasonFieldYielded = "StatusFieldYielded"
	// ReasonFieldTaken: a TakeDeclared writer forced fields it declared.
	ReasonFieldTaken = "StatusFieldTaken"
	// ReasonFieldConflict: a writer failed on fields others own.
	ReasonFieldConflict = "StatusFieldConflict"
)

// EventRecorder is the part of the events.k8s.io recorder the Applier needs. Both
// k8s.io/client-go/tools/events.EventRecorder and the recorder controller-
// runtime's manager returns from GetEventRecorder satisfy it.
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{})
}
