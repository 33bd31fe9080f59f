package cli

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/fleet"
)

func TestIsSource(t *testing.T) {
	report := &fleet.AuditReport{
		Managers: []fleet.ManagerAudit{
			{Manager: "legacy", Legacy: true, Conditions: []fleet.FieldCount{{Name: "A", Objects: 1}}},
			{Manager: "other", Legacy: true, Conditions: []fleet.FieldCount{{Name: "C", Objects: 1}}},
			{Manager: "readiness", Conditions: []fleet.FieldCount{{Name: "R", Objects: 1}}},
		},
		SharedFields: []fleet.SharedFieldAudit{{Path: ".status.phase", Managers: []string{"other", "summary"}, Objects: 1}},
	}
	tests := []struct {
		name    string
		plan    fleet.Plan
		manager string
		want    bool
	}{
		{"a --from source", fleet.Plan{Managers: map[string]string{"legacy": "summary"}}, "legacy", true},
		{"the holder of a --condition type", fleet.Plan{Conditions: map[string]string{"A": "readiness"}}, "legacy", true},
		{"a legacy writer holding another type", fleet.Plan{Conditions: map[string]string{"A": "readiness"}}, "other", false},
		{"an apply manager holding the type is no legacy writer", fleet.Plan{Conditions: map[string]string{"R": "x"}}, "readiness", false},
		{"--release-shared takes from a writer sharing a field", fleet.Plan{Conditions: map[string]string{"A": "readiness"}, ReleaseShared: true}, "other", true},
		{"--release-shared and a writer sharing nothing", fleet.Plan{Managers: map[string]string{"other": "x"}, ReleaseShared: true}, "legacy", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isSource(tt.plan, report, tt.manager); got != tt.want {
				t.Errorf("isSource(%s) = %v, want %v", tt.manager, got, tt.want)
			}
		})
	}
}

func TestActiveWarningsAndRefusal(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	active := []activeSource{
		{ActiveWriter: fleet.ActiveWriter{Manager: "legacy", Objects: 3, LastWrite: metav1.NewTime(now.Add(-2 * time.Minute))}, Source: true},
		{ActiveWriter: fleet.ActiveWriter{Manager: "other", Objects: 1, LastWrite: metav1.NewTime(now.Add(-time.Hour))}},
	}
	err := activeSourcesError(active, 24*time.Hour, now)
	if err == nil || !strings.HasPrefix(err.Error(), "not migrating from a legacy writer still active: legacy wrote 3 objects within 24h (last 2m ago); ") ||
		strings.Contains(err.Error(), "other") {
		t.Errorf("refusal: %v", err)
	}
	if err := activeSourcesError(active[1:], 24*time.Hour, now); err != nil {
		t.Errorf("a writer the plan takes nothing from refused: %v", err)
	}
	for _, tt := range []struct {
		dryRun, allowed bool
		want            string
	}{
		{true, false, "--apply refuses to take its fields"},
		{false, true, "migrated from it anyway (--allow-active)"},
	} {
		lines := activeWarnings(active, 24*time.Hour, now, tt.dryRun, tt.allowed)
		if len(lines) != 2 || !strings.Contains(lines[0], tt.want) || !strings.HasSuffix(lines[1], "the plan takes none of its fields, and its writes go on") {
			t.Errorf("dry run %v, allowed %v: %q", tt.dryRun, tt.allowed, lines)
		}
	}
}
