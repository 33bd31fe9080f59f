package batcher

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
)

// diffCases are edits of a Widget's status, each as the object before and
// after.
func diffCases() map[string][2]*v1alpha1.Widget {
	cond := func(t, s string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Reason: "R", Message: "m",
			LastTransitionTime: metav1.Unix(1700000000, 0)}
	}
	base := func() *v1alpha1.Widget {
		return &v1alpha1.Widget{
			ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Labels: map[string]string{"app": "x"}},
			Status: v1alpha1.WidgetStatus{
				Phase:      "Running",
				Conditions: []metav1.Condition{cond("A", "True"), cond("B", "False")},
				Attributes: map[string]string{"zone": "a"},
			},
		}
	}
	edit := func(f func(w *v1alpha1.Widget)) [2]*v1alpha1.Widget {
		after := base()
		f(after)
		return [2]*v1alpha1.Widget{base(), after}
	}
	return map[string][2]*v1alpha1.Widget{
		"nothing":              {base(), base()},
		"a condition's status": edit(func(w *v1alpha1.Widget) { w.Status.Conditions[1].Status = "True" }),
		"a new condition":      edit(func(w *v1alpha1.Widget) { w.Status.Conditions = append(w.Status.Conditions, cond("C", "True")) }),
		"a removed condition":  edit(func(w *v1alpha1.Widget) { w.Status.Conditions = w.Status.Conditions[:1] }),
		"conditions reordered": edit(func(w *v1alpha1.Widget) {
			w.Status.Conditions[0], w.Status.Conditions[1] = w.Status.Conditions[1], w.Status.Conditions[0]
		}),
		"reordered and changed": edit(func(w *v1alpha1.Widget) {
			w.Status.Conditions = []metav1.Condition{cond("B", "True"), cond("A", "True")}
		}),
		"the phase":              edit(func(w *v1alpha1.Widget) { w.Status.Phase = "Done" }),
		"a new struct":           edit(func(w *v1alpha1.Widget) { w.Status.Plan = &v1alpha1.WidgetPlan{ID: "p", Steps: []string{"a", "b"}} }),
		"a map entry":            edit(func(w *v1alpha1.Widget) { w.Status.Attributes["zone"] = "b"; w.Status.Attributes["rack"] = "1" }),
		"a removed map entry":    edit(func(w *v1alpha1.Widget) { delete(w.Status.Attributes, "zone") }),
		"the endpoint and phase": edit(func(w *v1alpha1.Widget) { w.Status.Endpoint = "10.0.0.1"; w.Status.Phase = "" }),
	}
}

// The walk over content finds what structured-merge-diff's comparison of the
// typed objects finds, once the editor's rules (claim keyed elements whole,
// topmost removals) are applied to both.
func TestDiffContentAgreesWithStructuredMergeDiff(t *testing.T) {
	tc, gvk := widgetTypeConverter(t)
	for name, c := range diffCases() {
		t.Run(name, func(t *testing.T) {
			before, after := contentOf(t, c[0], gvk), contentOf(t, c[1], gvk)
			tb, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: before}, typed.AllowDuplicates)
			if err != nil {
				t.Fatal(err)
			}
			ta, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: after}, typed.AllowDuplicates)
			if err != nil {
				t.Fatal(err)
			}
			cmp, err := tb.Compare(ta)
			if err != nil {
				t.Fatal(err)
			}
			wantClaimed := claimElements(cmp.Added.Union(cmp.Modified)).Leaves()
			wantRemoved := topmost(cmp.Removed)

			changed, removed := fieldpath.NewSet(), fieldpath.NewSet()
			diffContent(tb.Schema(), tb.TypeRef(), before, after, nil, changed, removed)
			gotClaimed := claimElements(changed).Leaves()
			// A new struct or map entry is claimed whole here, field by field
			// there: the same fields once copied.
			if !equalJSON(copied(after, gotClaimed), copied(after, wantClaimed)) {
				t.Errorf("claimed\n got %v\nwant %v", gotClaimed, wantClaimed)
			}
			if !topmost(removed).Equals(wantRemoved) {
				t.Errorf("removed\n got %v\nwant %v", topmost(removed), wantRemoved)
			}
		})
	}
}

// The control: comparing list items by position, as a diff that ignores the
// schema's list keys would, claims conditions that did not change when they
// are only reordered, so an Edit that only reorders would take over other
// managers' conditions.
func TestDiffByPositionClaimsReorderedConditions(t *testing.T) {
	tc, gvk := widgetTypeConverter(t)
	c := diffCases()["conditions reordered"]
	before, after := contentOf(t, c[0], gvk), contentOf(t, c[1], gvk)
	tv, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: before}, typed.AllowDuplicates)
	if err != nil {
		t.Fatal(err)
	}
	changed, removed := fieldpath.NewSet(), fieldpath.NewSet()
	diffContent(tv.Schema(), tv.TypeRef(), before, after, nil, changed, removed)
	if !changed.Empty() || !removed.Empty() {
		t.Fatalf("a reorder changed %v and removed %v", changed, removed)
	}
	bl := before["status"].(map[string]any)["conditions"].([]any)
	al := after["status"].(map[string]any)["conditions"].([]any)
	byPosition := 0
	for i := range bl {
		if !equalJSON(bl[i], al[i]) {
			byPosition++
		}
	}
	if byPosition != 2 {
		t.Fatalf("by position, %d conditions differ; want 2 (the control claims both)", byPosition)
	}
}

