package fleet

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

// conditionsSchema is a status schema whose conditions list has the given
// list type ("" for none: atomic).
func conditionsSchema(listType string) *apiextensionsv1.JSONSchemaProps {
	conds := apiextensionsv1.JSONSchemaProps{
		Type: "array",
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"type": {Type: "string"}, "status": {Type: "string"}, "reason": {Type: "string"},
				"message": {Type: "string"}, "lastTransitionTime": {Type: "string", Format: "date-time"},
			},
		}},
	}
	if listType != "" {
		conds.XListType = &listType
		if listType == "map" {
			conds.XListMapKeys = []string{"type"}
		}
	}
	return &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"metadata": {Type: "object"},
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"phase": {Type: "string"}, "conditions": conds,
			}},
		},
	}
}

// versionedCRD is a CRD of group example.com with the given versions
// (name -> conditions list type), the last one stored, conversion None.
func versionedCRD(versions ...[2]string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "machines.example.com"},
		Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com"},
	}
	for i, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v[0], Served: true, Storage: i == len(versions)-1,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: conditionsSchema(v[1])},
		})
	}
	return crd
}

// versionsOf is VersionsOf(versionedCRD(versions...)).
func versionsOf(t *testing.T, versions ...[2]string) *Versions {
	t.Helper()
	v, err := VersionsOf(versionedCRD(versions...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// entryIn is ownershiptest.Entry recorded in example.com/version.
func entryIn(version, manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	e := ownershiptest.Entry(manager, op, subresource, fields)
	e.APIVersion = "example.com/" + version
	return e
}

// machine is an object of the CRD with conditions of the given types and
// the managedFields given.
func machine(types []string, mfs ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1beta2")
	u.SetKind("Machine")
	u.SetNamespace("ns")
	u.SetName("m1")
	var conds []any
	for _, t := range types {
		conds = append(conds, map[string]any{"type": t, "status": "True", "reason": "R", "lastTransitionTime": "2026-01-02T03:04:05Z"})
	}
	if conds != nil {
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
	}
	u.SetManagedFields(mfs)
	return u
}

const (
	// atomicList is an atomic conditions list, merge-patched.
	atomicList = `{"f:status":{".":{},"f:conditions":{}}}`
	// applyNetworkReady is condition NetworkReady applied to a map list.
	applyNetworkReady = `{"f:status":{"f:conditions":{"k:{\"type\":\"NetworkReady\"}":{".":{},` +
		`"f:lastTransitionTime":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
)

func TestTranslate(t *testing.T) {
	atomicThenMap := versionsOf(t, [2]string{"v1beta1", ""}, [2]string{"v1beta2", "map"})
	same := versionsOf(t, [2]string{"v1beta1", "map"}, [2]string{"v1", "map"})
	obj := machine([]string{"NetworkReady", "Ready"}).Object
	decode := func(fields string) ownership.Entry {
		es, err := inspect.Decode([]metav1.ManagedFieldsEntry{ownershiptest.Entry("m", ownershiptest.Apply, "status", fields)})
		if err != nil {
			t.Fatal(err)
		}
		return es[0]
	}
	tests := []struct {
		name             string
		versions         *Versions
		fields, from, to string
		obj              map[string]any
		wantTypes        []string // condition types owned after
		wantWhole        bool     // conditions list owned whole after
		wantUntranslated string   // substring of the untranslatable set
	}{
		{name: "identical schemas", versions: same, fields: ownershiptest.LegacyAB,
			from: "example.com/v1beta1", to: "example.com/v1", wantTypes: []string{"A", "B"}},
		{name: "atomic list expands into the object's items", versions: atomicThenMap, fields: atomicList,
			from: "example.com/v1beta1", to: "example.com/v1beta2", obj: obj, wantTypes: []string{"NetworkReady", "Ready"}},
		{name: "atomic list without the object", versions: atomicThenMap, fields: atomicList,
			from: "example.com/v1beta1", to: "example.com/v1beta2", wantUntranslated: ".status.conditions"},
		{name: "items of a map list have no path in an atomic list", versions: atomicThenMap, fields: applyNetworkReady,
			from: "example.com/v1beta2", to: "example.com/v1beta1", obj: obj, wantUntranslated: `type="NetworkReady"`},
		{name: "a removed version: paths the storage schema has", versions: same, fields: ownershiptest.LegacyAB,
			from: "example.com/v1alpha1", to: "example.com/v1", wantTypes: []string{"A", "B"}},
		{name: "a removed version: a field the storage schema lacks", versions: same,
			fields: `{"f:status":{"f:gone":{},"f:phase":{}}}`,
			from:   "example.com/v1alpha1", to: "example.com/v1", wantUntranslated: ".status.gone"},
		{name: "metadata is ObjectMeta whatever the schemas say", versions: atomicThenMap,
			fields: `{"f:metadata":{"f:labels":{"f:x":{}}}}`, from: "example.com/v1beta1", to: "example.com/v1beta2"},
		{name: "metadata of a removed version", versions: same,
			fields: `{"f:metadata":{"f:labels":{"f:x":{}}}}`, from: "example.com/v1alpha1", to: "example.com/v1"},
		{name: "to a version the CRD does not list", versions: same, fields: ownershiptest.LegacyAB,
			from: "example.com/v1", to: "example.com/v2", wantUntranslated: "conditions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := decode(tt.fields).Fields
			tr, untr := tt.versions.Translate(set, tt.from, tt.to, tt.obj)
			if tt.wantUntranslated != "" {
				if !strings.Contains(untr.String(), tt.wantUntranslated) {
					t.Fatalf("untranslatable %s, want it to hold %s", untr, tt.wantUntranslated)
				}
				return
			}
			if !untr.Empty() {
				t.Fatalf("untranslatable %s, want none", untr)
			}
			got := ownership.Entry{Fields: tr}
			if types := got.ConditionTypes(); !slices.Equal(types, tt.wantTypes) {
				t.Errorf("condition types %v, want %v (fields %s)", types, tt.wantTypes, tr)
			}
			if tt.wantTypes == nil && !tr.Equals(set) {
				t.Errorf("translated %s, want %s as it is", tr, set)
			}
		})
	}
}

func TestStaleness(t *testing.T) {
	crd := versionedCRD([2]string{"v1beta1", "map"}, [2]string{"v1", "map"})
	crd.Spec.Versions[0].Served = false
	v, err := VersionsOf(crd)
	if err != nil {
		t.Fatal(err)
	}
	for apiVersion, want := range map[string]string{
		"example.com/v1":       "",
		"example.com/v1beta1":  StaleNotServed,
		"example.com/v1alpha1": StaleRemoved,
		"other.com/v1":         StaleRemoved,
		"v1":                   StaleRemoved,
	} {
		if got := v.Staleness(apiVersion); got != want {
			t.Errorf("Staleness(%s) = %q, want %q", apiVersion, got, want)
		}
	}
}

func TestRewriteAcrossVersions(t *testing.T) {
	atomicThenMap := versionsOf(t, [2]string{"v1beta1", ""}, [2]string{"v1beta2", "map"})
	same := versionsOf(t, [2]string{"v1beta1", "map"}, [2]string{"v1", "map"})
	// The legacy writer holds A and B through v1beta1; "wb" applies B
	// through v1.
	identical := machine([]string{"A", "B"},
		entryIn("v1beta1", "legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
		entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB))
	// The legacy writer merge-patched the atomic list through v1beta1 with
	// Ready and NetworkReady; "network" applies NetworkReady through v1beta2.
	atomic := machine([]string{"NetworkReady", "Ready"},
		entryIn("v1beta1", "legacy", ownershiptest.Update, "status", atomicList),
		entryIn("v1beta2", "network", ownershiptest.Apply, "status", applyNetworkReady))

	tests := []struct {
		name    string
		obj     client.Object
		plan    Plan
		wantErr error
		// want maps manager@version to the condition types it owns after.
		want map[string][]string
	}{
		{name: "a condition to a writer of another version, same paths", obj: identical,
			plan: Plan{Conditions: map[string]string{"B": "wb"}, Versions: same},
			want: map[string][]string{"legacy@example.com/v1beta1": {"A"}, "wb@example.com/v1": {"B"}}},
		{name: "control: without the CRD's versions the move is refused", obj: identical,
			plan: Plan{Conditions: map[string]string{"B": "wb"}}, wantErr: ErrAPIVersionMismatch},
		{name: "a whole atomic list to a map-list writer: every item, owned", obj: atomic,
			plan: Plan{Managers: map[string]string{"legacy": "network"}, Versions: atomicThenMap},
			want: map[string][]string{"network@example.com/v1beta2": {"NetworkReady", "Ready"}}},
		{name: "metadata alone cannot expand an atomic list: refused, not dropped", obj: metadataOnly(atomic),
			plan: Plan{Managers: map[string]string{"legacy": "network"}, Versions: atomicThenMap}, wantErr: ErrUntranslatable},
		{name: "control: without the CRD's versions the legacy entry is not dropped", obj: atomic,
			plan: Plan{Managers: map[string]string{"legacy": "network"}}, wantErr: ErrAPIVersionMismatch},
		{name: "one condition out of an atomic list: the legacy writer keeps the other, per item", obj: atomic,
			plan: Plan{Conditions: map[string]string{"NetworkReady": "network"}, Versions: atomicThenMap},
			want: map[string][]string{"legacy@example.com/v1beta2": {"Ready"}, "network@example.com/v1beta2": {"NetworkReady"}}},
		{name: "release-shared keeps an atomic list another version's items do not cover", obj: atomic,
			plan: Plan{ReleaseShared: true, Versions: atomicThenMap},
			want: map[string][]string{"network@example.com/v1beta2": {"NetworkReady"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mfs, _, err := tt.plan.Rewrite(tt.obj, migrateNow)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			o, err := inspect.Entries(ownership.RefOf(tt.obj), mfs)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, e := range o.Entries {
				if types := e.ConditionTypes(); len(types) > 0 {
					got[e.Manager+"@"+e.APIVersion] = types
				}
			}
			for k, v := range tt.want {
				if !slices.Equal(got[k], v) {
					t.Errorf("%s owns %v, want %v (all: %v)", k, got[k], v, got)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("owners %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRewriteStaleVersions(t *testing.T) {
	v := versionsOf(t, [2]string{"v1", "map"}) // v1beta1 was removed
	obj := machine([]string{"A", "B"},
		entryIn("v1beta1", "legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
		entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB),
		entryIn("v1", "wr", ownershiptest.Apply, "status", ownershiptest.ApplyR))
	mfs, changed, err := Plan{RewriteStaleVersions: true, Versions: v}.Rewrite(obj, migrateNow)
	if err != nil || !changed {
		t.Fatalf("changed %t, error %v", changed, err)
	}
	o, err := inspect.Entries(ownership.RefOf(obj), mfs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"legacy": {"A", "B"}, "wb": {"B"}, "wr": {"R"}}
	for _, e := range o.Entries {
		if e.APIVersion != "example.com/v1" {
			t.Errorf("%s still in %s", e, e.APIVersion)
		}
		if !slices.Equal(e.ConditionTypes(), want[e.Manager]) {
			t.Errorf("%s owns %v, want %v", e, e.ConditionTypes(), want[e.Manager])
		}
	}
	if len(o.Entries) != 3 {
		t.Errorf("entries %v, want every owner kept", o)
	}

	// A field the storage version no longer has: refused, unless dropped
	// on request.
	gone := machine([]string{"A"},
		entryIn("v1beta1", "legacy", ownershiptest.Update, "status", `{"f:status":{"f:gone":{},"f:phase":{}}}`))
	if _, _, err := (Plan{RewriteStaleVersions: true, Versions: v}).Rewrite(gone, migrateNow); !errors.Is(err, ErrUntranslatable) ||
		!strings.Contains(err.Error(), ".status.gone") || !strings.Contains(err.Error(), "--drop-untranslatable") {
		t.Fatalf("error %v, want ErrUntranslatable naming .status.gone and the flag", err)
	}
	mfs, _, err = Plan{RewriteStaleVersions: true, DropUntranslatable: true, Versions: v}.Rewrite(gone, migrateNow)
	if err != nil {
		t.Fatal(err)
	}
	o, err = inspect.Entries(ownership.RefOf(gone), mfs)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Entries[0].StatusFields().String(); strings.Contains(got, "gone") || !strings.Contains(got, "phase") {
		t.Errorf("fields %s, want .status.phase alone", got)
	}
	if err := (Plan{DropUntranslatable: true}).Validate(); !errors.Is(err, ErrInvalidPlan) {
		t.Errorf("DropUntranslatable alone: %v, want ErrInvalidPlan", err)
	}
}

// auditOf audits objs with crd.
func auditOf(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, objs ...*unstructured.Unstructured) *AuditReport {
	t.Helper()
	seq := func(yield func(metav1.Object, error) bool) {
		for _, o := range objs {
			if !yield(o, nil) {
				return
			}
		}
	}
	r, err := Audit(seq, AuditOptions{Now: migrateNow, CRD: crd})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAuditVersions(t *testing.T) {
	t.Run("entries in a removed version", func(t *testing.T) {
		r := auditOf(t, versionedCRD([2]string{"v1", "map"}),
			machine([]string{"B"}, entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB)))
		if len(r.StaleVersions) != 1 || r.StaleVersions[0].APIVersion != "example.com/v1beta1" ||
			r.StaleVersions[0].Reason != StaleRemoved || r.StaleVersions[0].ApplyError != ApplyError {
			t.Fatalf("stale versions %+v", r.StaleVersions)
		}
		if !r.HasFindings() || !slices.Equal(r.Verdict.Flags, []string{"--stale-versions"}) {
			t.Errorf("findings %t, flags %v, want findings and --stale-versions", r.HasFindings(), r.Verdict.Flags)
		}
		// Control: the same object while v1beta1 is served has no finding.
		served := auditOf(t, versionedCRD([2]string{"v1beta1", "map"}, [2]string{"v1", "map"}),
			machine([]string{"B"}, entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB)))
		if served.HasFindings() || len(served.StaleVersions) != 0 {
			t.Errorf("served: findings %t, stale %+v", served.HasFindings(), served.StaleVersions)
		}
	})
	t.Run("a whole atomic list through a served version", func(t *testing.T) {
		r := auditOf(t, versionedCRD([2]string{"v1beta1", ""}, [2]string{"v1beta2", "map"}),
			machine([]string{"NetworkReady", "Ready"},
				entryIn("v1beta1", "legacy", ownershiptest.Update, "status", atomicList),
				entryIn("v1beta2", "network", ownershiptest.Apply, "status", applyNetworkReady)))
		if !r.Verdict.MigrationNeeded || !r.HasFindings() {
			t.Fatalf("verdict %+v: the legacy writer of the whole list is hidden", r.Verdict)
		}
		i := slices.IndexFunc(r.Managers, func(m ManagerAudit) bool { return m.Manager == "legacy" })
		if i < 0 || r.Managers[i].WholeConditionsList != 1 {
			t.Errorf("managers %+v, want legacy owning the whole list", r.Managers)
		}
		if r.Verdict.Conditions["NetworkReady"] != "network" ||
			!slices.ContainsFunc(r.Verdict.Unresolved, func(s string) bool { return strings.Contains(s, "condition Ready") }) {
			t.Errorf("verdict %+v, want NetworkReady to network and Ready unresolved", r.Verdict)
		}
	})
	t.Run("a condition across versions with the same paths, and without", func(t *testing.T) {
		obj := machine([]string{"A", "B"},
			entryIn("v1beta1", "legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
			entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB))
		r := auditOf(t, versionedCRD([2]string{"v1beta1", "map"}, [2]string{"v1", "map"}), obj)
		if r.Verdict.Conditions["B"] != "wb" ||
			!slices.ContainsFunc(r.Verdict.Notes, func(s string) bool { return strings.Contains(s, "same paths") }) {
			t.Errorf("verdict %+v, want B to wb, noted as crossing versions", r.Verdict)
		}
		// Every plan the verdict proposes is one Rewrite carries out.
		p := r.Verdict.Plan()
		p.Versions, _ = VersionsOf(versionedCRD([2]string{"v1beta1", "map"}, [2]string{"v1", "map"}))
		if _, _, err := p.Rewrite(obj, migrateNow); err != nil {
			t.Errorf("the verdict's plan: %v", err)
		}
		// Without the CRD the move is not proposed.
		r = auditOf(t, nil, obj)
		if _, ok := r.Verdict.Conditions["B"]; ok {
			t.Errorf("verdict without the CRD %+v, want B unresolved", r.Verdict)
		}
	})
}

// TestCheckPlanWholeList: a legacy writer owning an atomic list whole holds
// every condition in it, so a plan handing one of them over is accepted; a
// type the list does not hold is still refused.
func TestCheckPlanWholeList(t *testing.T) {
	obj := machine([]string{"NetworkReady", "Ready"},
		entryIn("v1beta1", "legacy", ownershiptest.Update, "status", atomicList),
		entryIn("v1beta2", "network", ownershiptest.Apply, "status", applyNetworkReady))
	objs := []*unstructured.Unstructured{obj}
	if err := CheckPlan(Plan{Conditions: map[string]string{"Ready": "readiness"}}, objs); err != nil {
		t.Errorf("Ready from the whole list: %v", err)
	}
	if err := CheckPlan(Plan{Conditions: map[string]string{"Healthy": "readiness"}}, objs); !errors.Is(err, ErrPlanMismatch) {
		t.Errorf("a type the list does not hold: %v, want ErrPlanMismatch", err)
	}
}

// A condition moved across versions leaves the legacy entry owning the
// conditions list with nothing below it, in a version where the list is a
// map list: an empty container, not a whole list. A second run finds
// nothing to move and the audit nothing to propose; without the CRD's
// schemas (the control) the leftover reads as a whole list holding every
// condition.
func TestMoveAcrossVersionsConverges(t *testing.T) {
	crd := versionedCRD([2]string{"v1beta1", "map"}, [2]string{"v1", "map"})
	obj := machine([]string{"A", "B"},
		entryIn("v1beta1", "legacy", ownershiptest.Update, "status",
			`{"f:status":{".":{},"f:conditions":{".":{},"k:{\"type\":\"A\"}":{".":{},"f:status":{},"f:type":{}}}}}`),
		entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB))
	p := Plan{Conditions: map[string]string{"A": "wb"}, Versions: versionsOf(t, [2]string{"v1beta1", "map"}, [2]string{"v1", "map"})}
	mfs, changed, err := p.Rewrite(obj, migrateNow)
	if err != nil || !changed {
		t.Fatalf("first run: changed %t, error %v", changed, err)
	}
	obj.SetManagedFields(mfs)
	if o := ownedBy(t, mfs); o["wb (Apply, status)"] != "A,B" || !strings.HasPrefix(o["legacy (Update, status)"], " ") {
		t.Fatalf("after the first run %v, want wb owning A and B, legacy no condition", o)
	}
	if again, changed, err := p.Rewrite(obj, migrateNow); err != nil || changed {
		t.Errorf("second run: changed %t, error %v, entries %+v; want nothing to move", changed, err, again)
	}
	if r := auditOf(t, crd, obj); r.HasFindings() || len(r.Verdict.Flags) > 0 {
		t.Errorf("audit after the move: verdict %+v, want no findings", r.Verdict)
	}
	if r := auditOf(t, nil, obj); !r.HasFindings() {
		t.Errorf("control: without the CRD the leftover should read as a whole list held by legacy; verdict %+v", r.Verdict)
	}
}

// metadataOnly is u as a metadata list returns it: managedFields without
// the content they describe.
func metadataOnly(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(),
			ResourceVersion: u.GetResourceVersion(), ManagedFields: u.GetManagedFields()},
	}
}
