package ownership

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/ownershiptest"
)

// The tests in this file pin the small decisions of the package one by one
// (boundaries, negations, the spelling of identities), so that changing any
// of them makes a test fail.

func TestEntryLegacy(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Entry
		want bool
	}{
		{"Update on status", Entry{Manager: "m", Operation: ownershiptest.Update, Subresource: "status"}, true},
		{"Update on the main resource", Entry{Manager: "m", Operation: ownershiptest.Update}, false},
		{"Apply on status", Entry{Manager: "m", Operation: ownershiptest.Apply, Subresource: "status"}, false},
		{"before-first-apply on the main resource", Entry{Manager: BeforeFirstApplyManager, Operation: ownershiptest.Update}, true},
		{"before-first-apply as an Apply", Entry{Manager: BeforeFirstApplyManager, Operation: ownershiptest.Apply}, false},
		{"Update on another subresource", Entry{Manager: "m", Operation: ownershiptest.Update, Subresource: "scale"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.e.Legacy(); got != tc.want {
				t.Errorf("Legacy() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEntryOwnsAndString(t *testing.T) {
	if (Entry{}).Owns(StatusPath()) {
		t.Error("an entry without a field set owns .status")
	}
	e := decode(t, ownershiptest.Entry("m", ownershiptest.Update, "status", ownershiptest.LegacyAB))
	if !e.Owns(ConditionPath("A")) || e.Owns(ConditionPath("Z")) {
		t.Errorf("Owns: want condition A and not Z in %s", e.Fields)
	}
	for _, tc := range []struct {
		e    Entry
		want string
	}{
		{Entry{Manager: "m", Operation: ownershiptest.Update, Subresource: "status"}, "m (Update, status)"},
		{Entry{Manager: "m", Operation: ownershiptest.Apply}, "m (Apply)"},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestDecodeEntry(t *testing.T) {
	plain := ownershiptest.Entry("m", ownershiptest.Apply, "status", ownershiptest.ApplyR)
	noType := plain
	noType.FieldsType = ""
	noTime := plain
	noTime.Time = nil
	noFields := plain
	noFields.FieldsV1 = nil
	otherType := plain
	otherType.FieldsType = "FieldsV2"
	badJSON := ownershiptest.Entry("m", ownershiptest.Apply, "status", `{"f:status":`)
	for _, tc := range []struct {
		name   string
		mf     metav1.ManagedFieldsEntry
		err    bool
		leaves int
		time   bool
	}{
		{"FieldsV1", plain, false, 6, true},
		{"no fieldsType", noType, false, 6, true},
		{"no time", noTime, false, 6, false},
		{"no fieldsV1", noFields, false, 0, true},
		{"another fieldsType", otherType, true, 0, false},
		{"fieldsV1 that does not decode", badJSON, true, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := decodeEntry(tc.mf)
			if tc.err {
				if !errors.Is(err, ErrBadManagedFields) || !strings.Contains(err.Error(), "m (Apply, status)") {
					t.Fatalf("err = %v, want ErrBadManagedFields naming m (Apply, status)", err)
				}
				if e.Fields != nil || e.Manager != "" {
					t.Fatalf("a refused entry came back filled: %+v", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Manager != "m" || e.Operation != ownershiptest.Apply || e.Subresource != "status" || e.APIVersion != plain.APIVersion {
				t.Errorf("identity lost: %+v", e)
			}
			if e.Fields == nil || e.Fields.Size() != tc.leaves {
				t.Errorf("fields %v, want %d members", e.Fields, tc.leaves)
			}
			if e.Time.IsZero() == tc.time {
				t.Errorf("time %v, want set %v", e.Time, tc.time)
			}
		})
	}
}

func TestInspectEntriesKeepsOrderAndNamesTheObject(t *testing.T) {
	ref := ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}
	o, err := inspectEntries(ref, []metav1.ManagedFieldsEntry{
		ownershiptest.Entry("b", ownershiptest.Apply, "status", ownershiptest.ApplyB),
		ownershiptest.Entry("a", ownershiptest.Update, "status", ownershiptest.LegacyAB),
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Object != ref || !reflect.DeepEqual(managerNames(o.Entries), []string{"b", "a"}) {
		t.Errorf("got %v %v", o.Object, managerNames(o.Entries))
	}
	_, err = inspectEntries(ref, []metav1.ManagedFieldsEntry{
		ownershiptest.Entry("b", ownershiptest.Apply, "status", ownershiptest.ApplyB),
		ownershiptest.Entry("x", ownershiptest.Apply, "status", `[`),
	})
	var oe *ObjectError
	if !errors.As(err, &oe) || oe.Object != ref || oe.Op != "inspecting" || !errors.Is(err, ErrBadManagedFields) {
		t.Fatalf("err = %v, want an ObjectError inspecting %v wrapping ErrBadManagedFields", err, ref)
	}
	if got, want := err.Error(), "inspecting Widget ns/w: manager x (Apply, status): "; !strings.HasPrefix(got, want) {
		t.Errorf("err = %q, want it to start with %q", got, want)
	}
}

func TestOwnershipQueries(t *testing.T) {
	o := mustInspect(t, ownershiptest.Widget(
		ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec),
		ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
		ownershiptest.Entry("net", ownershiptest.Apply, "status", ownershiptest.ApplyB),
		ownershiptest.Entry("net", ownershiptest.Update, "status", `{"f:status":{"f:phase":{}}}`),
	))
	if got := managerNames(o.Managers("net")); !reflect.DeepEqual(got, []string{"net", "net"}) {
		t.Errorf("Managers(net) = %v", got)
	}
	if got := o.Managers("nobody"); got != nil {
		t.Errorf("Managers(nobody) = %v", got)
	}
	for _, tc := range []struct {
		condType string
		want     []string
	}{
		{"A", []string{"legacy (Update, status)"}},
		{"B", []string{"legacy (Update, status)", "net (Apply, status)"}},
		{"Z", nil},
	} {
		var got []string
		for _, e := range o.ConditionOwners(tc.condType) {
			got = append(got, e.String())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ConditionOwners(%s) = %v, want %v", tc.condType, got, tc.want)
		}
	}
	if got, want := o.ConditionTypes(), map[string][]string{"legacy": {"A", "B"}, "net": {"B"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ConditionTypes() = %v, want %v", got, want)
	}
	// The phase is owned by two entries of two managers; the creator owns no status.
	shared := o.SharedStatusFields()
	var phase *SharedField
	for i := range shared {
		if shared[i].Path.String() == ".status.phase" {
			phase = &shared[i]
		}
	}
	if phase == nil || !reflect.DeepEqual(phase.Managers, []string{"legacy", "net"}) {
		t.Errorf("SharedStatusFields() = %v, want .status.phase shared by legacy and net", shared)
	}
	for i := 1; i < len(shared); i++ {
		if shared[i-1].Path.Compare(shared[i].Path) >= 0 {
			t.Errorf("SharedStatusFields not sorted: %v before %v", shared[i-1].Path, shared[i].Path)
		}
	}
}

// A manager that owns a field through two entries does not share it with
// itself.
func TestSharedStatusFieldsCountsManagersNotEntries(t *testing.T) {
	o := mustInspect(t, ownershiptest.Widget(
		ownershiptest.Entry("m", ownershiptest.Apply, "status", `{"f:status":{"f:phase":{}}}`),
		ownershiptest.Entry("m", ownershiptest.Update, "status", `{"f:status":{"f:phase":{}}}`),
	))
	if got := o.SharedStatusFields(); len(got) != 0 {
		t.Errorf("SharedStatusFields() = %v, want none", got)
	}
}

func TestOwnershipString(t *testing.T) {
	var none *Ownership
	if got := none.String(); got != "(no managedFields)" {
		t.Errorf("nil String() = %q", got)
	}
	o := mustInspect(t, ownershiptest.Widget(
		ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec),
		ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
		ownershiptest.Entry("net", ownershiptest.Apply, "status", ownershiptest.ApplyB),
	))
	want := "Widget ns/w:\n" +
		"  creator (Update)\n" +
		"  legacy (Update, status) conditions=A,B status=.status.phase\n" +
		"  net (Apply, status) conditions=B\n"
	if got := o.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}

func TestIsContainer(t *testing.T) {
	o := mustInspect(t, ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)))
	for _, tc := range []struct {
		p    fieldpath.Path
		want bool
	}{
		{StatusPath(), true},
		{ConditionsPath(), true},
		{ConditionPath("A"), true},
		{fieldpath.MakePathOrDie("status", "phase"), false},
		{ConditionPath("Z"), false},
		{fieldpath.MakePathOrDie("spec"), false},
		{fieldpath.Path{}, false},
	} {
		if got := o.IsContainer(tc.p); got != tc.want {
			t.Errorf("IsContainer(%s) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if ownsBelow(nil, StatusPath()) {
		t.Error("ownsBelow(nil) = true")
	}
}

// A value is owned whole when it is a member with nothing below it: an
// atomic list, not a list whose items carry the ownership.
func TestOwnedWhole(t *testing.T) {
	atomic := decode(t, ownershiptest.Entry("m", ownershiptest.Update, "status", `{"f:status":{".":{},"f:conditions":{}}}`)).Fields
	items := decode(t, ownershiptest.Entry("m", ownershiptest.Update, "status",
		`{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"A\"}":{".":{},"f:status":{}}}}}`)).Fields
	for _, tc := range []struct {
		name string
		s    *fieldpath.Set
		p    fieldpath.Path
		want bool
	}{
		{"an atomic list", atomic, ConditionsPath(), true},
		{"a container of its members", atomic, StatusPath(), false},
		{"a map list whose items are owned", items, ConditionsPath(), false},
		{"an item owned with its fields", items, ConditionPath("A"), false},
		{"a scalar", items, append(ConditionPath("A"), fieldpath.PathElement{FieldName: ptr("status")}), true},
		{"not a member", items, ConditionPath("B"), false},
		{"no set", nil, ConditionsPath(), false},
	} {
		if got := OwnedWhole(tc.s, tc.p); got != tc.want {
			t.Errorf("%s: OwnedWhole(%s) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestOtherStatusFields(t *testing.T) {
	o := mustInspect(t, ownershiptest.Widget(
		ownershiptest.Entry("a", ownershiptest.Update, "status", `{"f:status":{".":{},"f:phase":{},"f:zone":{},"f:conditions":{".":{}},"f:attrs":{}}}`),
		ownershiptest.Entry("b", ownershiptest.Apply, "status", `{"f:status":{"f:attrs":{"f:x":{}}}}`),
	))
	var got []string
	for _, p := range o.OtherStatusFields(o.Entries[0]) {
		got = append(got, p.String())
	}
	// .status itself, the conditions and attrs (a container: b owns a member) are left out; sorted.
	if want := []string{".status.phase", ".status.zone"}; !reflect.DeepEqual(got, want) {
		t.Errorf("OtherStatusFields = %v, want %v", got, want)
	}
	if !o.OwnsWholeConditionsList(o.Entries[0]) || o.OwnsWholeConditionsList(o.Entries[1]) {
		t.Error("OwnsWholeConditionsList: want a (owns the list, nobody owns an item) and not b")
	}
}

func TestConditionTypeAt(t *testing.T) {
	for _, tc := range []struct {
		p    fieldpath.Path
		want string
		ok   bool
	}{
		{ConditionPath("A"), "A", true},
		{append(ConditionPath("A"), fieldpath.PathElement{FieldName: ptr("status")}), "A", true},
		{ConditionsPath(), "", false},
		{fieldpath.MakePathOrDie("status", "phase", "x"), "", false},
		{fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("name", "A")), "", false},
		{fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", 3)), "", false},
		{fieldpath.MakePathOrDie("status", "conditions", "type"), "", false},
		// An item keyed by more than its type is not a condition: ConditionPath("A") does not reach it.
		{fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("name", "n", "type", "A")), "", false},
		{fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "A", "name", "n"), "status"), "", false},
		{fieldpath.MakePathOrDie("spec", "conditions", fieldpath.KeyByFields("type", "A")), "", false},
		{fieldpath.MakePathOrDie("status", "components", fieldpath.KeyByFields("name", "x"), "conditions", fieldpath.KeyByFields("type", "A")), "", false},
	} {
		got, ok := ConditionTypeAt(tc.p)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ConditionTypeAt(%s) = %q %v, want %q %v", tc.p, got, ok, tc.want, tc.ok)
		}
	}
}

func TestConditionTypesOfAFieldSet(t *testing.T) {
	set := fieldpath.NewSet(
		ConditionPath("B"),
		append(ConditionPath("A"), fieldpath.PathElement{FieldName: ptr("status")}),
		append(ConditionPath("B"), fieldpath.PathElement{FieldName: ptr("reason")}),
		fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("name", "N")),
	)
	if got := conditionTypes(set); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Errorf("conditionTypes = %v, want [A B]", got)
	}
	if got := conditionTypes(nil); got != nil {
		t.Errorf("conditionTypes(nil) = %v", got)
	}
}

func TestHasPrefix(t *testing.T) {
	for _, tc := range []struct {
		p, prefix fieldpath.Path
		want      bool
	}{
		{ConditionsPath(), ConditionsPath(), true},
		{ConditionPath("A"), ConditionsPath(), true},
		{StatusPath(), ConditionsPath(), false},
		{fieldpath.MakePathOrDie("status", "phase"), ConditionsPath(), false},
		{fieldpath.MakePathOrDie("spec", "conditions"), ConditionsPath(), false},
	} {
		if got := hasPrefix(tc.p, tc.prefix); got != tc.want {
			t.Errorf("hasPrefix(%s, %s) = %v, want %v", tc.p, tc.prefix, got, tc.want)
		}
	}
}

func TestObjectRefString(t *testing.T) {
	for _, tc := range []struct {
		ref  ObjectRef
		want string
	}{
		{ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}, "Widget ns/w"},
		{ObjectRef{GVK: schema.GroupVersionKind{Kind: "Node"}, Name: "n"}, "Node n"},
		{ObjectRef{Namespace: "ns", Name: "w"}, "object ns/w"},
	} {
		if got := tc.ref.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	err := &ObjectError{Object: ObjectRef{Name: "n"}, Op: "migrating", Err: ErrRetriesExhausted}
	if got := err.Error(); got != "migrating object n: "+ErrRetriesExhausted.Error() {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(err, ErrRetriesExhausted) {
		t.Error("ObjectError does not unwrap")
	}
}

func TestAppliedFieldsEdges(t *testing.T) {
	withEntry := func(mf map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "w", "managedFields": []any{mf}},
		}}
	}
	entry := func(extra map[string]any) map[string]any {
		mf := map[string]any{"manager": "m", "operation": "Apply", "subresource": "status"}
		for k, v := range extra {
			mf[k] = v
		}
		return mf
	}
	for _, tc := range []struct {
		name                 string
		obj                  *unstructured.Unstructured
		manager, subresource string
		found                bool
		err                  bool
		leaves               int
	}{
		{"no fieldsV1", withEntry(entry(nil)), "m", "status", true, false, 0},
		{"null fieldsV1", withEntry(entry(map[string]any{"fieldsV1": nil})), "m", "status", true, false, 0},
		{"no fieldsType", withEntry(entry(map[string]any{"fieldsV1": map[string]any{"f:status": map[string]any{"f:phase": map[string]any{}}}})), "m", "status", true, false, 1},
		{"fieldsV1 not a field set", withEntry(entry(map[string]any{"fieldsV1": map[string]any{"f:status": "x"}})), "m", "status", false, true, 0},
		{"fieldsV1 that does not encode", withEntry(entry(map[string]any{"fieldsV1": map[string]any{"f:status": make(chan int)}})), "m", "status", false, true, 0},
		{"other subresource", withEntry(entry(nil)), "m", "", false, false, 0},
		{"Update entry", withEntry(map[string]any{"manager": "m", "operation": "Update", "subresource": "status"}), "m", "status", false, false, 0},
		{"no managedFields", &unstructured.Unstructured{Object: map[string]any{}}, "m", "status", false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, found, err := AppliedFields(tc.obj, tc.manager, tc.subresource)
			if tc.err != (err != nil) || found != tc.found {
				t.Fatalf("found %v, err %v; want found %v, error %v", found, err, tc.found, tc.err)
			}
			if tc.err {
				if !errors.Is(err, ErrBadManagedFields) || !strings.Contains(err.Error(), `"m"`) || set != nil {
					t.Fatalf("err = %v, set %v: want ErrBadManagedFields naming the manager and no set", err, set)
				}
				return
			}
			if !found {
				if set != nil {
					t.Fatalf("not found but set %v", set)
				}
				return
			}
			if set == nil || set.Leaves().Size() != tc.leaves {
				t.Fatalf("set %v, want %d leaves", set, tc.leaves)
			}
		})
	}
}

func TestRefOfTypedPointer(t *testing.T) {
	w := ownershiptest.Widget()
	w.Kind = "Gizmo"
	if got := RefOf(w); got.GVK.Kind != "Gizmo" || got.String() != "Gizmo ns/w" {
		t.Errorf("RefOf with a kind set = %v", got)
	}
}

// decode decodes mf or fails the test.
func decode(t *testing.T, mf metav1.ManagedFieldsEntry) Entry {
	t.Helper()
	e, err := decodeEntry(mf)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ptr(s string) *string { return &s }
