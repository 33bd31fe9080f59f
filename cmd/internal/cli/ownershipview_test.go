package cli

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/ownership"
)

// Field sets as the API server records them for a Widget.
const (
	legacyFields = `{"f:status":{".":{},"f:conditions":{".":{},` +
		`"k:{\"type\":\"A\"}":{".":{},"f:status":{},"f:type":{}},` +
		`"k:{\"type\":\"B\"}":{".":{},"f:status":{},"f:type":{}}},"f:phase":{}}}`
	networkingFields = `{"f:status":{"f:conditions":{"k:{\"type\":\"B\"}":{".":{},"f:status":{},"f:type":{}}}}}`
	readinessFields  = `{"f:status":{"f:conditions":{"k:{\"type\":\"R\"}":{".":{},"f:status":{},"f:type":{}}},"f:readyReplicas":{}}}`
	creatorFields    = `{"f:spec":{"f:replicas":{}}}`
	atomicFields     = `{"f:status":{"f:conditions":{}}}`
)

// entry builds a managedFields entry with the given field set.
func entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	mf := metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, Subresource: subresource,
		APIVersion: "demo.statusapply.io/v1alpha1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{},
	}
	mf.FieldsV1.SetRawBytes([]byte(fields))
	return mf
}

// mixedView is a Widget with a legacy writer, two apply managers (one
// sharing B with the legacy writer) and the client that created it.
func mixedView(t *testing.T) ownershipView {
	t.Helper()
	o, err := inspect.Entries(ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w1"},
		[]metav1.ManagedFieldsEntry{
			entry("creator", metav1.ManagedFieldsOperationUpdate, "", creatorFields),
			entry("legacy", metav1.ManagedFieldsOperationUpdate, "status", legacyFields),
			entry("networking", metav1.ManagedFieldsOperationApply, "status", networkingFields),
			entry("readiness", metav1.ManagedFieldsOperationApply, "status", readinessFields),
		})
	if err != nil {
		t.Fatal(err)
	}
	return viewOf(o)
}

func TestViewOfManagers(t *testing.T) {
	v := mixedView(t)
	type row struct {
		manager, op, sub string
		legacy, whole    bool
		conds, other     []string
	}
	var got []row
	for _, m := range v.Managers {
		got = append(got, row{m.Manager, m.Operation, m.Subresource, m.Legacy, m.WholeConditionsList, m.Conditions, m.OtherStatusFields})
	}
	want := []row{
		{"creator", "Update", "", false, false, []string{}, []string{}},
		{"legacy", "Update", "status", true, false, []string{"A", "B"}, []string{".status.phase"}},
		{"networking", "Apply", "status", false, false, []string{"B"}, []string{}},
		{"readiness", "Apply", "status", false, false, []string{"R"}, []string{".status.readyReplicas"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("managers:\n got %+v\nwant %+v", got, want)
	}
}

func TestViewOfSharedLeavesOutContainers(t *testing.T) {
	v := mixedView(t)
	if len(v.SharedStatusFields) == 0 {
		t.Fatal("no shared fields")
	}
	for _, s := range v.SharedStatusFields {
		if s.Condition != "B" || !reflect.DeepEqual(s.Managers, []string{"legacy", "networking"}) {
			t.Errorf("unexpected shared field %+v", s)
		}
	}
	paths := map[string]bool{}
	for _, s := range v.SharedStatusFields {
		paths[s.Path] = true
	}
	want := map[string]bool{`.status.conditions[type="B"].status`: true, `.status.conditions[type="B"].type`: true}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("shared paths = %v, want the leaves of B (the item and the list are containers)", paths)
	}
}

func TestViewOfAtomicConditions(t *testing.T) {
	o, err := inspect.Entries(ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Gadget"}, Name: "g"}, []metav1.ManagedFieldsEntry{
		entry("a", metav1.ManagedFieldsOperationApply, "status", atomicFields),
		entry("b", metav1.ManagedFieldsOperationApply, "status", atomicFields),
	})
	if err != nil {
		t.Fatal(err)
	}
	v := viewOf(o)
	for _, m := range v.Managers {
		if !m.WholeConditionsList || len(m.Conditions) != 0 || conditionsCell(m) != "(whole list)" {
			t.Errorf("%s: want the whole atomic list, got %+v", m.Manager, m)
		}
	}
	if len(v.SharedStatusFields) != 1 || v.SharedStatusFields[0].Path != ".status.conditions" {
		t.Fatalf("shared = %+v, want the atomic list itself", v.SharedStatusFields)
	}
	if got := notes(v.Managers[0], v.SharedStatusFields); got != "shares .status.conditions with b" {
		t.Fatalf("notes = %q", got)
	}
}

