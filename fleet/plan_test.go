package fleet

import (
	"errors"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/fieldsets"
	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

// ownedBy summarises ownership as "manager (Operation, subresource)" ->
// condition types and other status leaves, for compact expectations.
func ownedBy(t *testing.T, mfs []metav1.ManagedFieldsEntry) map[string]string {
	t.Helper()
	o, err := inspect.Entries(ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: "Widget"}, Namespace: "ns", Name: "w"}, mfs)
	if err != nil {
		t.Fatal(err)
	}
	return summary(o)
}

// summary is ownedBy for inspected ownership; nil for no ownership.
func summary(o *ownership.Ownership) map[string]string {
	if o == nil {
		return nil
	}
	out := map[string]string{}
	for _, e := range o.Entries {
		s := ""
		for i, c := range e.ConditionTypes() {
			if i > 0 {
				s += ","
			}
			s += c
		}
		// the leaf status fields e owns outside .status.conditions
		conditions := fieldsets.Subtree(e.Fields, ownership.ConditionsPath())
		e.StatusFields().Difference(conditions).Leaves().Iterate(func(p fieldpath.Path) {
			s += " " + p.String()
		})
		if e.Fields.Has(fieldPathSpecReplicas) {
			s += " spec"
		}
		out[e.String()] = s
	}
	return out
}

var fieldPathSpecReplicas = mustPath("spec", "replicas")

func TestRewrite(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		name string
		plan Plan
		mfs  []metav1.ManagedFieldsEntry
		want map[string]string
	}{
		{
			name: "split a legacy owner per condition type",
			plan: Plan{Conditions: map[string]string{"A": "readiness", "B": "networking"}},
			mfs:  []metav1.ManagedFieldsEntry{ownershiptest.Entry("creator", ownershiptest.Update, "", ownershiptest.CreateSpec), ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)},
			want: map[string]string{
				"creator (Update)":           " spec",
				"legacy (Update, status)":    " .status.phase",
				"readiness (Apply, status)":  "A",
				"networking (Apply, status)": "B",
			},
		},
		{
			name: "whole manager through csaupgrade",
			plan: Plan{Managers: map[string]string{"legacy": "summary"}},
			mfs:  []metav1.ManagedFieldsEntry{ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)},
			want: map[string]string{"summary (Apply, status)": "A,B .status.phase"},
		},
		{
			name: "split, then the rest to one manager",
			plan: Plan{Conditions: map[string]string{"A": "readiness"}, Managers: map[string]string{"legacy": "summary"}},
			mfs:  []metav1.ManagedFieldsEntry{ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)},
			want: map[string]string{"readiness (Apply, status)": "A", "summary (Apply, status)": "B .status.phase"},
		},
		{
			name: "into an existing apply entry, leaving other apply owners alone",
			plan: Plan{Conditions: map[string]string{"B": "networking", "R": "networking"}},
			mfs: []metav1.ManagedFieldsEntry{
				ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("networking", ownershiptest.Apply, "status", ownershiptest.ApplyB),
				ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR),
			},
			want: map[string]string{
				"legacy (Update, status)":    "A .status.phase",
				"networking (Apply, status)": "B",
				"readiness (Apply, status)":  "R",
			},
		},
		{
			// The fields only before-first-apply holds keep it as their owner:
			// released, B would be deleted with the whole list the next time
			// readiness removes its last condition.
			name: "release shared ownership of before-first-apply, never its sole fields",
			plan: Plan{Conditions: map[string]string{"A": "readiness"}, ReleaseShared: true},
			mfs: []metav1.ManagedFieldsEntry{
				ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR),
			},
			want: map[string]string{
				"before-first-apply (Update, status)": "B .status.phase",
				"readiness (Apply, status)":           "A,R",
			},
		},
		{
			name: "release before-first-apply's share of what an apply manager also owns",
			plan: Plan{ReleaseShared: true},
			mfs: []metav1.ManagedFieldsEntry{
				ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("networking", ownershiptest.Apply, "status", ownershiptest.ApplyB),
			},
			want: map[string]string{
				"before-first-apply (Update, status)": "A .status.phase",
				"networking (Apply, status)":          "B",
			},
		},
		{
			name: "of two legacy owners, before-first-apply gives way to the named writer",
			plan: Plan{ReleaseShared: true},
			mfs: []metav1.ManagedFieldsEntry{
				ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "status", ownershiptest.LegacyAB), ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
			},
			want: map[string]string{"legacy (Update, status)": "A,B .status.phase"},
		},
		{
			name: "before-first-apply on the main resource gives up its status only",
			plan: Plan{Managers: map[string]string{ownership.BeforeFirstApplyManager: "summary"}},
			mfs: []metav1.ManagedFieldsEntry{
				ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "", `{"f:spec":{".":{},"f:replicas":{}},"f:status":{".":{},"f:phase":{}}}`),
			},
			want: map[string]string{"before-first-apply (Update)": " spec", "summary (Apply, status)": " .status.phase"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := ownershiptest.Widget(tt.mfs...)
			original := obj.DeepCopy().ManagedFields
			got, changed, err := tt.plan.Rewrite(obj, now)
			if err != nil {
				t.Fatal(err)
			}
			if !changed {
				t.Error("changed = false")
			}
			if !reflect.DeepEqual(obj.ManagedFields, original) {
				t.Error("Rewrite modified its input")
			}
			if o := ownedBy(t, got); !reflect.DeepEqual(o, tt.want) {
				t.Errorf("ownership after rewrite:\n got %v\nwant %v", o, tt.want)
			}
			for _, mf := range got {
				if mf.Operation == ownershiptest.Apply && mf.Subresource != ownership.StatusSubresource {
					t.Errorf("apply entry %s not on the status subresource", mf.Manager)
				}
				if mf.Time == nil || mf.APIVersion == "" || mf.FieldsType != "FieldsV1" {
					t.Errorf("entry %s incomplete: %#v", mf.Manager, mf)
				}
			}

			again, changed, err := tt.plan.Rewrite(ownershiptest.Widget(got...), now.Add(time.Hour))
			if err != nil || changed {
				t.Errorf("second rewrite: changed=%v err=%v", changed, err)
			}
			if !reflect.DeepEqual(again, got) {
				t.Error("second rewrite returned different managedFields")
			}
		})
	}
}

