package fleet

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

// More field sets as the API server writes them.
const (
	applyA = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"A\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
	applyPhase  = `{"f:status":{"f:phase":{}}}`
	applyAPhase = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"A\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},` +
		`"f:phase":{}}}`
	// firstApplyA is before-first-apply on the main resource: spec and
	// metadata besides condition A and the phase.
	firstApplyA = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:replicas":{}},` +
		`"f:status":{".":{},"f:conditions":{".":{},` +
		`"k:{\"type\":\"A\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},` +
		`"f:phase":{}}}`
	// wholeList owns an atomic conditions list as one value.
	wholeList = `{"f:status":{"f:conditions":{}}}`
)

// auditNow is the audit clock of the tests; entry() stamps 2026-01-02T03:04:05Z.
var auditNow = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

// named returns a Widget named name with managedFields.
func named(name string, mfs ...metav1.ManagedFieldsEntry) metav1.Object {
	w := ownershiptest.Widget(mfs...)
	w.Name = name
	return w
}

// stamped returns e written at t.
func stamped(e metav1.ManagedFieldsEntry, t time.Time) metav1.ManagedFieldsEntry {
	mt := metav1.NewTime(t)
	e.Time = &mt
	return e
}

// untracked returns an unstructured Widget without managedFields whose
// status has the given condition types and a phase.
func untracked(name string, types ...string) *unstructured.Unstructured {
	var conds []any
	for _, t := range types {
		conds = append(conds, map[string]any{"type": t, "status": "True"})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "ns", "name": name},
		"status":   map[string]any{"conditions": conds, "phase": "Running"},
	}}
	return u
}

// withDetails adds .status.details.size to an untracked object.
func withDetails(u *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(u.Object, int64(3), "status", "details", "size")
	return u
}

