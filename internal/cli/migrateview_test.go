package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/ownership"
)

func TestMigrateOutputRecord(t *testing.T) {
	ref := ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w1"}
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
	failed := &ownership.ObjectError{Object: ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "gone"},
		Op: "migrating", Err: errors.New("not found")}

	tests := []struct {
		name    string
		dryRun  bool
		p       ownership.Progress
		obj     string
		outcome string
		summary migrateSummary
		line    string
	}{
		{
			name: "would migrate", dryRun: true, obj: "w1",
			p:       ownership.Progress{Done: 1, Total: 3, Object: ref, Result: &ownership.Result{Object: ref, Before: before, After: after, Changed: true, DryRun: true, Attempts: 1}},
			outcome: outcomeWouldMigrate, summary: migrateSummary{Total: 1, Changed: 1},
			line: "[1/3] Widget ns/w1: would migrate",
		},
		{
			name: "migrated", obj: "w1",
			p:       ownership.Progress{Done: 2, Total: 3, Object: ref, Result: &ownership.Result{Object: ref, Before: before, After: after, Changed: true, Attempts: 2}},
			outcome: outcomeMigrated, summary: migrateSummary{Total: 1, Changed: 1},
			line: "[2/3] Widget ns/w1: migrated",
		},
		{
			name: "unchanged", obj: "w1",
			p:       ownership.Progress{Done: 1, Total: 1, Object: ref, Result: &ownership.Result{Object: ref, Before: after, After: after, Attempts: 1}},
			outcome: outcomeUnchanged, summary: migrateSummary{Total: 1, Unchanged: 1},
			line: "[1/1] Widget ns/w1: unchanged",
		},
		{
			name: "failed", obj: "gone",
			p:       ownership.Progress{Done: 3, Total: 3, Object: failed.Object, Err: failed},
			outcome: outcomeFailed, summary: migrateSummary{Total: 1, Failed: 1},
			line: "[3/3] Widget ns/gone: failed: migrating Widget ns/gone: not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newMigrateOutput(ownership.Plan{ReleaseShared: true}, tt.dryRun)
			v := o.record(tt.p, widget("ns", tt.obj))
			if v.Outcome != tt.outcome || o.Summary != tt.summary || len(o.Items) != 1 {
				t.Fatalf("outcome %q summary %+v objects %d, want %q %+v 1", v.Outcome, o.Summary, len(o.Items), tt.outcome, tt.summary)
			}
			if got := progressLine(tt.p, v); got != tt.line {
				t.Fatalf("progress line %q, want %q", got, tt.line)
			}
			if v.Kind != "Migration" || v.Object.APIVersion != "demo.statusapply.io/v1alpha1" || v.Object.Name != tt.obj {
				t.Fatalf("item %+v", v)
			}
			if tt.p.Err == nil && (v.Before == nil || v.After == nil) {
				t.Fatal("a result without before and after views")
			}
			if tt.p.Err != nil && v.Before != nil {
				t.Fatalf("failed object view %+v", v)
			}
			changed := len(o.changed()) == 1
			if changed != (tt.summary.Changed == 1) {
				t.Fatalf("changed() = %v", o.changed())
			}
		})
	}
}

// recordedMigration is a dry run of a seeded object that would change and
// of an object that failed.
func recordedMigration(t *testing.T) *migrateOutput {
	t.Helper()
	ref := ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w1"}
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
	}}, widget("ns", "w1"))
	gone := ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "gone"}
	o.record(ownership.Progress{Done: 2, Total: 2, Object: gone,
		Err: &ownership.ObjectError{Object: gone, Op: "migrating", Err: errors.New("not found")}}, widget("ns", "gone"))
	return o
}

func TestWriteMigrateTable(t *testing.T) {
	o := recordedMigration(t)
	var b bytes.Buffer
	if err := writeMigrateOutput(&b, newOutputFlags(), o, true, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Widget ns/w1: would migrate\n",
		"  (it had no managedFields: the API server attributed its fields to before-first-apply first)\n",
		"  before:\n    MANAGER ",
		"    before-first-apply   Update",
		"  after:\n    MANAGER ",
		"    networking   Apply       status        B ",
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

	b.Reset()
	if err := writeMigrateOutput(&b, newOutputFlags(), o, false, false); err != nil {
		t.Fatal(err)
	}
	want := "Widget ns/gone: failed: migrating Widget ns/gone: not found\n" +
		"dry run: 2 objects, 1 would change, 0 unchanged, 1 failed; nothing was written (add --apply to write)\n"
	if b.String() != want {
		t.Fatalf("a list without -v prints failures and the summary only; got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteMigrateLines(t *testing.T) {
	o := recordedMigration(t)
	var b bytes.Buffer
	if err := writeMigrateOutput(&b, boundOutputFlags(t, "-o", "wide"), o, false, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header, two rows and the summary:\n%s", b.String())
	}
	for i, want := range [][]string{
		{"NAMESPACE", "NAME", "OUTCOME", "ATTEMPTS", "SEEDED", "BEFORE", "AFTER", "ERROR"},
		{"ns", "w1", "would migrate", "1", "true", "before-first-apply=A,B,.status.phase", "networking=B", "<none>"},
		{"ns", "gone", "failed", "<none>", "<none>", "<none>", "<none>", "migrating Widget ns/gone: not found"},
		{"dry run: 2 objects"},
	} {
		if lineWith(lines[i], want...) == "" {
			t.Errorf("line %d %q misses %q", i, lines[i], want)
		}
	}
}

func TestSummaryLine(t *testing.T) {
	o := &migrateOutput{Summary: migrateSummary{Total: 1, Changed: 1}}
	if got, want := o.summaryLine(), "1 object: 1 migrated, 0 unchanged, 0 failed"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// lineWith returns line if it contains every part, else "".
func lineWith(line string, parts ...string) string {
	for _, p := range parts {
		if !strings.Contains(line, p) {
			return ""
		}
	}
	return line
}
