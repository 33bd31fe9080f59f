package conflicts

import (
	"testing"

	"k8s.io/client-go/tools/record"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

func TestLegacyEventRecorder(t *testing.T) {
	ready := conflictAt("readiness", `.status.conditions[type="Ready"].status`)
	rec := record.NewFakeRecorder(2)
	legacy := LegacyEventRecorder(rec)
	Record(legacy, &v1alpha1.Widget{}, "network", Decision{Action: ActionFail, Conflicts: []Conflict{ready}})
	Record(legacy, &v1alpha1.Widget{}, "network", Decision{Action: ActionRetryWithout, Conflicts: []Conflict{ready}})
	for _, want := range []string{
		`Warning StatusFieldConflict manager network cannot change .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`,
		`Normal StatusFieldYielded manager network yielded .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`,
	} {
		if got := <-rec.Events; got != want {
			t.Errorf("event\n%s\nwant\n%s", got, want)
		}
	}

	// A note holding a % is not taken for a format.
	legacy.Eventf(&v1alpha1.Widget{}, nil, "Normal", "R", "A", "%s", "100% done")
	if got := <-rec.Events; got != "Normal R 100% done" {
		t.Errorf("event %q", got)
	}

	if LegacyEventRecorder(nil) != nil {
		t.Error("LegacyEventRecorder(nil) is not a nil EventRecorder")
	}
	Record(LegacyEventRecorder(nil), &v1alpha1.Widget{}, "network", Decision{Action: ActionFail, Conflicts: []Conflict{ready}})
}
