package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"iter"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/statusapply/statusapply/fleet"
)

// More field sets for the audit fixtures.
const (
	alphaFields   = `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:status":{},"f:type":{}}}}}`
	summaryFields = `{"f:status":{"f:phase":{}}}`
)

// auditClock is the audit's fixed clock in these tests.
var auditClock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// auditWidget is an unstructured Widget with managedFields written at the
// given times (same order as mfs).
func auditWidget(name string, at []time.Duration, mfs ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("demo.statusapply.io/v1alpha1")
	u.SetKind("Widget")
	u.SetNamespace("shop")
	u.SetName(name)
	for i := range mfs {
		t := metav1.NewTime(auditClock.Add(-at[i]))
		mfs[i].Time = &t
	}
	u.SetManagedFields(mfs)
	return u
}

// fixtureFleet is a fleet halfway through a migration: w1 has the legacy
// writer (active an hour ago) next to three apply managers, w2 the legacy
// writer alone (three days ago), w3 was never tracked.
func fixtureFleet() []metav1.Object {
	update, apply := metav1.ManagedFieldsOperationUpdate, metav1.ManagedFieldsOperationApply
	w3 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "shop", "name": "w3"},
		"status": map[string]any{"phase": "Running",
			"conditions": []any{map[string]any{"type": "A", "status": "True"}}},
	}}
	return []metav1.Object{
		auditWidget("w1", []time.Duration{time.Hour, 2 * time.Hour, 2 * time.Hour, 30 * time.Minute},
			entry("legacy", update, "status", legacyFields),
			entry("alpha", apply, "status", alphaFields),
			entry("networking", apply, "status", networkingFields),
			entry("summary", apply, "status", summaryFields)),
		auditWidget("w2", []time.Duration{72 * time.Hour}, entry("legacy", update, "status", legacyFields)),
		w3,
	}
}

// objectSeq yields objs.
func objectSeq(objs []metav1.Object) iter.Seq2[metav1.Object, error] {
	return func(yield func(metav1.Object, error) bool) {
		for _, o := range objs {
			if !yield(o, nil) {
				return
			}
		}
	}
}

// fixtureAudit audits the fixture fleet as `audit widgets -n shop` would.
func fixtureAudit(t *testing.T) auditOutput {
	t.Helper()
	r, err := fleet.Audit(objectSeq(fixtureFleet()), fleet.AuditOptions{
		Now: auditClock, SchemaUnavailable: "reading CustomResourceDefinition widgets.demo.statusapply.io: forbidden",
	})
	if err != nil {
		t.Fatal(err)
	}
	doc := auditOutput{
		typeMeta: documentType("StatusAudit"), Resource: "widgets.demo.statusapply.io", Namespace: "shop", AuditReport: *r,
	}
	doc.MigrateCommand = migrateCommand("statusapply", "widgets", doc, false)
	return doc
}

// migratePlan parses flags with the migrate command's own flag set and
// builds the plan with its own plan builder, as `statusapply migrate` does.
func migratePlan(t *testing.T, flags []string) (fleet.Plan, error) {
	t.Helper()
	cmd := newMigrateCommand(newClusterAccess())
	if err := cmd.ParseFlags(flags); err != nil {
		return fleet.Plan{}, err
	}
	var pf planFlags
	var err error
	if pf.from, err = cmd.Flags().GetStringArray("from"); err != nil {
		t.Fatal(err)
	}
	if pf.conditions, err = cmd.Flags().GetStringArray("condition"); err != nil {
		t.Fatal(err)
	}
	if pf.releaseShared, err = cmd.Flags().GetBool("release-shared"); err != nil {
		t.Fatal(err)
	}
	return pf.plan()
}