// Copying the claimed paths of after into an intent, and removing the removed
// ones, gives what the typed merge gave.
func TestCopyAndRemovePaths(t *testing.T) {
	_, gvk := widgetTypeConverter(t)
	c := diffCases()["reordered and changed"]
	after := contentOf(t, c[1], gvk)
	intent := map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "Z", "status": "True"},
	}}}
	var merged any = intent
	pB := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "B"))
	merged, found := copyPath(merged, after, pB)
	if !found {
		t.Fatal("B not found in after")
	}
	merged = removePath(merged, fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Z")))
	list := merged.(map[string]any)["status"].(map[string]any)["conditions"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["type"] != "A" || list[1].(map[string]any)["type"] != "B" ||
		list[1].(map[string]any)["reason"] != "R" {
		t.Fatalf("merged conditions: %v", list)
	}
	if _, found := copyPath(merged, after, fieldpath.MakePathOrDie("status", "plan")); found {
		t.Fatal("copied a path after does not have")
	}
}

func widgetTypeConverter(t *testing.T) (tc interface {
	ObjectToTyped(runtime.Object, ...typed.ValidationOptions) (*typed.TypedValue, error)
}, gvk [2]string) {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return applyconfiguration.NewTypeConverter(s), [2]string{v1alpha1.SchemeGroupVersion.String(), "Widget"}
}

func contentOf(t *testing.T, w *v1alpha1.Widget, gvk [2]string) map[string]any {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	content["apiVersion"], content["kind"] = gvk[0], gvk[1]
	return content
}

// copied is what copying claims out of after into an empty intent gives.
func copied(after map[string]any, claims *fieldpath.Set) any {
	var out any = map[string]any{}
	claims.Iterate(func(p fieldpath.Path) { out, _ = copyPath(out, after, p) })
	return out
}

// diffClaims records a changed condition as the condition's path; what an
// Edit claims and removes is the same as with diffContent's leaves.
func TestDiffClaimsAgreesWithDiffContent(t *testing.T) {
	tc, gvk := widgetTypeConverter(t)
	cases := diffCases()
	// observedGeneration is omitted when zero: setting it to 0 removes it.
	withGeneration := func() *v1alpha1.Widget {
		w := cases["nothing"][0].DeepCopy()
		w.Status.Conditions[0].ObservedGeneration = 3
		return w
	}
	cases["a field removed inside a condition"] = func() [2]*v1alpha1.Widget {
		after := withGeneration()
		after.Status.Conditions[0].ObservedGeneration = 0
		return [2]*v1alpha1.Widget{withGeneration(), after}
	}()
	cases["a field changed and one removed inside a condition"] = func() [2]*v1alpha1.Widget {
		after := withGeneration()
		after.Status.Conditions[0].ObservedGeneration, after.Status.Conditions[0].Reason = 0, "Other"
		return [2]*v1alpha1.Widget{withGeneration(), after}
	}()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			before, after := contentOf(t, c[0], gvk), contentOf(t, c[1], gvk)
			tv, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: before}, typed.AllowDuplicates)
			if err != nil {
				t.Fatal(err)
			}
			leaves, leavesRemoved := fieldpath.NewSet(), fieldpath.NewSet()
			diffContent(tv.Schema(), tv.TypeRef(), before, after, nil, leaves, leavesRemoved)
			items, itemsRemoved := fieldpath.NewSet(), fieldpath.NewSet()
			diffClaims(tv.Schema(), tv.TypeRef(), before, after, items, itemsRemoved)
			if want, got := claimElements(leaves), claimElements(items); !got.Equals(want) {
				t.Errorf("claimed\n got %v\nwant %v", got, want)
			}
			if !itemsRemoved.Equals(leavesRemoved) {
				t.Errorf("removed\n got %v\nwant %v", itemsRemoved, leavesRemoved)
			}
		})
	}
}

// The control for diffClaims's shortcut: claiming a condition whenever it
// differs at all, removals included, would claim a condition whose only
// change is a removed field; the leaf walk claims nothing there.
func TestClaimingAnyDifferenceClaimsRemovals(t *testing.T) {
	tc, gvk := widgetTypeConverter(t)
	observed := diffCases()["nothing"][0]
	observed.Status.Conditions[0].ObservedGeneration = 3
	edited := observed.DeepCopy()
	edited.Status.Conditions[0].ObservedGeneration = 0 // omitted when zero: removed
	before, after := contentOf(t, observed, gvk), contentOf(t, edited, gvk)
	tv, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: before}, typed.AllowDuplicates)
	if err != nil {
		t.Fatal(err)
	}
	items, removed := fieldpath.NewSet(), fieldpath.NewSet()
	diffClaims(tv.Schema(), tv.TypeRef(), before, after, items, removed)
	if !items.Empty() || removed.Empty() {
		t.Fatalf("diffClaims claimed %v and removed %v; want nothing claimed and observedGeneration removed", items, removed)
	}
	// The naive shortcut: claim every condition that is not equal as a whole.
	beforeConds, _, _ := unstructured.NestedSlice(before, "status", "conditions")
	afterConds, _, _ := unstructured.NestedSlice(after, "status", "conditions")
	var naive []string
	for i := range afterConds {
		if !equalJSON(beforeConds[i], afterConds[i]) {
			naive = append(naive, afterConds[i].(map[string]any)["type"].(string))
		}
	}
	if len(naive) != 1 || naive[0] != "A" {
		t.Fatalf("the control should claim condition A, claimed %v", naive)
	}
}