// seq yields objs, then err when it is not nil.
func seq(err error, objs ...metav1.Object) iter.Seq2[metav1.Object, error] {
	return func(yield func(metav1.Object, error) bool) {
		for _, o := range objs {
			if !yield(o, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}
}

func mustAudit(t *testing.T, opts AuditOptions, objs ...metav1.Object) *AuditReport {
	t.Helper()
	if opts.Now.IsZero() {
		opts.Now = auditNow
	}
	r, err := Audit(seq(nil, objs...), opts)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	return r
}

func TestAuditSummary(t *testing.T) {
	stamp := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r := mustAudit(t, AuditOptions{},
		// Migrated halfway: the apply managers own what the legacy writer
		// still holds too.
		named("w1", ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec), ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
			ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA), ownershiptest.Entry("wb", ownershiptest.Apply, "status", ownershiptest.ApplyB), ownershiptest.Entry("summary", ownershiptest.Apply, "status", applyPhase)),
		// Not yet: the legacy writer alone.
		named("w2", ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec), ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)),
		// Applied once after a life of merge patches.
		named("w3", ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "", firstApplyA), ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA)),
		untracked("w4", "A"),
	)
	want := &AuditReport{
		Objects:             4,
		Window:              metav1.Duration{Duration: DefaultAuditWindow},
		ActiveSince:         metav1.NewTime(auditNow.Add(-DefaultAuditWindow)),
		ActiveLegacyWriters: []ActiveWriter{},
		Managers: []ManagerAudit{
			{Manager: ownership.BeforeFirstApplyManager, Operation: "Update", APIVersion: "demo.statusapply.io/v1alpha1", Legacy: true,
				Objects: 1, LastWrite: &stamp, Conditions: []FieldCount{{"A", 1}},
				OtherStatusFields: []FieldCount{{".status.phase", 1}}},
			{Manager: "creator", Operation: "Update", APIVersion: "demo.statusapply.io/v1alpha1", Objects: 2, LastWrite: &stamp,
				Conditions: []FieldCount{}, OtherStatusFields: []FieldCount{}},
			{Manager: "legacy", Operation: "Update", Subresource: "status", APIVersion: "demo.statusapply.io/v1alpha1", Legacy: true,
				Objects: 2, LastWrite: &stamp, Conditions: []FieldCount{{"A", 2}, {"B", 2}},
				OtherStatusFields: []FieldCount{{".status.phase", 2}}},
			{Manager: "summary", Operation: "Apply", Subresource: "status", APIVersion: "demo.statusapply.io/v1alpha1",
				Objects: 1, LastWrite: &stamp, Conditions: []FieldCount{}, OtherStatusFields: []FieldCount{{".status.phase", 1}}},
			{Manager: "wa", Operation: "Apply", Subresource: "status", APIVersion: "demo.statusapply.io/v1alpha1",
				Objects: 2, LastWrite: &stamp, Conditions: []FieldCount{{"A", 2}}, OtherStatusFields: []FieldCount{}},
			{Manager: "wb", Operation: "Apply", Subresource: "status", APIVersion: "demo.statusapply.io/v1alpha1",
				Objects: 1, LastWrite: &stamp, Conditions: []FieldCount{{"B", 1}}, OtherStatusFields: []FieldCount{}},
		},
		Untracked:        ObjectGroup{Objects: 1, Examples: []string{"Widget ns/w4"}},
		BeforeFirstApply: ObjectGroup{Objects: 1, Examples: []string{"Widget ns/w3"}},
		Schema:           SchemaAudit{Unavailable: "no CustomResourceDefinition given", Findings: []SchemaFinding{}},
		Unreadable:       []UnreadableObject{},
		StaleVersions:    []StaleVersionAudit{},
		Verdict: AuditVerdict{
			MigrationNeeded: true,
			Conditions:      map[string]string{"A": "wa", "B": "wb"},
			Managers:        map[string]string{"legacy": "summary", ownership.BeforeFirstApplyManager: "summary"},
			ReleaseShared:   true,
			Flags: []string{"--condition", "A=wa", "--condition", "B=wb",
				"--from", "before-first-apply=summary", "--from", "legacy=summary", "--release-shared"},
			Unresolved: []string{},
			Notes: []string{
				"1 object without managedFields: migrate seeds them first, and their status counts as before-first-apply's in the flags",
				"schema not checked: no CustomResourceDefinition given",
			},
		},
	}
	var shared []SharedFieldAudit
	for _, f := range []string{"lastTransitionTime", "message", "reason", "status", "type"} {
		shared = append(shared,
			SharedFieldAudit{Path: `.status.conditions[type="A"].` + f, Condition: "A", Managers: []string{ownership.BeforeFirstApplyManager, "wa"}, Objects: 1},
			SharedFieldAudit{Path: `.status.conditions[type="A"].` + f, Condition: "A", Managers: []string{"legacy", "wa"}, Objects: 1})
	}
	for _, f := range []string{"lastTransitionTime", "message", "reason", "status", "type"} {
		shared = append(shared,
			SharedFieldAudit{Path: `.status.conditions[type="B"].` + f, Condition: "B", Managers: []string{"legacy", "wb"}, Objects: 1})
	}
	shared = append(shared, SharedFieldAudit{Path: ".status.phase", Managers: []string{"legacy", "summary"}, Objects: 1})
	want.SharedFields = shared
	if diff := cmp.Diff(want, r); diff != "" {
		t.Fatalf("report (-want +got):\n%s", diff)
	}
	if !r.HasFindings() {
		t.Fatal("HasFindings() = false, want true: legacy ownership is left")
	}
	// The verdict passes the migrate command's own check against the same objects.
	if err := CheckPlan(r.Verdict.Plan(), []metav1.Object{
		named("w2", ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)),
		untracked("w4", "A"),
		named("w1", ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA), ownershiptest.Entry("wb", ownershiptest.Apply, "status", ownershiptest.ApplyB), ownershiptest.Entry("summary", ownershiptest.Apply, "status", applyPhase)),
	}); err != nil {
		t.Fatalf("CheckPlan(verdict): %v", err)
	}
}

