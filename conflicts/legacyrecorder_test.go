package conflicts

import (
	"testing"

	"k8s.io/client-go/tools/record"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

func TestLegacyEventRecorder(t *testing.T) {
	rec := record.NewFakeRecorder(1)
	legacy := LegacyEventRecorder(rec)

	// A note holding a % is not taken for a format.
	legacy.Eventf(&v1alpha1.Widget{}, nil, "Normal", "R", "A", "%s", "100% done")
	if got := <-rec.Events; got != "Normal R 100% done" {
		t.Errorf("event %q", got)
	}

	if LegacyEventRecorder(nil) != nil {
		t.Error("LegacyEventRecorder(nil) is not a nil EventRecorder")
	}
}