func TestAuditVerdictFlagsAreMigrateFlags(t *testing.T) {
	doc := fixtureAudit(t)
	v := doc.Verdict
	want := []string{"--condition", "A=alpha", "--condition", "B=networking",
		"--from", "before-first-apply=summary", "--from", "legacy=summary", "--release-shared"}
	if diff := cmp.Diff(want, v.Flags); diff != "" {
		t.Fatalf("verdict flags (-want +got):\n%s", diff)
	}
	plan, err := migratePlan(t, v.Flags)
	if err != nil {
		t.Fatalf("the migrate command refuses the verdict's flags %q: %v", v.Flags, err)
	}
	if !reflect.DeepEqual(plan, v.Plan()) {
		t.Fatalf("migrate parsed %+v, the verdict means %+v", plan, v.Plan())
	}
	if err := fleet.CheckPlan(plan, fixtureFleet()); err != nil {
		t.Fatalf("migrate's check refuses the verdict on the same objects: %v", err)
	}
	wantCmd := "statusapply migrate widgets -n shop " + strings.Join(want, " ")
	if doc.MigrateCommand != wantCmd {
		t.Fatalf("command %q, want %q", doc.MigrateCommand, wantCmd)
	}
	// The control: a flag the migrate command does not know is refused by
	// the same parser, so the round trip above is not vacuous.
	if _, err := migratePlan(t, []string{"--from-manager", "legacy=summary"}); err == nil {
		t.Fatal("the migrate flag set accepted an unknown flag")
	}
	// Names the shell would split are quoted.
	doc.Selector = "app in (web)"
	if got := migrateCommand("statusapply", "widgets", doc, true); !strings.Contains(got, "-A -l 'app in (web)' --condition") {
		t.Fatalf("command %q: want -A and a quoted selector", got)
	}
}

// auditTables is what the table output of the fixture audit prints on
// stdout: the tables alone.
const auditTables = `MANAGER      OPERATION   SUBRESOURCE   OBJECTS   CONDITIONS   OTHER STATUS FIELDS   LAST WRITE   NOTES
alpha        Apply       status        1         A(1)         <none>                120m         <none>
legacy       Update      status        2         A(2),B(2)    .status.phase(2)      60m          legacy writer; active within 24h
networking   Apply       status        1         B(1)         <none>                120m         <none>
summary      Apply       status        1         <none>       .status.phase(1)      30m          <none>

SHARED FIELD    MANAGERS            OBJECTS
condition A     alpha,legacy        1
condition B     legacy,networking   1
.status.phase   legacy,summary      1
`

// auditLines is what it prints on stderr around them: the count of objects
// before, the schema, the verdict and the notes after.
const auditLines = `widgets.demo.statusapply.io in namespace shop: 3 objects, 1 never tracked (no managedFields), 0 with before-first-apply


schema: not checked: reading CustomResourceDefinition widgets.demo.statusapply.io: forbidden
never tracked: 1 object, such as Widget shop/w3
migrate: statusapply migrate widgets -n shop --condition A=alpha --condition B=networking --from before-first-apply=summary --from legacy=summary --release-shared
note: legacy writer legacy wrote 1 object within 24h: switch it to apply (or stop it) before migrating, or its next write takes its fields back
note: 1 object without managedFields: migrate seeds them first, and their status counts as before-first-apply's in the flags
note: schema not checked: reading CustomResourceDefinition widgets.demo.statusapply.io: forbidden
`

func TestWriteAuditTable(t *testing.T) {
	doc := fixtureAudit(t)
	var stdout, stderr bytes.Buffer
	if err := writeAuditOutput(&stdout, &stderr, boundOutputFlags(t), doc, auditClock); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(auditTables, stdout.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(auditLines, stderr.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}

	stdout.Reset()
	stderr.Reset()
	if err := writeAuditOutput(&stdout, &stderr, boundOutputFlags(t, "-o", "wide"), doc, auditClock); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "API VERSION") || !strings.Contains(stdout.String(), "demo.statusapply.io/v1alpha1") {
		t.Fatalf("-o wide has no API VERSION column:\n%s", stdout.String())
	}
	if diff := cmp.Diff(auditLines, stderr.String()); diff != "" {
		t.Errorf("-o wide: stderr (-want +got):\n%s", diff)
	}
}