func TestRewriteNothingToDo(t *testing.T) {
	mfs := []metav1.ManagedFieldsEntry{ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR)}
	got, changed, err := Plan{Conditions: map[string]string{"A": "x"}, ReleaseShared: true}.Rewrite(ownershiptest.Widget(mfs...), time.Now())
	if err != nil || changed || !reflect.DeepEqual(got, mfs) {
		t.Errorf("got %v changed=%v err=%v", got, changed, err)
	}
}

func TestRewriteErrors(t *testing.T) {
	other := ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR)
	other.APIVersion = "demo.statusapply.io/v1beta1"
	legacyV1beta1 := ownershiptest.Entry("legacy", ownershiptest.Update, "status", `{"f:status":{"f:observedGeneration":{}}}`)
	legacyV1beta1.APIVersion = "demo.statusapply.io/v1beta1"
	tests := []struct {
		name string
		plan Plan
		mfs  []metav1.ManagedFieldsEntry
		is   error
	}{
		{name: "no managedFields", plan: Plan{Conditions: map[string]string{"A": "a"}}, is: ownership.ErrNoManagedFields},
		{name: "empty plan", plan: Plan{}, mfs: []metav1.ManagedFieldsEntry{other}, is: ErrInvalidPlan},
		{name: "empty manager", plan: Plan{Conditions: map[string]string{"A": ""}}, mfs: []metav1.ManagedFieldsEntry{other}, is: ErrInvalidPlan},
		{
			name: "target is before-first-apply", plan: Plan{Managers: map[string]string{"legacy": ownership.BeforeFirstApplyManager}},
			mfs: []metav1.ManagedFieldsEntry{other}, is: ErrInvalidPlan,
		},
		{
			name: "target entry in another API version", plan: Plan{Conditions: map[string]string{"A": "readiness"}},
			mfs: []metav1.ManagedFieldsEntry{ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), other}, is: ErrAPIVersionMismatch,
		},
		{
			// csaupgrade merges the entry of one API version and drops the
			// manager's others: their fields would be left without an owner.
			name: "a whole-manager move that would orphan fields of another API version",
			plan: Plan{Managers: map[string]string{"legacy": "summary"}},
			mfs:  []metav1.ManagedFieldsEntry{ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB), legacyV1beta1},
			is:   ErrOrphanedFields,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := tt.plan.Rewrite(ownershiptest.Widget(tt.mfs...), time.Now())
			if err == nil {
				t.Fatal("want an error")
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
			var oe *ownership.ObjectError
			if !errors.As(err, &oe) || oe.Object.Name != "w" {
				t.Errorf("err = %v, want an ObjectError naming the object", err)
			}
		})
	}
}
