package ssa

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// conditionsEntry is a status entry of manager owning the conditions of types.
func conditionsEntry(manager string, op metav1.ManagedFieldsOperationType, types ...string) metav1.ManagedFieldsEntry {
	items := make([]string, len(types))
	for i, t := range types {
		items[i] = fmt.Sprintf(`"k:{\"type\":\"%s\"}":{".":{},"f:status":{},"f:type":{}}`, t)
	}
	return entry(manager, op, "status", `{"f:status":{"f:conditions":{`+strings.Join(items, ",")+`}}}`)
}

// removalWidget is a Widget holding conditions of types, with entries as its
// managedFields, typed or unstructured.
func removalWidget(t *testing.T, unstructuredForm bool, entries []metav1.ManagedFieldsEntry, types ...string) client.Object {
	t.Helper()
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", ManagedFields: entries}}
	for _, ct := range types {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: ct, Status: metav1.ConditionTrue, Reason: "R"})
	}
	if !unstructuredForm {
		return w
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: content}
}

var removalTarget = Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w1",
	Subresource: StatusSubresource, Manager: "readiness"}

// Who owns a removed condition, by the managedFields, decides whether the
// removal is refused before any request; the same cases decide it on a
// response that still holds the condition.
func TestRefuseRemovals(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		held    []string // the conditions the object holds
		removes []string
		want    []string // the owners named, in order; nil: not refused
		// wantKept is what a response that still holds the conditions is
		// refused with, when not want.
		wantKept []string
	}{
		{"nothing removed", []metav1.ManagedFieldsEntry{conditionsEntry("networking", apply, "A")}, []string{"A"}, nil, nil, nil},
		{"the manager's own condition", []metav1.ManagedFieldsEntry{conditionsEntry("readiness", apply, "A"), conditionsEntry("networking", apply, "B")},
			[]string{"A", "B"}, []string{"A"}, nil, []string{`.status.conditions[type="A"] is owned by a manager the response does not name`}},
		{"a condition nobody holds", []metav1.ManagedFieldsEntry{conditionsEntry("networking", apply, "B")}, []string{"B"}, []string{"Z"}, nil, nil},
		{"the same manager's Update entry", []metav1.ManagedFieldsEntry{conditionsEntry("readiness", update, "A")}, []string{"A"}, []string{"A"},
			[]string{`.status.conditions[type="A"] is owned by readiness (Update, status)`}, nil},
		{"another manager's condition", []metav1.ManagedFieldsEntry{conditionsEntry("readiness", apply, "A"), conditionsEntry("networking", apply, "B")},
			[]string{"A", "B"}, []string{"B"}, []string{`.status.conditions[type="B"] is owned by networking (Apply, status)`}, nil},
		{"a condition shared with another manager", []metav1.ManagedFieldsEntry{conditionsEntry("readiness", apply, "A"), conditionsEntry("networking", apply, "A")},
			[]string{"A"}, []string{"A"}, []string{`.status.conditions[type="A"] is owned by networking (Apply, status)`}, nil},
		{"a legacy writer's condition", []metav1.ManagedFieldsEntry{conditionsEntry("before-first-apply", update, "A")},
			[]string{"A"}, []string{"A"}, []string{`.status.conditions[type="A"] is owned by before-first-apply (Update, status)`}, nil},
		{"several, each owner named", []metav1.ManagedFieldsEntry{conditionsEntry("z-writer", apply, "B"), conditionsEntry("networking", apply, "A", "B")},
			[]string{"A", "B"}, []string{"B", "A"}, []string{
				`.status.conditions[type="A"] is owned by networking (Apply, status)`,
				`.status.conditions[type="B"] is owned by networking (Apply, status)`,
				`.status.conditions[type="B"] is owned by z-writer (Apply, status)`,
			}, nil},
	} {
		for _, form := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, unstructured %t", tc.name, form), func(t *testing.T) {
				obj := removalWidget(t, form, tc.entries, tc.held...)
				held, err := refuseRemovals(removalTarget, tc.removes, obj)
				assertRefusal(t, "before the request", err, tc.want)
				// Only a refusal naming before-first-apply alone is one the Applier may recover from.
				wantHeld := tc.want != nil
				for _, w := range tc.want {
					wantHeld = wantHeld && strings.HasSuffix(w, "before-first-apply (Update, status)")
				}
				if (held != nil) != wantHeld || held != nil && held.Size() != len(tc.removes) {
					t.Fatalf("held %v, want the removed conditions' paths: %t", held, wantHeld)
				}
				// A response that still holds the condition is refused, naming the same owners.
				want := tc.want
				if tc.wantKept != nil {
					want = tc.wantKept
				}
				assertRefusal(t, "from the response", refuseKept(removalTarget, tc.removes, obj), want)
			})
		}
	}
}

func assertRefusal(t *testing.T, when string, err error, want []string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v, want no refusal", when, err)
		}
		return
	}
	if !errors.Is(err, ErrRemovesForeignField) {
		t.Fatalf("%s: %v, want ErrRemovesForeignField", when, err)
	}
	if got := err.Error(); !strings.HasSuffix(got, strings.Join(want, "; ")) {
		t.Fatalf("%s: %q, want it to end with %q", when, got, strings.Join(want, "; "))
	}
}

