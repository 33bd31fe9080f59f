package conflicts

import (
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Both recorders a controller has at hand satisfy EventRecorder.
var (
	_ EventRecorder = events.EventRecorder(nil)
	_ EventRecorder = recorder.EventRecorder(nil)
)
