package conflicts

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// Both recorders a controller has at hand satisfy EventRecorder.
var (
	_ EventRecorder = events.EventRecorder(nil)
	_ EventRecorder = recorder.EventRecorder(nil)
)

func TestRecord(t *testing.T) {
	ready := conflictAt("readiness", `.status.conditions[type="Ready"].status`)
	tests := []struct {
		decision Decision
		want     string
	}{
		{Decision{Action: ActionRetryWithout, Conflicts: []Conflict{ready}},
			`Normal StatusFieldYielded manager network yielded .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`},
		{Decision{Action: ActionForce, Conflicts: []Conflict{ready}},
			`Normal StatusFieldTaken manager network took .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`},
		{Decision{Action: ActionFail, Conflicts: []Conflict{ready, ready}},
			`Warning StatusFieldConflict manager network cannot change .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status); .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`},
	}
	for _, tt := range tests {
		rec := events.NewFakeRecorder(1)
		Record(rec, &v1alpha1.Widget{}, "network", tt.decision)
		if got := <-rec.Events; got != tt.want {
			t.Errorf("event\n%s\nwant\n%s", got, tt.want)
		}
	}
}

func TestRecordNothing(t *testing.T) {
	rec := events.NewFakeRecorder(1)
	Record(rec, &v1alpha1.Widget{}, "network", Decision{Action: ActionNone})
	Record(nil, &v1alpha1.Widget{}, "network", Decision{Action: ActionFail})
	if len(rec.Events) != 0 {
		t.Fatalf("unexpected event %q", <-rec.Events)
	}
}

func TestRecordTruncatesLongNotes(t *testing.T) {
	var many []Conflict
	for range 100 {
		many = append(many, conflictAt("readiness", `.status.conditions[type="Ready"].status`))
	}
	rec := events.NewFakeRecorder(1)
	Record(rec, &v1alpha1.Widget{}, "network", Decision{Action: ActionFail, Conflicts: many})
	got := <-rec.Events
	note := strings.TrimPrefix(got, "Warning StatusFieldConflict ")
	if len(note) > maxNote || !strings.HasSuffix(note, "...") {
		t.Fatalf("note of %d bytes: %q", len(note), note)
	}
}