// Without managedFields nothing is refused before the request; the response
// decides, naming the owner when it can.
func TestRemovalsWithoutManagedFields(t *testing.T) {
	stripped := removalWidget(t, false, nil, "A", "B")
	if held, err := refuseRemovals(removalTarget, []string{"A"}, stripped); err != nil || held != nil {
		t.Fatalf("refused before the request without managedFields: %v", err)
	}
	for _, tc := range []struct {
		name    string
		removes []string
		confirm bool
	}{
		{"a held condition", []string{"A"}, true},
		{"a condition the object does not hold", []string{"Z"}, false},
		{"nothing", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			confirm, err := confirmsRemovals(tc.removes, stripped)
			if err != nil || confirm != tc.confirm {
				t.Fatalf("confirmsRemovals = %t, %v; want %t", confirm, err, tc.confirm)
			}
		})
	}
	withEntries := removalWidget(t, true, []metav1.ManagedFieldsEntry{conditionsEntry("networking", metav1.ManagedFieldsOperationApply, "A")}, "A")
	if confirm, _ := confirmsRemovals([]string{"A"}, withEntries); confirm {
		t.Fatal("confirmsRemovals with managedFields: the check before the request decides")
	}
	err := refuseKept(removalTarget, []string{"B", "A"}, stripped)
	assertRefusal(t, "a response without managedFields", err, []string{
		`.status.conditions[type="A"] is owned by a manager the response does not name`,
		`.status.conditions[type="B"] is owned by a manager the response does not name`,
	})
	if err := refuseKept(removalTarget, []string{"Z"}, stripped); err != nil {
		t.Fatalf("a response without the removed condition: %v", err)
	}
}

func TestWithoutConditions(t *testing.T) {
	cond := func(t string) any { return map[string]any{"type": t, "status": "True"} }
	for _, tc := range []struct {
		name    string
		content map[string]any
		types   []string
		want    map[string]any
	}{
		{"one of two", map[string]any{"status": map[string]any{"conditions": []any{cond("A"), cond("B")}}}, []string{"A"},
			map[string]any{"status": map[string]any{"conditions": []any{cond("B")}}}},
		{"the last one leaves the list out", map[string]any{"status": map[string]any{"phase": "Up", "conditions": []any{cond("A")}}}, []string{"A"},
			map[string]any{"status": map[string]any{"phase": "Up"}}},
		{"absent", map[string]any{"status": map[string]any{"conditions": []any{cond("B")}}}, []string{"A"},
			map[string]any{"status": map[string]any{"conditions": []any{cond("B")}}}},
		{"no status", map[string]any{}, []string{"A"}, map[string]any{}},
		{"not a list", map[string]any{"status": map[string]any{"conditions": "x"}}, []string{"A"},
			map[string]any{"status": map[string]any{"conditions": "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withoutConditions(tc.content, tc.types)
			if !reflect.DeepEqual(tc.content, tc.want) {
				t.Fatalf("got %v, want %v", tc.content, tc.want)
			}
		})
	}
}

// Removals add up across an entry's contributions, each type once, and an
// empty type is refused.
func TestRemovingConditions(t *testing.T) {
	var entry ApplyOptions
	for _, contribution := range [][]ApplyOption{
		{RemovingConditions("A")},
		{Guarded, RemovingConditions("B", "A")},
		{Declarative},
	} {
		(&ApplyOptions{}).ApplyOptions(contribution).ApplyToApply(&entry)
	}
	if want := []string{"A", "B"}; !reflect.DeepEqual(entry.RemovedConditions, want) || !entry.Guarded || entry.Mode != Declarative {
		t.Fatalf("combined %+v, want removals %v, guarded and declarative", entry, want)
	}
	if err := checkRemovedConditions([]string{"A", ""}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("an empty type: %v, want ErrInvalidInput", err)
	}
	if err := checkRemovedConditions([]string{"A"}); err != nil {
		t.Fatal(err)
	}
}

// A condition the manager owns and the intent leaves out is released, once,
// unless RemovingConditions declares it already.
func TestReleasedTypes(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		owned, kept, declared []string
		want                  []string
	}{
		{"nothing owned", nil, []string{"A"}, nil, nil},
		{"all kept", []string{"A", "B"}, []string{"B", "A"}, nil, nil},
		{"one left out", []string{"A", "B", "C"}, []string{"A", "C", "D"}, nil, []string{"B"}},
		{"all left out, in owned's order", []string{"B", "A"}, nil, nil, []string{"B", "A"}},
		{"declared ones are not repeated", []string{"A", "B"}, nil, []string{"A"}, []string{"B"}},
		{"a type listed twice", []string{"A", "A"}, nil, nil, []string{"A"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := releasedTypes(tc.owned, tc.kept, tc.declared); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("releasedTypes = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConditionTypes(t *testing.T) {
	content := map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "A"}, map[string]any{"status": "True"}, "x", map[string]any{"type": "B"},
	}}}
	if got := contentConditionTypes(content); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Fatalf("contentConditionTypes = %v", got)
	}
	if got := contentConditionTypes(map[string]any{"status": map[string]any{"conditions": "x"}}); len(got) != 0 {
		t.Fatalf("contentConditionTypes of a non-list = %v", got)
	}
	empty := ""
	conds := []metav1ac.ConditionApplyConfiguration{*metav1ac.Condition().WithType("A"), {Type: &empty}, {}, *metav1ac.Condition().WithType("B")}
	if got := acConditionTypes(conds); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Fatalf("acConditionTypes = %v", got)
	}
}
