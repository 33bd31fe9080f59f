package ssa

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/statusapply/statusapply/conflicts"
)

// maxEventNote keeps notes under the events.k8s.io limit of 1 kB.
const maxEventNote = 1000

// recordDecision reports on obj what manager did about a conflict: a Normal
// StatusFieldYielded or StatusFieldTaken event for ActionRetryWithout and
// ActionForce, a Warning StatusFieldConflict for ActionFail, and nothing for
// ActionNone or a nil recorder. The note lists the fields and their owners.
// It is called once per decision the Applier acted on.
func recordDecision(rec conflicts.EventRecorder, obj runtime.Object, manager string, d conflicts.Decision) {
	if rec == nil {
		return
	}
	var eventType, reason, action, verb string
	switch d.Action {
	case conflicts.ActionRetryWithout:
		eventType, reason, action, verb = corev1.EventTypeNormal, conflicts.ReasonFieldYielded, "Yield", "yielded"
	case conflicts.ActionForce:
		eventType, reason, action, verb = corev1.EventTypeNormal, conflicts.ReasonFieldTaken, "Take", "took"
	case conflicts.ActionFail:
		eventType, reason, action, verb = corev1.EventTypeWarning, conflicts.ReasonFieldConflict, "Apply", "cannot change"
	default:
		return
	}
	fields := make([]string, 0, len(d.Conflicts))
	for _, c := range d.Conflicts {
		fields = append(fields, c.String())
	}
	note := fmt.Sprintf("manager %s %s %s", manager, verb, strings.Join(fields, "; "))
	if len(note) > maxEventNote {
		note = strings.ToValidUTF8(note[:maxEventNote-3], "") + "..."
	}
	rec.Eventf(obj, nil, eventType, reason, action, "%s", note)
}