func TestViewOfNil(t *testing.T) {
	v := viewOf(nil)
	if v.Managers == nil || len(v.Managers) != 0 || v.SharedStatusFields == nil {
		t.Fatalf("viewOf(nil) = %+v, want empty, non-nil lists for JSON", v)
	}
}

func TestNotes(t *testing.T) {
	shared := []sharedView{
		{Path: `.status.conditions[type="B"].status`, Condition: "B", Managers: []string{"legacy", "networking"}},
		{Path: `.status.conditions[type="B"].type`, Condition: "B", Managers: []string{"legacy", "networking"}},
		{Path: ".status.phase", Managers: []string{"legacy", "networking"}},
		{Path: ".status.endpoint", Managers: []string{"legacy", "other", "summary"}},
	}
	tests := []struct {
		name string
		m    managerView
		want string
	}{
		{name: "legacy sharing with two groups", m: managerView{Manager: "legacy", Legacy: true},
			want: "legacy writer; shares condition B, .status.phase with networking; shares .status.endpoint with other, summary"},
		{name: "apply manager", m: managerView{Manager: "networking"},
			want: "shares condition B, .status.phase with legacy"},
		{name: "nothing shared", m: managerView{Manager: "readiness"}, want: ""},
		{name: "legacy alone", m: managerView{Manager: "old", Legacy: true}, want: "legacy writer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := notes(tt.m, shared); got != tt.want {
				t.Fatalf("notes = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOwnershipTable(t *testing.T) {
	v := mixedView(t)
	var b bytes.Buffer
	hidden, err := ownershipTable{indent: "  "}.write(&b, v)
	if err != nil {
		t.Fatal(err)
	}
	if hidden != 1 {
		t.Fatalf("hidden = %d, want the creator's entry", hidden)
	}
	want := strings.Join([]string{
		"  MANAGER      OPERATION   SUBRESOURCE   CONDITIONS   OTHER STATUS FIELDS     NOTES",
		"  legacy       Update      status        A,B          .status.phase           legacy writer; shares condition B with networking",
		"  networking   Apply       status        B            <none>                  shares condition B with legacy",
		"  readiness    Apply       status        R            .status.readyReplicas   <none>",
		"",
	}, "\n")
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	hidden, err = ownershipTable{all: true}.write(&b, v)
	if err != nil || hidden != 0 || !strings.Contains(b.String(), "creator") {
		t.Fatalf("all: hidden %d, err %v, output\n%s", hidden, err, b.String())
	}

	b.Reset()
	if _, err := (ownershipTable{indent: "  "}).write(&b, viewOf(nil)); err != nil {
		t.Fatal(err)
	}
	if b.String() != "  no manager owns status fields\n" {
		t.Fatalf("empty view printed %q", b.String())
	}
}

func TestViewOfContainersAreNotFields(t *testing.T) {
	// A merge patch that set only condition A records .status and
	// .status.conditions ("." members) as its own too.
	const onlyA = `{"f:status":{".":{},"f:conditions":{".":{},` +
		`"k:{\"type\":\"A\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
	// A writer that created .status.plan as an empty map, and one that owns
	// its members.
	const planMap = `{"f:status":{".":{},"f:plan":{".":{}}}}`
	const planSteps = `{"f:status":{"f:plan":{"f:id":{}}}}`
	o, err := inspect.Entries(ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w1"},
		[]metav1.ManagedFieldsEntry{
			entry("legacy", metav1.ManagedFieldsOperationUpdate, "status", onlyA),
			entry("planner", metav1.ManagedFieldsOperationUpdate, "status", planMap),
			entry("stepper", metav1.ManagedFieldsOperationApply, "status", planSteps),
		})
	if err != nil {
		t.Fatal(err)
	}
	v := viewOf(o)
	for _, m := range v.Managers {
		want := map[string][]string{"legacy": {}, "planner": {}, "stepper": {".status.plan.id"}}[m.Manager]
		if !reflect.DeepEqual(m.OtherStatusFields, want) {
			t.Errorf("%s: other status fields %q, want %q (containers are not fields)", m.Manager, m.OtherStatusFields, want)
		}
	}
	if v.Managers[0].Conditions[0] != "A" || !v.Managers[0].Legacy {
		t.Fatalf("legacy: %+v", v.Managers[0])
	}
}

func TestKubernetesComponentsAreNotLegacyWriters(t *testing.T) {
	// What the API server records for a CRD's status.
	const crdStatus = `{"f:status":{"f:acceptedNames":{"f:kind":{},"f:plural":{}},` +
		`"f:conditions":{"k:{\"type\":\"Established\"}":{".":{},"f:status":{},"f:type":{}}}}}`
	o, err := inspect.Entries(ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "CustomResourceDefinition"}, Name: "widgets.demo.statusapply.io"},
		[]metav1.ManagedFieldsEntry{
			entry("kube-apiserver", metav1.ManagedFieldsOperationUpdate, "status", crdStatus),
			entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", crdStatus),
			entry("my-controller", metav1.ManagedFieldsOperationUpdate, "status", crdStatus),
			entry(ownership.BeforeFirstApplyManager, metav1.ManagedFieldsOperationUpdate, "", crdStatus),
		})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range viewOf(o).Managers {
		got[m.Manager] = m.Legacy
	}
	want := map[string]bool{"kube-apiserver": false, "kube-controller-manager": false, "my-controller": true,
		ownership.BeforeFirstApplyManager: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("legacy = %v, want %v", got, want)
	}
}

func TestWriteOwnersTable(t *testing.T) {
	w1, w2 := widget("ns", "w1"), widget("ns", "w2")
	result := ownersList{Items: []objectOwnersView{
		{Object: refView(w1), ManagedFields: true, ownershipView: mixedView(t), obj: w1},
		{Object: refView(w2), Note: noManagedFieldsNote, ownershipView: viewOf(nil), obj: w2},
	}}
	var b bytes.Buffer
	hidden, err := writeOwnersTable(&b, newOutputFlags(), result, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if hidden != 1 {
		t.Fatalf("hidden = %d, want the creator's entry", hidden)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := [][]string{
		{"NAME", "MANAGER", "OPERATION", "SUBRESOURCE", "OWNS", "NOTES"},
		{"w1", "legacy", "Update", "status", "condition A", "legacy writer"},
		{"w1", "legacy", "Update", "status", "condition B", "legacy writer; shared with networking"},
		{"w1", "legacy", "Update", "status", ".status.phase", "legacy writer"},
		{"w1", "networking", "Apply", "status", "condition B", "shared with legacy"},
		{"w1", "readiness", "Apply", "status", "condition R", "<none>"},
		{"w1", "readiness", "Apply", "status", ".status.readyReplicas", "<none>"},
		{"w2", "<none>", "<none>", "<none>", "<unknown>", "no managedFields (see the note below)"},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i := range want {
		if lineWith(lines[i], want[i]...) == "" {
			t.Errorf("line %d %q misses %q", i, lines[i], want[i])
		}
	}
	if width := len(lines[len(lines)-1]); width > 120 {
		t.Errorf("the untracked object's row is %d characters wide: its note belongs after the table", width)
	}
	if strings.Contains(b.String(), "API VERSION") || strings.Contains(lines[1], "shared") {
		t.Errorf("default columns or notes wrong:\n%s", b.String())
	}
	// Columns are aligned: every row has its OWNS cell where the header has it.
	at := strings.Index(lines[0], "OWNS")
	for _, l := range lines[1:] {
		if l[at-1] != ' ' || l[at] == ' ' {
			t.Errorf("OWNS not aligned at %d in %q", at, l)
		}
	}

	b.Reset()
	if _, err := writeOwnersTable(&b, boundOutputFlags(t, "-o", "wide"), result, true, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range [][]string{
		{"NAMESPACE", "NAME", "MANAGER", "API VERSION", "UPDATED", "NOTES"},
		{"ns", "w1", "creator", "Update", "<none>", "demo.statusapply.io/v1alpha1", "no status field"},
	} {
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return lineWith(l, want...) != "" }) {
			t.Errorf("wide output misses a line with %q:\n%s", want, out)
		}
	}
}

func TestStaleNote(t *testing.T) {
	item := func(ns string, stale ...string) objectOwnersView {
		v := objectOwnersView{Object: objectRefView{Kind: "Gadget", Namespace: ns, Name: "g1"}}
		for _, s := range stale {
			v.Managers = append(v.Managers, managerView{Manager: "m", APIVersion: "example.com/v1beta1", StaleVersion: s})
		}
		return v
	}
	tests := []struct {
		name    string
		args    []string
		sel     selection
		items   []objectOwnersView
		command string // "" for no note
		removed bool
	}{
		{name: "served versions only", args: []string{"gadget/g1"}, sel: selection{namespace: "shop"},
			items: []objectOwnersView{item("shop", "", "")}},
		{name: "a named object", args: []string{"gadget/g1"}, sel: selection{namespace: "shop"},
			items:   []objectOwnersView{item("shop", fleet.StaleRemoved, "")},
			command: "statusapply migrate gadget/g1 -n shop --stale-versions", removed: true},
		{name: "not served only", args: []string{"gadget", "g1"}, sel: selection{namespace: "shop"},
			items:   []objectOwnersView{item("shop", fleet.StaleNotServed)},
			command: "statusapply migrate gadget g1 -n shop --stale-versions"},
		{name: "every namespace, a selector to quote", args: []string{"gadgets"},
			sel:     selection{namespace: "shop", allNamespaces: true, selector: "app in (web)"},
			items:   []objectOwnersView{item("shop", fleet.StaleNotServed), item("other", fleet.StaleRemoved)},
			command: "statusapply migrate gadgets -A -l 'app in (web)' --stale-versions", removed: true},
		{name: "cluster-scoped", args: []string{"gadgets"}, sel: selection{namespace: "shop"},
			items:   []objectOwnersView{item("", fleet.StaleRemoved)},
			command: "statusapply migrate gadgets --stale-versions", removed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			note := staleNote("statusapply", tt.args, &tt.sel, ownersList{Items: tt.items})
			if tt.command == "" {
				if note != "" {
					t.Fatalf("note = %q, want none", note)
				}
				return
			}
			if !strings.Contains(note, "run "+tt.command+" (a dry run), then the same with --apply") {
				t.Errorf("note = %q, want the command %q", note, tt.command)
			}
			if got := strings.Contains(note, fleet.ApplyError); got != tt.removed {
				t.Errorf("note = %q: names the apply error %v, want %v", note, got, tt.removed)
			}
		})
	}
}

func TestStaleCell(t *testing.T) {
	for _, tt := range []struct{ reason, want string }{
		{fleet.StaleRemoved, "recorded in v1beta1, removed from the CRD"},
		{fleet.StaleNotServed, "recorded in v1beta1, no longer served"},
	} {
		m := managerView{Manager: "wa", APIVersion: "example.com/v1beta1", StaleVersion: tt.reason}
		if got := rowNotes(m, ownedCell{label: "condition A", condition: "A"}, nil); got != tt.want {
			t.Errorf("%s: notes = %q, want %q", tt.reason, got, tt.want)
		}
	}
}
