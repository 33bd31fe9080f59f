package conflicts

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Event reasons Record uses, for alerting and for tests that watch events.
const (
	// ReasonFieldYielded: a Yield writer re-applied without fields others own.
	ReasonFieldYielded = "StatusFieldYielded"
	// ReasonFieldTaken: a TakeDeclared writer forced fields it declared.
	ReasonFieldTaken = "StatusFieldTaken"
	// ReasonFieldConflict: a writer failed on fields others own.
	ReasonFieldConflict = "StatusFieldConflict"
)

// EventRecorder is the part of the events.k8s.io recorder Record needs. Both
// k8s.io/client-go/tools/events.EventRecorder and the recorder controller-
// runtime's manager returns from GetEventRecorder satisfy it.
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{})
}

// maxNote keeps notes under the events.k8s.io limit of 1 kB.
const maxNote = 1000

// Record reports on obj what manager did about a conflict: a Normal
// StatusFieldYielded or StatusFieldTaken event for ActionRetryWithout and
// ActionForce, a Warning StatusFieldConflict for ActionFail, and nothing for
// ActionNone or a nil recorder. The note lists the fields and their owners.
// Call it once per decision that the caller acted on.
func Record(rec EventRecorder, obj runtime.Object, manager string, d Decision) {
	if rec == nil {
		return
	}
	var eventType, reason, action, verb string
	switch d.Action {
	case ActionRetryWithout:
		eventType, reason, action, verb = corev1.EventTypeNormal, ReasonFieldYielded, "Yield", "yielded"
	case ActionForce:
		eventType, reason, action, verb = corev1.EventTypeNormal, ReasonFieldTaken, "Take", "took"
	case ActionFail:
		eventType, reason, action, verb = corev1.EventTypeWarning, ReasonFieldConflict, "Apply", "cannot change"
	default:
		return
	}
	fields := make([]string, 0, len(d.Conflicts))
	for _, c := range d.Conflicts {
		fields = append(fields, c.String())
	}
	note := fmt.Sprintf("manager %s %s %s", manager, verb, strings.Join(fields, "; "))
	if len(note) > maxNote {
		note = strings.ToValidUTF8(note[:maxNote-3], "") + "..."
	}
	rec.Eventf(obj, nil, eventType, reason, action, "%s", note)
}
