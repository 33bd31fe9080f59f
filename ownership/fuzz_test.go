package ownership

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/fieldsets"
	"github.com/statusapply/statusapply/internal/ownershiptest"
)

// FuzzInspect reads arbitrary JSON as an object's metadata.managedFields,
// with Inspect (every entry) and AppliedFields (one manager's Apply entry,
// read on every apply). Properties:
//
//   - neither panics; Inspect's errors are *ObjectError values naming the
//     object and wrapping ErrNoManagedFields when, and only when, the object
//     has no managedFields (HasManagedFields is false), else
//     ErrBadManagedFields: an object whose entries cannot be read must not
//     pass for one read from a cache that strips them;
//   - AppliedFields' errors wrap ErrBadManagedFields, and it fails only when
//     Inspect fails too;
//   - when Inspect succeeds, AppliedFields finds the first Apply entry of the
//     manager and subresource Inspect lists, with the same field set, and
//     every entry's field set survives a JSON round trip.
func FuzzInspect(f *testing.F) {
	entryJSON := func(mfs ...metav1.ManagedFieldsEntry) string {
		raw, err := json.Marshal(mfs)
		if err != nil {
			f.Fatal(err)
		}
		return string(raw)
	}
	for _, seed := range [][3]string{
		{entryJSON(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("b", ownershiptest.Apply, "status", ownershiptest.ApplyB)), "b", "status"},
		{entryJSON(ownershiptest.Entry("r", ownershiptest.Apply, "status", ownershiptest.ApplyR), ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec)), "r", "status"},
		{entryJSON(ownershiptest.Entry("creator", ownershiptest.Apply, "", ownershiptest.CreateSpec)), "creator", ""},
		{entryJSON(ownershiptest.Entry("b", ownershiptest.Apply, "status", `{}`)), "b", "status"},
		{`[{"manager":"b","operation":"Apply","subresource":"status","fieldsV1":null}]`, "b", "status"},
		{`[{"manager":"b","operation":"Apply","subresource":"status","fieldsType":"FieldsV2","fieldsV1":{}}]`, "b", "status"},
		{`[{"manager":"b","operation":"Apply","subresource":"status","fieldsV1":{"x:status":{}}}]`, "b", "status"},
		{`[{"manager":"b","operation":7}]`, "b", ""},
		{`["not an entry"]`, "b", ""},
		{`[]`, "b", ""},
		{`{}`, "b", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, doc, manager, subresource string) {
		var mfs any
		if utiljson.Unmarshal([]byte(doc), &mfs) != nil {
			return
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns", "managedFields": mfs},
		}}
		o, err := Inspect(u)
		if err != nil {
			var oe *ObjectError
			if !errors.As(err, &oe) || oe.Object != RefOf(u) {
				t.Fatalf("Inspect: %v is not an *ObjectError naming the object", err)
			}
			if want := !HasManagedFields(u); errors.Is(err, ErrNoManagedFields) != want {
				t.Fatalf("Inspect: %v; the object has managedFields: %v", err, !want)
			}
			if !errors.Is(err, ErrNoManagedFields) && !errors.Is(err, ErrBadManagedFields) {
				t.Fatalf("Inspect: %v wraps neither sentinel", err)
			}
		}
		set, found, appliedErr := AppliedFields(u, manager, subresource)
		if appliedErr != nil {
			if !errors.Is(appliedErr, ErrBadManagedFields) {
				t.Fatalf("AppliedFields: %v does not wrap ErrBadManagedFields", appliedErr)
			}
			if err == nil {
				t.Fatalf("AppliedFields fails (%v) where Inspect reads every entry", appliedErr)
			}
			return
		}
		if err != nil {
			return
		}
		var want *Entry
		for i, e := range o.Entries {
			if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == subresource {
				want = &o.Entries[i]
				break
			}
		}
		if found != (want != nil) {
			t.Fatalf("AppliedFields found %v; Inspect lists %v", found, o.Entries)
		}
		if found && !set.Equals(want.Fields) {
			t.Fatalf("AppliedFields read %v; Inspect %v", set, want.Fields)
		}
		for _, e := range o.Entries {
			raw, err := e.Fields.ToJSON()
			if err != nil {
				t.Fatalf("%s: encoding %v: %v", e, e.Fields, err)
			}
			back := &fieldpath.Set{}
			if err := back.FromJSON(bytes.NewReader(raw)); err != nil || !back.Equals(e.Fields) {
				t.Fatalf("%s: %s decodes to %v (%v), not %v", e, raw, back, err, e.Fields)
			}
		}
	})
}

// FuzzInspectEntries decodes arbitrary bytes as the fieldsV1 of a typed
// entry (a typed object keeps them raw, as read from JSON or protobuf).
// Properties: no panic; a refusal is an *ObjectError wrapping
// ErrBadManagedFields; an accepted field set survives a JSON round trip, and
// the entry's derived views (condition types, status fields, owners of each
// leaf) are consistent with it.
func FuzzInspectEntries(f *testing.F) {
	for _, seed := range []string{ownershiptest.LegacyAB, ownershiptest.ApplyB, ownershiptest.ApplyR, ownershiptest.CreateSpec, `{}`, `null`, `{"f:status":`, `{"x:status":{}}`, `[]`,
		`{"f:status":{"f:conditions":{"k:{\"type\":1}":{}}}}`, `{"f:a":{"v:\"x\"":{}},"f:b":{"i:3":{}}}`} {
		f.Add([]byte(seed), "FieldsV1")
	}
	f.Add([]byte(ownershiptest.ApplyB), "FieldsV2")
	f.Add([]byte(nil), "")
	f.Fuzz(func(t *testing.T, raw []byte, fieldsType string) {
		mf := metav1.ManagedFieldsEntry{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, Subresource: StatusSubresource, FieldsType: fieldsType}
		if raw != nil {
			mf.FieldsV1 = &metav1.FieldsV1{}
			mf.FieldsV1.SetRawBytes(raw)
		}
		ref := ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}
		o, err := inspectEntries(ref, []metav1.ManagedFieldsEntry{mf})
		if err != nil {
			var oe *ObjectError
			if !errors.As(err, &oe) || oe.Object != ref || !errors.Is(err, ErrBadManagedFields) {
				t.Fatalf("inspectEntries: %v, want an *ObjectError wrapping ErrBadManagedFields", err)
			}
			return
		}
		e := o.Entries[0]
		out, err := e.Fields.ToJSON()
		if err != nil {
			t.Fatalf("encoding %v: %v", e.Fields, err)
		}
		back := &fieldpath.Set{}
		if err := back.FromJSON(bytes.NewReader(out)); err != nil || !back.Equals(e.Fields) {
			t.Fatalf("%s decodes to %v (%v), not %v", out, back, err, e.Fields)
		}
		if !e.Fields.Difference(e.StatusFields()).Intersection(fieldsets.Subtree(e.Fields, StatusPath())).Empty() {
			t.Fatalf("StatusFields %v misses status fields of %v", e.StatusFields(), e.Fields)
		}
		e.Fields.Leaves().Iterate(func(p fieldpath.Path) {
			if len(o.Owners(p)) != 1 {
				t.Fatalf("the owners of %v are %v", p, o.Owners(p))
			}
		})
		for _, typ := range e.ConditionTypes() {
			if len(o.ConditionOwners(typ)) != 1 {
				t.Fatalf("condition %q is owned by %v", typ, o.ConditionOwners(typ))
			}
		}
	})
}
