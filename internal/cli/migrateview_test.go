package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/ownership"
)

func TestMigrateOutputRecord(t *testing.T) {
	ref := ownership.ObjectRef{Kind: "Widget", Namespace: "ns", Name: "w1"}
	before, err := ownership.InspectEntries(ref, []metav1.ManagedFieldsEntry{
		entry("legacy", metav1.ManagedFieldsOperationUpdate, "status", legacyFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ownership.InspectEntries(ref, []metav1.ManagedFieldsEntry{
		entry("networking", metav1.ManagedFieldsOperationApply, "status", networkingFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := &ownership.ObjectError{Object: ownership.ObjectRef{Kind: "Widget", Namespace: "ns", Name: "gone"},
		Op: "migrating", Err: errors.New("not found")}

	tests := []struct {
		name    string
		dryRun  bool
		p       ownership.Progress
		outcome string
		summary migrateSummary
		line    string
	}{
		{
			name: "would migrate", dryRun: true,
			p:       ownership.Progress{Done: 1, Total: 3, Object: ref, Result: &ownership.Result{Object: ref, Before: before, After: after, Changed: true, DryRun: true, Attempts: 1}},
			outcome: outcomeWouldMigrate, summary: migrateSummary{Total: 1, Changed: 1},
			line: "[1/3] Widget ns/w1: would migrate",
		},
		{
			name:    "migrated",
			p:       ownership.Progress{Done: 2, Total: 3, Object: ref, Result: &ownership.Result{Object: ref, Before: before, After: after, Changed: true, Attempts: 2}},
			outcome: outcomeMigrated, summary: migrateSummary{Total: 1, Changed: 1},
			line: "[2/3] Widget ns/w1: migrated",
		},
		{
			name:    "unchanged",
			p:       ownership.Progress{Done: 1, Total: 1, Object: ref, Result: &ownership.Result{Object: ref, Before: after, After: after, Attempts: 1}},
			outcome: outcomeUnchanged, summary: migrateSummary{Total: 1, Unchanged: 1},
			line: "[1/1] Widget ns/w1: unchanged",
		},
		{
			name:    "failed",
			p:       ownership.Progress{Done: 3, Total: 3, Object: failed.Object, Err: failed},
			outcome: outcomeFailed, summary: migrateSummary{Total: 1, Failed: 1},
			line: "[3/3] Widget ns/gone: failed: migrating Widget ns/gone: not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newMigrateOutput(ownership.Plan{ReleaseShared: true}, tt.dryRun)
			v := o.record(tt.p)
			if v.Outcome != tt.outcome || o.Summary != tt.summary || len(o.Objects) != 1 {
				t.Fatalf("outcome %q summary %+v objects %d, want %q %+v 1", v.Outcome, o.Summary, len(o.Objects), tt.outcome, tt.summary)
			}
			if got := progressLine(tt.p, v); got != tt.line {
				t.Fatalf("progress line %q, want %q", got, tt.line)
			}
			if tt.p.Err == nil && (v.Before == nil || v.After == nil) {
				t.Fatal("a result without before and after views")
			}
			if tt.p.Err != nil && (v.Before != nil || v.Name != "gone") {
				t.Fatalf("failed object view %+v", v)
			}
		})
	}
}

func TestWriteMigrateTable(t *testing.T) {
	ref := ownership.ObjectRef{Kind: "Widget", Namespace: "ns", Name: "w1"}
	before, err := ownership.InspectEntries(ref, []metav1.ManagedFieldsEntry{
		entry(ownership.BeforeFirstApplyManager, metav1.ManagedFieldsOperationUpdate, "", legacyFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ownership.InspectEntries(ref, []metav1.ManagedFieldsEntry{
		entry("networking", metav1.ManagedFieldsOperationApply, "status", networkingFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	o := newMigrateOutput(ownership.Plan{ReleaseShared: true}, true)
	o.record(ownership.Progress{Done: 1, Total: 2, Object: ref, Result: &ownership.Result{
		Object: ref, Before: before, After: after, Changed: true, DryRun: true, Seeded: true, Attempts: 1,
	}})
	gone := ownership.ObjectRef{Kind: "Widget", Namespace: "ns", Name: "gone"}
	o.record(ownership.Progress{Done: 2, Total: 2, Object: gone,
		Err: &ownership.ObjectError{Object: gone, Op: "migrating", Err: errors.New("not found")}})

	var b bytes.Buffer
	if err := writeMigrateTable(&b, o); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Widget ns/w1: would migrate\n",
		"  (it had no managedFields: the API server attributed its fields to before-first-apply first)\n",
		"  before:\n    MANAGER ",
		"    before-first-apply  Update",
		"  after:\n    MANAGER ",
		"    networking  Apply      status       B ",
		"\nWidget ns/gone: failed: migrating Widget ns/gone: not found\n",
		"\ndry run: 2 objects, 1 would change, 0 unchanged, 1 failed; nothing was written (add --apply to write)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output misses %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "before:") > strings.Index(out, "after:") {
		t.Errorf("before must come first:\n%s", out)
	}
}

func TestSummaryLine(t *testing.T) {
	o := &migrateOutput{Summary: migrateSummary{Total: 1, Changed: 1}}
	if got, want := o.summaryLine(), "1 object: 1 migrated, 0 unchanged, 0 failed"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