// TestWriteAuditNoHeadersStdout pipes the table output without headers:
// stdout holds the rows alone, and every summary, verdict and note line is
// on stderr.
func TestWriteAuditNoHeadersStdout(t *testing.T) {
	doc := fixtureAudit(t)
	var stdout, stderr bytes.Buffer
	if err := writeAuditOutput(&stdout, &stderr, boundOutputFlags(t, "--no-headers"), doc, auditClock); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(stdout.String()) {
		if line == "\n" {
			continue // between tables
		}
		if strings.Contains(line, ":") || strings.Contains(line, "MANAGER") {
			t.Errorf("stdout holds a line that is no table row: %q", line)
		}
	}
	if !strings.HasPrefix(stdout.String(), "alpha ") || !strings.Contains(stdout.String(), "\ncondition A ") {
		t.Errorf("stdout lacks the rows:\n%s", stdout.String())
	}
	if diff := cmp.Diff(auditLines, stderr.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

// TestAuditMigrateCommandUnderPlugin: the migrate command the audit prints
// starts with the name the command tree shows, "kubectl statusapply" for
// the kubectl plugin, unquoted, so that it can be pasted as printed.
func TestAuditMigrateCommandUnderPlugin(t *testing.T) {
	doc := fixtureAudit(t)
	for _, tt := range []struct {
		root *cobra.Command
		want string
	}{
		{NewRootCommand(), "statusapply migrate widgets -n shop --condition A=alpha "},
		{NewPluginCommand(), "kubectl statusapply migrate widgets -n shop --condition A=alpha "},
	} {
		audit, _, err := tt.root.Find([]string{"audit"})
		if err != nil {
			t.Fatal(err)
		}
		if got := migrateCommand(displayName(audit), "widgets", doc, false); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: command %q, want it to start with %q", tt.root.Name(), got, tt.want)
		}
	}
}

func TestWriteAuditDocuments(t *testing.T) {
	doc := fixtureAudit(t)
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			var b, stderr bytes.Buffer
			if err := writeAuditOutput(&b, &stderr, boundOutputFlags(t, "-o", format), doc, auditClock); err != nil {
				t.Fatal(err)
			}
			if stderr.Len() > 0 {
				t.Errorf("the document printed on stderr too:\n%s", stderr.String())
			}
			data := b.Bytes()
			if format == "yaml" {
				var err error
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatalf("%v:\n%s", err, b.String())
				}
			}
			var got map[string]any
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("%v:\n%s", err, b.String())
			}
			// The document's stable top-level shape.
			for key, want := range map[string]any{
				"apiVersion": DocumentGroupVersion, "kind": "StatusAudit",
				"resource": "widgets.demo.statusapply.io", "namespace": "shop",
				"objects": float64(3), "window": "24h0m0s", "activeSince": "2026-02-28T12:00:00Z",
				"migrateCommand": doc.MigrateCommand,
			} {
				if got[key] != want {
					t.Errorf("%s = %#v, want %#v", key, got[key], want)
				}
			}
			for _, key := range []string{"managers", "activeLegacyWriters", "untracked", "beforeFirstApply",
				"sharedFields", "schema", "unreadable", "verdict"} {
				if _, ok := got[key]; !ok {
					t.Errorf("no %q in the document", key)
				}
			}
			// Every field round-trips into the report type.
			var back auditOutput
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(doc.AuditReport, back.AuditReport); diff != "" {
				t.Errorf("report after a round trip (-want +got):\n%s", diff)
			}
			legacy := back.Managers[1]
			if legacy.Manager != "legacy" || legacy.LastWrite.UTC().Format(time.RFC3339) != "2026-03-01T11:00:00Z" ||
				!reflect.DeepEqual(legacy.Conditions, []fleet.FieldCount{{Name: "A", Objects: 2}, {Name: "B", Objects: 2}}) {
				t.Errorf("legacy manager %+v", legacy)
			}
		})
	}
}