func TestAuditVerdict(t *testing.T) {
	tests := []struct {
		name       string
		objs       []metav1.Object
		flags      []string
		unresolved int
		needed     bool
	}{{
		name:  "nothing legacy",
		objs:  []metav1.Object{named("w1", ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA), ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec))},
		flags: []string{},
	}, {
		name: "Kubernetes components are not legacy writers",
		objs: []metav1.Object{named("w1", ownershiptest.Entry("kube-apiserver", ownershiptest.Update, "status", ownershiptest.LegacyAB),
			ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA))},
		flags: []string{},
	}, {
		name: "before-first-apply left with metadata and spec only has nothing to hand over",
		objs: []metav1.Object{named("w1", ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "", ownershiptest.CreateSpec),
			ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA))},
		flags: []string{},
	}, {
		name: "a legacy writer that applies under its own name is upgraded to itself",
		objs: []metav1.Object{
			named("w1", ownershiptest.Entry("ctl", ownershiptest.Update, "status", ownershiptest.LegacyAB)),
			named("w2", ownershiptest.Entry("ctl", ownershiptest.Apply, "status", applyAPhase), ownershiptest.Entry("wb", ownershiptest.Apply, "status", ownershiptest.ApplyB)),
		},
		flags:  []string{"--condition", "B=wb", "--from", "ctl=ctl"},
		needed: true,
	}, {
		name: "a condition nobody applies yet stays with the legacy writer",
		objs: []metav1.Object{
			named("w1", ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("wb", ownershiptest.Apply, "status", ownershiptest.ApplyB)),
		},
		// B moves; A and the phase have no apply manager: neither --condition A nor --from.
		flags:      []string{"--condition", "B=wb", "--release-shared"},
		unresolved: 2,
		needed:     true,
	}, {
		name: "a condition two managers apply is not guessed",
		objs: []metav1.Object{
			named("w1", ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA)),
			named("w2", ownershiptest.Entry("wx", ownershiptest.Apply, "status", applyA), ownershiptest.Entry("wb", ownershiptest.Apply, "status", ownershiptest.ApplyB), ownershiptest.Entry("s", ownershiptest.Apply, "status", applyPhase)),
		},
		flags:      []string{"--condition", "B=wb", "--release-shared"},
		unresolved: 2, // condition A, and the legacy writer's rest (A and the phase)
		needed:     true,
	}, {
		name: "untracked objects alone",
		objs: []metav1.Object{
			untracked("w1", "A"),
			named("w2", ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA), ownershiptest.Entry("s", ownershiptest.Apply, "status", applyPhase)),
		},
		flags:  []string{"--condition", "A=wa", "--from", "before-first-apply=s"},
		needed: true,
	}, {
		name: "an untracked field nobody applies stays with before-first-apply",
		objs: []metav1.Object{
			withDetails(untracked("w1", "A")),
			named("w2", ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA), ownershiptest.Entry("s", ownershiptest.Apply, "status", applyPhase)),
		},
		flags:      []string{"--condition", "A=wa"},
		unresolved: 1,
		needed:     true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustAudit(t, AuditOptions{}, tt.objs...)
			v := r.Verdict
			if diff := cmp.Diff(tt.flags, v.Flags); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
			if len(v.Unresolved) != tt.unresolved {
				t.Errorf("unresolved = %q, want %d", v.Unresolved, tt.unresolved)
			}
			if v.MigrationNeeded != tt.needed || r.HasFindings() != tt.needed {
				t.Errorf("MigrationNeeded = %v, HasFindings = %v, want %v", v.MigrationNeeded, r.HasFindings(), tt.needed)
			}
			if len(v.Flags) > 0 {
				if err := CheckPlan(v.Plan(), tt.objs); err != nil {
					t.Errorf("CheckPlan(verdict): %v", err)
				}
			}
		})
	}
}

func TestAuditActiveLegacyWriters(t *testing.T) {
	recent := stamped(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), auditNow.Add(-time.Hour))
	old := stamped(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), auditNow.Add(-48*time.Hour))
	edge := stamped(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), auditNow.Add(-DefaultAuditWindow))
	first := stamped(ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "", firstApplyA), auditNow.Add(-time.Minute))
	tests := []struct {
		name   string
		window time.Duration
		objs   []metav1.Object
		want   []ActiveWriter
	}{
		{"old writes are not active", 0, []metav1.Object{named("w1", old)}, []ActiveWriter{}},
		{"the window's start is in it", 0, []metav1.Object{named("w1", edge)},
			[]ActiveWriter{{Manager: "legacy", Subresource: "status", Objects: 1, LastWrite: *edge.Time}}},
		{"counted per object, the latest write", 0, []metav1.Object{named("w1", recent), named("w2", old), named("w3", edge)},
			[]ActiveWriter{{Manager: "legacy", Subresource: "status", Objects: 2, LastWrite: *recent.Time}}},
		{"a wider window", 72 * time.Hour, []metav1.Object{named("w2", old)},
			[]ActiveWriter{{Manager: "legacy", Subresource: "status", Objects: 1, LastWrite: *old.Time}}},
		{"before-first-apply never writes again", 0, []metav1.Object{named("w1", first)}, []ActiveWriter{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustAudit(t, AuditOptions{Window: tt.window}, tt.objs...)
			if diff := cmp.Diff(tt.want, r.ActiveLegacyWriters); diff != "" {
				t.Fatalf("active legacy writers (-want +got):\n%s", diff)
			}
			if len(tt.want) > 0 && len(r.Verdict.Notes) == 0 {
				t.Fatal("no note about the active legacy writer")
			}
		})
	}
}

