package ssa

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
)

func contestedReady() conflicts.Conflict {
	return conflicts.Conflict{Manager: "readiness", Operation: "Apply", Subresource: "status",
		Path: conflicts.MustParsePath(`.status.conditions[type="Ready"].status`)}
}

func TestRecordDecision(t *testing.T) {
	ready := contestedReady()
	tests := []struct {
		decision conflicts.Decision
		want     string
	}{
		{conflicts.Decision{Action: conflicts.ActionRetryWithout, Conflicts: []conflicts.Conflict{ready}},
			`Normal StatusFieldYielded manager network yielded .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`},
		{conflicts.Decision{Action: conflicts.ActionForce, Conflicts: []conflicts.Conflict{ready}},
			`Normal StatusFieldTaken manager network took .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`},
		{conflicts.Decision{Action: conflicts.ActionFail, Conflicts: []conflicts.Conflict{ready, ready}},
			`Warning StatusFieldConflict manager network cannot change .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status); .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`},
	}
	for _, tt := range tests {
		rec := events.NewFakeRecorder(1)
		recordDecision(rec, &v1alpha1.Widget{}, "network", tt.decision)
		if got := <-rec.Events; got != tt.want {
			t.Errorf("event\n%s\nwant\n%s", got, tt.want)
		}
	}
}

func TestRecordDecisionNothing(t *testing.T) {
	rec := events.NewFakeRecorder(1)
	recordDecision(rec, &v1alpha1.Widget{}, "network", conflicts.Decision{Action: conflicts.ActionNone})
	recordDecision(nil, &v1alpha1.Widget{}, "network", conflicts.Decision{Action: conflicts.ActionFail})
	if len(rec.Events) != 0 {
		t.Fatalf("unexpected event %q", <-rec.Events)
	}
}

func TestRecordDecisionTruncatesLongNotes(t *testing.T) {
	var many []conflicts.Conflict
	for range 100 {
		many = append(many, contestedReady())
	}
	rec := events.NewFakeRecorder(1)
	recordDecision(rec, &v1alpha1.Widget{}, "network", conflicts.Decision{Action: conflicts.ActionFail, Conflicts: many})
	got := <-rec.Events
	note := strings.TrimPrefix(got, "Warning StatusFieldConflict ")
	if len(note) > maxEventNote || !strings.HasSuffix(note, "...") {
		t.Fatalf("note of %d bytes: %q", len(note), note)
	}
}

// A legacy record.EventRecorder, adapted, gets the same Events, and a nil one
// records nothing.
func TestRecordDecisionThroughLegacyRecorder(t *testing.T) {
	ready := contestedReady()
	rec := record.NewFakeRecorder(2)
	legacy := conflicts.LegacyEventRecorder(rec)
	recordDecision(legacy, &v1alpha1.Widget{}, "network", conflicts.Decision{Action: conflicts.ActionFail, Conflicts: []conflicts.Conflict{ready}})
	recordDecision(legacy, &v1alpha1.Widget{}, "network", conflicts.Decision{Action: conflicts.ActionRetryWithout, Conflicts: []conflicts.Conflict{ready}})
	for _, want := range []string{
		`Warning StatusFieldConflict manager network cannot change .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`,
		`Normal StatusFieldYielded manager network yielded .status.conditions[type="Ready"].status owned by readiness (Apply, subresource status)`,
	} {
		if got := <-rec.Events; got != want {
			t.Errorf("event\n%s\nwant\n%s", got, want)
		}
	}
	recordDecision(conflicts.LegacyEventRecorder(nil), &v1alpha1.Widget{}, "network", conflicts.Decision{Action: conflicts.ActionFail, Conflicts: []conflicts.Conflict{ready}})
}