func TestWriteAuditNothingToMigrate(t *testing.T) {
	obj := auditWidget("w1", []time.Duration{time.Hour},
		entry("alpha", metav1.ManagedFieldsOperationApply, "status", alphaFields))
	r, err := fleet.Audit(objectSeq([]metav1.Object{obj}), fleet.AuditOptions{Now: auditClock})
	if err != nil {
		t.Fatal(err)
	}
	doc := auditOutput{typeMeta: documentType("StatusAudit"), Resource: "widgets.demo.statusapply.io", AuditReport: *r}
	doc.MigrateCommand = migrateCommand("statusapply", "widgets", doc, true)
	var stdout, stderr bytes.Buffer
	if err := writeAuditOutput(&stdout, &stderr, boundOutputFlags(t, "--no-headers"), doc, auditClock); err != nil {
		t.Fatal(err)
	}
	if doc.MigrateCommand != "" || !strings.Contains(stderr.String(), "migrate: nothing to migrate") ||
		strings.Contains(stdout.String(), "migrate:") || strings.Contains(stdout.String(), "MANAGER") {
		t.Fatalf("command %q, stdout:\n%s\nstderr:\n%s", doc.MigrateCommand, stdout.String(), stderr.String())
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"A=wa": "A=wa", "--from": "--from", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, "x;y": "'x;y'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseWriters(t *testing.T) {
	got, err := parseWriters([]string{"wa=A,B", "wb=.status.phase", "wa=B,C"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"wa": {"A", "B", "C"}, "wb": {".status.phase"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("writers (-want +got):\n%s", diff)
	}
	if got, err := parseWriters(nil); err != nil || got != nil {
		t.Fatalf("no flags: %v, %v", got, err)
	}
	for _, bad := range []string{"wa", "=A", "wa=", "wa=A,,B", "before-first-apply=A", "wa=.spec.replicas"} {
		if _, err := parseWriters([]string{bad}); err == nil {
			t.Errorf("--writer %q accepted", bad)
		}
	}
}

// TestAuditDeclaredWritersVerdict audits a fleet the legacy writer alone
// holds, as after a switch whose applies restated its values, with the new
// writers declared: the verdict's flags are migrate's, and the table says
// whom it counted.
func TestAuditDeclaredWritersVerdict(t *testing.T) {
	update := metav1.ManagedFieldsOperationUpdate
	objs := []metav1.Object{
		auditWidget("w1", []time.Duration{time.Hour}, entry("legacy", update, "status", legacyFields)),
		auditWidget("w2", []time.Duration{time.Hour}, entry("legacy", update, "status", legacyFields)),
	}
	audit := func(writers []string) auditOutput {
		t.Helper()
		declared, err := parseWriters(writers)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fleet.Audit(objectSeq(objs), fleet.AuditOptions{Now: auditClock, SchemaUnavailable: "not read", Writers: declared})
		if err != nil {
			t.Fatal(err)
		}
		doc := auditOutput{typeMeta: documentType("StatusAudit"), Resource: "widgets.demo.statusapply.io", Namespace: "shop", AuditReport: *r}
		doc.MigrateCommand = migrateCommand("statusapply", "widgets", doc, false)
		return doc
	}

	// The control: nothing applies A or B, so nothing can be inferred.
	doc := audit(nil)
	if len(doc.Verdict.Flags) != 0 || len(doc.Verdict.Unresolved) != 3 || doc.MigrateCommand != "" {
		t.Fatalf("without --writer: flags %q, unresolved %q", doc.Verdict.Flags, doc.Verdict.Unresolved)
	}

	doc = audit([]string{"readiness=A", "networking=B,.status.phase"})
	want := []string{"--condition", "A=readiness", "--condition", "B=networking", "--from", "legacy=networking",
		"--new-destination", "networking", "--new-destination", "readiness"}
	if diff := cmp.Diff(want, doc.Verdict.Flags); diff != "" {
		t.Fatalf("verdict flags (-want +got):\n%s", diff)
	}
	if len(doc.Verdict.Unresolved) != 0 {
		t.Fatalf("unresolved: %q", doc.Verdict.Unresolved)
	}
	plan, err := migratePlan(t, doc.Verdict.Flags)
	if err != nil {
		t.Fatalf("migrate refuses the verdict's flags: %v", err)
	}
	if err := fleet.CheckPlan(plan, objs); err != nil {
		t.Fatalf("migrate's check refuses the verdict on the same objects: %v", err)
	}

	var b bytes.Buffer
	if err := writeAuditOutput(io.Discard, &b, boundOutputFlags(t), doc, auditClock); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"declared writer: networking writes .status.phase, B\ndeclared writer: readiness writes A\n" +
			"migrate: statusapply migrate widgets -n shop " + strings.Join(want, " ") + "\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("stderr lacks %q:\n%s", line, b.String())
		}
	}
	b.Reset()
	if err := writeAuditOutput(&b, io.Discard, boundOutputFlags(t, "-o", "json"), doc, auditClock); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"writers": {`) {
		t.Errorf("the document lacks the declared writers:\n%s", b.String())
	}
}
