package ownership_test

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/ownership"
)

func TestHandBack(t *testing.T) {
	const v1 = "demo.statusapply.io/v1alpha1"
	cond := ownership.ConditionPath
	leaf := func(typ, field string) fieldpath.Path {
		return append(cond(typ).Copy(), fieldpath.PathElement{FieldName: &field})
	}
	// whole is a condition as an entry records it: the element and its fields.
	whole := func(types ...string) *fieldpath.Set {
		s := fieldpath.NewSet()
		for _, typ := range types {
			s.Insert(cond(typ))
			s.Insert(leaf(typ, "type"))
			s.Insert(leaf(typ, "status"))
		}
		return s
	}
	entry := func(manager string, op metav1.ManagedFieldsOperationType, sub, version string, fields *fieldpath.Set) metav1.ManagedFieldsEntry {
		e := ownership.Entry{Manager: manager, Operation: op, Subresource: sub, APIVersion: version, Fields: fields,
			Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		mf, err := e.Record()
		if err != nil {
			t.Fatal(err)
		}
		return mf
	}
	bfa := func(fields *fieldpath.Set) metav1.ManagedFieldsEntry {
		containers := fieldpath.NewSet(ownership.StatusPath(), ownership.ConditionsPath())
		return entry(ownership.BeforeFirstApplyManager, metav1.ManagedFieldsOperationUpdate, "", v1, containers.Union(fields))
	}
	apply := func(manager, version string, fields *fieldpath.Set) metav1.ManagedFieldsEntry {
		return entry(manager, metav1.ManagedFieldsOperationApply, ownership.StatusSubresource, version, fields)
	}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

	cases := []struct {
		name         string
		version      string // the manager applies through; v1 when empty
		mfs          []metav1.ManagedFieldsEntry
		exact, below *fieldpath.Set
		taken        *fieldpath.Set
		// after maps each manager to the condition types it holds afterwards.
		after map[string][]string
	}{{
		name:  "no before-first-apply: nothing moves",
		mfs:   []metav1.ManagedFieldsEntry{apply("a", v1, whole("A"))},
		exact: whole("A"),
		taken: fieldpath.NewSet(),
		after: map[string][]string{"a": {"A"}},
	}, {
		name:  "an entry lost: a new Apply entry takes exactly the intent's fields",
		mfs:   []metav1.ManagedFieldsEntry{bfa(whole("A", "B"))},
		exact: whole("A"),
		taken: whole("A"),
		after: map[string][]string{ownership.BeforeFirstApplyManager: {"B"}, "a": {"A"}},
	}, {
		name:  "shared with before-first-apply: the manager keeps its entry, before-first-apply gives up its share",
		mfs:   []metav1.ManagedFieldsEntry{bfa(whole("A", "B")), apply("a", v1, whole("A"))},
		exact: whole("A"),
		taken: whole("A"),
		after: map[string][]string{ownership.BeforeFirstApplyManager: {"B"}, "a": {"A"}},
	}, {
		name:  "the manager's entry first in the list: it takes the fields, no second entry is made",
		mfs:   []metav1.ManagedFieldsEntry{apply("a", v1, whole("A")), bfa(whole("A", "B"))},
		exact: whole("A"),
		taken: whole("A"),
		after: map[string][]string{ownership.BeforeFirstApplyManager: {"B"}, "a": {"A"}},
	}, {
		name:  "a real manager's share is never taken",
		mfs:   []metav1.ManagedFieldsEntry{bfa(whole("A")), apply("other", v1, whole("A")), entry("legacy", metav1.ManagedFieldsOperationUpdate, ownership.StatusSubresource, v1, whole("A"))},
		exact: whole("A"),
		taken: whole("A"),
		after: map[string][]string{"other": {"A"}, "legacy": {"A"}, "a": {"A"}},
	}, {
		name:  "a removal takes everything below the removed condition",
		mfs:   []metav1.ManagedFieldsEntry{bfa(whole("A", "B").Union(fieldpath.NewSet(leaf("B", "reason"))))},
		below: fieldpath.NewSet(cond("B")),
		taken: whole("B").Union(fieldpath.NewSet(leaf("B", "reason"))),
		after: map[string][]string{ownership.BeforeFirstApplyManager: {"A"}, "a": {"B"}},
	}, {
		name:    "before-first-apply in another version: nothing moves",
		version: "demo.statusapply.io/v1beta1",
		mfs:     []metav1.ManagedFieldsEntry{bfa(whole("A"))},
		exact:   whole("A"),
		taken:   fieldpath.NewSet(),
		after:   map[string][]string{ownership.BeforeFirstApplyManager: {"A"}},
	}, {
		name:  "the manager's entry in another version: nothing moves",
		mfs:   []metav1.ManagedFieldsEntry{bfa(whole("A")), apply("a", "demo.statusapply.io/v1beta1", whole("B"))},
		exact: whole("A"),
		taken: fieldpath.NewSet(),
		after: map[string][]string{ownership.BeforeFirstApplyManager: {"A"}, "a": {"B"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			version := tc.version
			if version == "" {
				version = v1
			}
			before, _ := json.Marshal(tc.mfs)
			out, taken, err := ownership.HandBack(tc.mfs, "a", ownership.StatusSubresource, version, tc.exact, tc.below, now)
			if err != nil {
				t.Fatal(err)
			}
			if after, _ := json.Marshal(tc.mfs); string(after) != string(before) {
				t.Error("HandBack modified its input")
			}
			if !taken.Equals(tc.taken) {
				t.Errorf("taken %s, want %s", taken, tc.taken)
			}
			o, err := inspect.Entries(ownership.ObjectRef{Name: "w1"}, out)
			if err != nil {
				t.Fatal(err)
			}
			got := o.ConditionTypes()
			if len(got) != len(tc.after) {
				t.Fatalf("after: %v, want %v", got, tc.after)
			}
			for m, types := range tc.after {
				if len(got[m]) != len(types) || (len(types) > 0 && got[m][0] != types[0]) {
					t.Errorf("after: %s holds %v, want %v", m, got[m], types)
				}
			}
			// No field loses its owner: every field owned before is owned after.
			all := func(mfs []metav1.ManagedFieldsEntry) *fieldpath.Set {
				s := fieldpath.NewSet()
				entries, err := inspect.Decode(mfs)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					s = s.Union(e.Fields)
				}
				return s
			}
			if lost := all(tc.mfs).Difference(all(out)); !lost.Empty() {
				t.Errorf("fields left without an owner: %s", lost)
			}
			applies := 0
			for _, e := range o.Entries {
				if e.Manager == "a" && e.Operation == metav1.ManagedFieldsOperationApply && e.APIVersion == version {
					applies++
				}
			}
			if !taken.Empty() && applies != 1 {
				t.Errorf("the manager has %d Apply entries in %s, want 1", applies, version)
			}
			for _, e := range o.Entries {
				if e.Manager == "a" && !taken.Empty() && e.Time.IsZero() {
					t.Error("the manager's entry has no time")
				}
			}
		})
	}
}

func TestManagedFieldsPatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    string
	}{
		{"entries", []metav1.ManagedFieldsEntry{{Manager: "a"}},
			`[{"op":"replace","path":"/metadata/managedFields","value":[{"manager":"a"}]},{"op":"replace","path":"/metadata/resourceVersion","value":"42"}]`},
		{"none: cleared, since an empty list keeps the live ones", nil,
			`[{"op":"replace","path":"/metadata/managedFields","value":[{}]},{"op":"replace","path":"/metadata/resourceVersion","value":"42"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ownership.ManagedFieldsPatch(tc.entries, "42")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestEntryAppliedBy(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tc := range []struct {
		entry ownership.Entry
		want  bool
	}{
		{ownership.Entry{Manager: "a", Operation: apply, Subresource: ownership.StatusSubresource}, true},
		{ownership.Entry{Manager: "b", Operation: apply, Subresource: ownership.StatusSubresource}, false},
		{ownership.Entry{Manager: "a", Operation: update, Subresource: ownership.StatusSubresource}, false},
		{ownership.Entry{Manager: "a", Operation: apply}, false},
	} {
		if got := tc.entry.AppliedBy("a", ownership.StatusSubresource); got != tc.want {
			t.Errorf("%s.AppliedBy(a, status) = %v, want %v", tc.entry, got, tc.want)
		}
	}
}
