package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/ownership"
)

func TestMigrateOutputRecord(t *testing.T) {
	ref := ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w1"}
	before, err := inspect.Entries(ref, []metav1.ManagedFieldsEntry{
		entry("legacy", metav1.ManagedFieldsOperationUpdate, "status", legacyFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := inspect.Entries(ref, []metav1.ManagedFieldsEntry{
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
		p       fleet.Progress
		obj     string
		outcome string
		summary migrateSummary
		line    string
	}{
		{
			name: "would migrate", dryRun: true, obj: "w1",
			p:       fleet.Progress{Done: 1, Total: 3, Object: ref, Result: &fleet.Result{Object: ref, Before: before, After: after, Changed: true, DryRun: true, Attempts: 1}},
			outcome: outcomeWouldMigrate, summary: migrateSummary{Total: 1, Changed: 1},
			line: "[1/3] Widget ns/w1: would migrate",
		},
		{
			name: "migrated", obj: "w1",
			p:       fleet.Progress{Done: 2, Total: 3, Object: ref, Result: &fleet.Result{Object: ref, Before: before, After: after, Changed: true, Attempts: 2}},
			outcome: outcomeMigrated, summary: migrateSummary{Total: 1, Changed: 1},
			line: "[2/3] Widget ns/w1: migrated",
		},
		{
			name: "unchanged", obj: "w1",
			p:       fleet.Progress{Done: 1, Total: 1, Object: ref, Result: &fleet.Result{Object: ref, Before: after, After: after, Attempts: 1}},
			outcome: outcomeUnchanged, summary: migrateSummary{Total: 1, Unchanged: 1},
			line: "[1/1] Widget ns/w1: unchanged",
		},
		{
			name: "failed", obj: "gone",
			p:       fleet.Progress{Done: 3, Total: 3, Object: failed.Object, Err: failed},
			outcome: outcomeFailed, summary: migrateSummary{Total: 1, Failed: 1},
			line: "[3/3] Widget ns/gone: failed", // the error is printed once, with the output
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newMigrateOutput(fleet.Plan{ReleaseShared: true}, tt.dryRun)
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
			if v.Before != nil || v.After != nil {
				t.Fatal("views built before an output asks for them")
			}
			o.fillViews()
			v = o.Items[0]
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
	before, err := inspect.Entries(ref, []metav1.ManagedFieldsEntry{
		entry(ownership.BeforeFirstApplyManager, metav1.ManagedFieldsOperationUpdate, "", legacyFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := inspect.Entries(ref, []metav1.ManagedFieldsEntry{
		entry("networking", metav1.ManagedFieldsOperationApply, "status", networkingFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	o := newMigrateOutput(fleet.Plan{ReleaseShared: true}, true)
	o.record(fleet.Progress{Done: 1, Total: 2, Object: ref, Result: &fleet.Result{
		Object: ref, Before: before, After: after, Changed: true, DryRun: true, Seeded: true, Attempts: 1,
	}}, widget("ns", "w1"))
	gone := ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "gone"}
	o.record(fleet.Progress{Done: 2, Total: 2, Object: gone,
		Err: &ownership.ObjectError{Object: gone, Op: "migrating", Err: errors.New("not found")}}, widget("ns", "gone"))
	return o
}

func TestWriteMigrateTable(t *testing.T) {
	o := recordedMigration(t)
	var b, e bytes.Buffer
	if err := writeMigrateOutput(&b, &e, newOutputFlags(), o, true, false); err != nil {
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
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output misses %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "before:") > strings.Index(out, "after:") {
		t.Errorf("before must come first:\n%s", out)
	}
	summary := "dry run: 2 objects, 1 would change, 0 unchanged, 1 failed; nothing was written (add --apply to write)\n"
	if e.String() != summary || strings.Contains(out, "dry run:") {
		t.Errorf("the summary goes to stderr alone; stderr:\n%s", e.String())
	}

	b.Reset()
	e.Reset()
	if err := writeMigrateOutput(&b, &e, newOutputFlags(), o, false, false); err != nil {
		t.Fatal(err)
	}
	want := "Widget ns/gone: failed: migrating Widget ns/gone: not found\n"
	if b.String() != want || e.String() != summary {
		t.Fatalf("a list prints failures on stdout and the summary on stderr; got\n%s\n%s", b.String(), e.String())
	}
}

func TestWriteMigrateNamesAndDocuments(t *testing.T) {
	o := recordedMigration(t)
	failure := "Widget ns/gone: failed: migrating Widget ns/gone: not found\n"
	var b, e bytes.Buffer
	if err := writeMigrateOutput(&b, &e, boundOutputFlags(t, "-o", "name"), o, false, false); err != nil {
		t.Fatal(err)
	}
	if b.String() != "widget.demo.statusapply.io/w1\n" {
		t.Errorf("-o name prints only the names of the objects that would change; got\n%s", b.String())
	}
	if !strings.HasPrefix(e.String(), failure) || !strings.Contains(e.String(), "dry run: 2 objects") {
		t.Errorf("-o name: the failure and the summary go to stderr; got\n%s", e.String())
	}

	b.Reset()
	e.Reset()
	if err := writeMigrateOutput(&b, &e, boundOutputFlags(t, "-o", "jsonpath={.summary.changed}"), o, false, false); err != nil {
		t.Fatal(err)
	}
	if b.String() != "1" || e.String() != failure {
		t.Errorf("jsonpath: stdout %q, stderr %q", b.String(), e.String())
	}
}

func TestWriteMigrateLines(t *testing.T) {
	o := recordedMigration(t)
	var b, e bytes.Buffer
	if err := writeMigrateOutput(&b, &e, boundOutputFlags(t, "-o", "wide"), o, false, true); err != nil {
		t.Fatal(err)
	}
	table, details, found := strings.Cut(b.String(), "\n\n")
	if !found {
		t.Fatalf("want a table, a blank line and the objects' ownership:\n%s", b.String())
	}
	lines := strings.Split(table, "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and two rows:\n%s", b.String())
	}
	for i, want := range [][]string{
		{"NAMESPACE", "NAME", "OUTCOME", "ATTEMPTS", "SEEDED", "BEFORE", "AFTER", "ERROR"},
		{"ns", "w1", "would migrate", "1", "true", "before-first-apply=A,B,.status.phase", "networking=B", "<none>"},
		{"ns", "gone", "failed", "<none>", "<none>", "<none>", "<none>", "migrating Widget ns/gone: not found"},
	} {
		if lineWith(lines[i], want...) == "" {
			t.Errorf("line %d %q misses %q", i, lines[i], want)
		}
	}
	for _, want := range []string{"Widget ns/w1: would migrate\n", "  before:\n", "  after:\n", "    networking   Apply "} {
		if !strings.Contains(details, want) {
			t.Errorf("-o wide misses %q, the detail of every object:\n%s", want, details)
		}
	}
	if strings.Contains(details, "gone") {
		t.Errorf("a failure is printed once, in the table:\n%s", details)
	}
	if !strings.HasPrefix(e.String(), "dry run: 2 objects") {
		t.Errorf("stderr: %q", e.String())
	}
}

func TestSummaryLine(t *testing.T) {
	o := &migrateOutput{Summary: migrateSummary{Total: 1, Changed: 1}}
	if got, want := o.summaryLine(), "1 object: 1 migrated, 0 unchanged, 0 failed"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	o = &migrateOutput{DryRun: true, Summary: migrateSummary{Total: 5, Changed: 1, Failed: 1, NotAttempted: 3}}
	if got, want := o.summaryLine(), "dry run: 5 objects, 1 would change, 0 unchanged, 1 failed, 3 not attempted; "+
		"nothing was written (add --apply to write)"; got != want {
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
