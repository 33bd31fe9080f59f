package cli

import (
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/fleet"
)

func TestActiveLegacyWriters(t *testing.T) {
	update, apply := metav1.ManagedFieldsOperationUpdate, metav1.ManagedFieldsOperationApply
	otherFields := `{"f:status":{"f:conditions":{"k:{\"type\":\"C\"}":{".":{},"f:status":{},"f:type":{}}}}}`
	objs := []*unstructured.Unstructured{
		// legacy holds A, B and the phase, other C; networking shares B with legacy.
		auditWidget("w1", []time.Duration{time.Hour, time.Minute, 2 * time.Minute, time.Minute},
			entry("creator", update, "", creatorFields), entry("legacy", update, "status", legacyFields),
			entry("other", update, "status", otherFields), entry("networking", apply, "status", networkingFields)),
		// legacy wrote w2 three days ago: not within 24h there.
		auditWidget("w2", []time.Duration{72 * time.Hour}, entry("legacy", update, "status", legacyFields)),
		// Kubernetes components and before-first-apply are never active legacy writers.
		auditWidget("w3", []time.Duration{time.Minute, time.Minute},
			entry("kube-controller-manager", update, "status", otherFields), entry("before-first-apply", update, "status", legacyFields)),
	}
	tests := []struct {
		name string
		plan fleet.Plan
		want map[string]bool // manager -> source
	}{
		{"a --from source", fleet.Plan{Managers: map[string]string{"legacy": "summary"}}, map[string]bool{"legacy": true, "other": false}},
		{"the holder of a --condition type", fleet.Plan{Conditions: map[string]string{"C": "readiness"}}, map[string]bool{"legacy": false, "other": true}},
		{"--release-shared takes from a writer sharing a field", fleet.Plan{Conditions: map[string]string{"C": "readiness"}, ReleaseShared: true},
			map[string]bool{"legacy": true, "other": true}},
		{"a plan taking nothing from them", fleet.Plan{Conditions: map[string]string{"R": "readiness"}}, map[string]bool{"legacy": false, "other": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]bool{}
			active := activeLegacyWriters(tt.plan, objs, auditClock, 24*time.Hour)
			for i, a := range active {
				got[a.Manager] = a.Source
				if a.Objects != 1 || a.Subresource != "status" {
					t.Errorf("%s: %d objects, subresource %q; want the one object written within the window", a.Manager, a.Objects, a.Subresource)
				}
				if i > 0 && a.Source && !active[i-1].Source {
					t.Errorf("sources are not first: %+v", active)
				}
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("active writers and sources %v, want %v", got, tt.want)
			}
		})
	}
	if active := activeLegacyWriters(fleet.Plan{}, objs, auditClock, 30*time.Second); len(active) != 0 {
		t.Errorf("a window shorter than every write: %+v", active)
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
