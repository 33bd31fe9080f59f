package conflicts

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// LegacyEventRecorder returns an EventRecorder that records through r, the
// older core/v1 recorder of k8s.io/client-go/tools/record (what
// controller-runtime's deprecated mgr.GetEventRecorderFor returns, and what
// many controllers still pass around), so that conflict events reach the
// recorder a controller already has.
//
// core/v1 events have no action and no related object: the events carry the
// type, reason and note the Applier gives, on the regarding object. A nil r gives
// a nil EventRecorder, which records nothing.
func LegacyEventRecorder(r record.EventRecorder) EventRecorder {
	if r == nil {
		return nil
	}
	return legacyRecorder{r: r}
}

type legacyRecorder struct {
	r record.EventRecorder
}

// Eventf records note, formatted with args, as a core/v1 event on regarding.
func (l legacyRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...interface{}) {
	l.r.Eventf(regarding, eventtype, reason, note, args...)
}