func TestAuditObjectGroupsAndErrors(t *testing.T) {
	bad := ownershiptest.Entry("x", ownershiptest.Update, "status", `{"f:status":`)
	objs := []metav1.Object{untracked("u1"), untracked("u2"), untracked("u3"), named("w1", bad),
		named("w2", ownershiptest.Entry("wl", ownershiptest.Apply, "status", wholeList))}
	r := mustAudit(t, AuditOptions{Examples: 2}, objs...)
	if diff := cmp.Diff(ObjectGroup{Objects: 3, Examples: []string{"Widget ns/u1", "Widget ns/u2"}}, r.Untracked); diff != "" {
		t.Errorf("untracked (-want +got):\n%s", diff)
	}
	if len(r.Unreadable) != 1 || r.Unreadable[0].Object != "Widget ns/w1" {
		t.Errorf("unreadable = %+v, want Widget ns/w1", r.Unreadable)
	}
	if r.Objects != 5 {
		t.Errorf("objects = %d, want 5", r.Objects)
	}
	if len(r.Managers) != 1 || r.Managers[0].WholeConditionsList != 1 {
		t.Errorf("managers = %+v, want wl owning the whole list on 1 object", r.Managers)
	}
	if r = mustAudit(t, AuditOptions{Examples: -1}, objs...); len(r.Untracked.Examples) != 0 {
		t.Errorf("Examples -1 listed %q", r.Untracked.Examples)
	}

	listErr := errors.New("page 2 failed")
	if _, err := Audit(seq(listErr, objs...), AuditOptions{}); !errors.Is(err, listErr) {
		t.Errorf("Audit with a failing list: err = %v, want the list error", err)
	}
	if _, err := Audit(seq(nil), AuditOptions{Window: -time.Second}); err == nil {
		t.Error("Audit with a negative window: no error")
	}
}

func TestAuditSchema(t *testing.T) {
	atomic := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.demo.statusapply.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1alpha1", Served: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"status": {Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"conditions": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{
							Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}},
					}}},
			}},
		}}},
	}
	r := mustAudit(t, AuditOptions{CRD: atomic}, named("w1", ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA)))
	s := r.Schema
	if !s.Checked || s.CRD != atomic.Name || len(s.Findings) != 1 || s.Findings[0].Path != "status.conditions" ||
		s.Findings[0].Severity != "error" {
		t.Fatalf("schema = %+v, want one error at status.conditions", s)
	}
	if !r.HasFindings() {
		t.Error("HasFindings() = false with an atomic conditions list")
	}

	r = mustAudit(t, AuditOptions{SchemaUnavailable: "forbidden"}, named("w1", ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA)))
	if r.Schema.Checked || r.Schema.Unavailable != "forbidden" || r.HasFindings() {
		t.Fatalf("schema = %+v, HasFindings = %v: want unchecked, saying why, and no finding", r.Schema, r.HasFindings())
	}
}

func TestPlanMigrateFlags(t *testing.T) {
	tests := []struct {
		plan Plan
		want []string
	}{
		{Plan{ReleaseShared: true}, []string{"--release-shared"}},
		{Plan{Conditions: map[string]string{"B": "wb", "A": "wa"}, Managers: map[string]string{"l": "s"}},
			[]string{"--condition", "A=wa", "--condition", "B=wb", "--from", "l=s"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.plan.MigrateFlags()); diff != "" {
			t.Errorf("MigrateFlags (-want +got):\n%s", diff)
		}
	}
}

// BenchmarkAudit audits 1,000 objects already in memory, each with a legacy
// writer, two apply managers and the creator: the summarising cost alone,
// without the API server (bench-audit measures the whole read).
func BenchmarkAudit(b *testing.B) {
	objs := make([]metav1.Object, 1000)
	for i := range objs {
		objs[i] = named(fmt.Sprintf("w%04d", i), ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec),
			ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA),
			ownershiptest.Entry("wr", ownershiptest.Apply, "status", ownershiptest.ApplyR))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Audit(seq(nil, objs...), AuditOptions{Now: auditNow}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAuditDeclaredWriters(t *testing.T) {
	// The legacy writer alone holds A, B and the phase: the new writers'
	// applies restated its values, and left no entry.
	legacyOnly := []metav1.Object{
		named("w1", ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec), ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)),
		named("w2", ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)),
	}
	tests := []struct {
		name       string
		objs       []metav1.Object
		writers    map[string][]string
		flags      []string
		unresolved []string
		notes      []string
	}{{
		name:       "without declarations nothing can be attributed (the control)",
		objs:       legacyOnly,
		flags:      []string{},
		unresolved: []string{"condition A: held by legacy, applied by no manager: name its new writer with --writer MANAGER=A", "condition B:", "legacy keeps"},
	}, {
		name:    "declared writers take what they write",
		objs:    legacyOnly,
		writers: map[string][]string{"wa": {"A"}, "wb": {"B", ".status.phase"}},
		flags: []string{"--condition", "A=wa", "--condition", "B=wb", "--from", "legacy=wb",
			"--new-destination", "wa", "--new-destination", "wb"},
	}, {
		name:       "a declared writer without the phase leaves it with the legacy writer",
		objs:       legacyOnly,
		writers:    map[string][]string{"wa": {"A"}, "wb": {"B"}},
		flags:      []string{"--condition", "A=wa", "--condition", "B=wb", "--new-destination", "wa", "--new-destination", "wb"},
		unresolved: []string{"legacy keeps .status.phase: no one apply manager owns all of it or is declared to write it (--writer)"},
	}, {
		name: "a declaration agreeing with an apply manager changes nothing",
		objs: append([]metav1.Object{named("w3", ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA))},
			legacyOnly...),
		writers: map[string][]string{"wa": {"A"}, "wb": {"B", ".status.phase"}},
		flags: []string{"--condition", "A=wa", "--condition", "B=wb", "--from", "legacy=wb", "--release-shared",
			"--new-destination", "wa", "--new-destination", "wb"},
	}, {
		name: "a declaration disagreeing with an apply manager is not guessed",
		objs: append([]metav1.Object{named("w3", ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA))},
			legacyOnly...),
		writers:    map[string][]string{"wx": {"A"}, "wb": {"B", ".status.phase"}},
		flags:      []string{"--condition", "B=wb", "--release-shared", "--new-destination", "wb"},
		unresolved: []string{"condition A: written by wa, wx (declared); give it to the one", "legacy keeps condition A, .status.phase"},
	}, {
		name:    "a legacy writer declared under its own name is upgraded to itself",
		objs:    legacyOnly,
		writers: map[string][]string{"legacy": {"A", "B", ".status.phase"}},
		flags:   []string{"--from", "legacy=legacy", "--new-destination", "legacy"},
	}, {
		name:       "a declared type no object has is noted",
		objs:       legacyOnly,
		writers:    map[string][]string{"wa": {"A", "Redy"}, "wb": {"B", ".status.phaze"}},
		flags:      []string{"--condition", "A=wa", "--condition", "B=wb", "--new-destination", "wa", "--new-destination", "wb"},
		unresolved: []string{"legacy keeps .status.phase"},
		notes:      []string{"--writer wa=Redy: no object has condition Redy", "--writer wb=.status.phaze: no object has status field .status.phaze"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustAudit(t, AuditOptions{Writers: tt.writers}, tt.objs...)
			v := r.Verdict
			if diff := cmp.Diff(tt.flags, v.Flags); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
			if len(v.Unresolved) != len(tt.unresolved) {
				t.Fatalf("unresolved = %q, want %d", v.Unresolved, len(tt.unresolved))
			}
			for i, want := range tt.unresolved {
				if !strings.HasPrefix(v.Unresolved[i], want) {
					t.Errorf("unresolved[%d] = %q, want it to start with %q", i, v.Unresolved[i], want)
				}
			}
			for _, want := range tt.notes {
				if !slices.Contains(v.Notes, want) {
					t.Errorf("notes %q lack %q", v.Notes, want)
				}
			}
			if len(tt.writers) > 0 && len(v.Writers) != len(tt.writers) {
				t.Errorf("the verdict's writers %v, declared %v", v.Writers, tt.writers)
			}
			if len(v.Flags) > 0 {
				if err := CheckPlan(v.Plan(), tt.objs); err != nil {
					t.Errorf("CheckPlan(verdict): %v", err)
				}
			}
			if !r.HasFindings() {
				t.Error("legacy ownership left: HasFindings() = false")
			}
		})
	}
}

func TestAuditRefusesBadWriters(t *testing.T) {
	for _, writers := range []map[string][]string{
		{"": {"A"}},
		{ownership.BeforeFirstApplyManager: {"A"}},
		{"wa": {}},
		{"wa": {""}},
		{"wa": {".spec.replicas"}},
	} {
		if _, err := Audit(seq(nil), AuditOptions{Writers: writers}); err == nil {
			t.Errorf("Writers %q accepted", writers)
		}
	}
	if _, err := Audit(seq(nil), AuditOptions{Writers: map[string][]string{"wa": {"A", ".status.phase"}}}); err != nil {
		t.Errorf("valid writers refused: %v", err)
	}
}
