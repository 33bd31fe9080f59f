package batcher

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/conditionac"
	"github.com/statusapply/statusapply/internal/jsonvalue"
	"github.com/statusapply/statusapply/ssa"
)

func typedCond(typ, status string, sec int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: "R", Message: "m " + typ,
		ObservedGeneration: 3, LastTransitionTime: metav1.Unix(sec, 0)}
}

// ownedContent is an intent holding conds (as the API server returns
// them), with the object's identity, as the editor starts from it.
func ownedIntent(t *testing.T, conds ...metav1.Condition) map[string]any {
	t.Helper()
	content := map[string]any{"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"}}
	if conds != nil {
		w := &v1alpha1.Widget{Status: v1alpha1.WidgetStatus{Conditions: conds}}
		c, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
		if err != nil {
			t.Fatal(err)
		}
		content["status"] = c["status"]
	}
	return content
}

// buildBoth runs one edit on observed both ways: the typed build, from a
// conditionsIntent decoded from owned, and the editor, from owned as
// unstructured content. It returns each intent as decoded JSON.
// errDeclined stands for a typed build that declined, beside the builds' errors.
var errDeclined = errors.New("declined")

func buildBoth(t *testing.T, observed *v1alpha1.Widget, owned map[string]any, edit func(*v1alpha1.Widget)) (typedOut, editorOut any, typedErr, editorErr error) {
	t.Helper()
	tc := fuzzTypeConverter(t)
	target := ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w",
		Subresource: ssa.StatusSubresource, Manager: "m"}
	run := editRun([]func(*v1alpha1.Widget){edit})

	tb := editTypedBuild(target, tc, run)
	if tb == nil || tb.Type != conditionsIntentType {
		t.Fatalf("no typed build for status Edits of a Widget")
	}
	in, fits, err := tb.FromContent(runtime.DeepCopyJSON(owned))
	if err != nil {
		t.Fatal(err)
	}
	var built ssa.Built
	if fits {
		built, typedErr = tb.Mutate(in, observed)
	}
	if typedErr == nil && (!fits || built.Declined) {
		typedErr = errDeclined
	}
	if typedErr == nil {
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &typedOut); err != nil {
			t.Fatal(err)
		}
	}

	intent := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(owned)}
	ed := &editor{target: target, tc: tc, observed: observed, working: map[reflect.Type]client.Object{}}
	if _, editorErr = ed.apply(run, 0, len(run), intent); editorErr == nil {
		raw, err := intent.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &editorOut); err != nil {
			t.Fatal(err)
		}
	}
	return typedOut, editorOut, typedErr, editorErr
}

func conditionTypes(out any) []string {
	var types []string
	status, _ := out.(map[string]any)["status"].(map[string]any)
	items, _ := status["conditions"].([]any)
	for _, item := range items {
		types = append(types, item.(map[string]any)["type"].(string))
	}
	return types
}

// The typed build of status Edits writes exactly what the editor writes,
// list order included, wherever it does not decline; where it declines the
// editor builds the intent.
func TestTypedEditsAgreeWithTheEditor(t *testing.T) {
	a, b, c := typedCond("A", "True", 100), typedCond("B", "True", 100), typedCond("C", "False", 100)
	// The observed object carries managedFields (its manager's entry
	// alone), so that removals are checked rather than sent for a read.
	widget := func(conds ...metav1.Condition) *v1alpha1.Widget {
		return &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 3,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply,
				Subresource: "status", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)}}},
			Status: v1alpha1.WidgetStatus{Conditions: conds}}
	}
	set := func(conds ...metav1.Condition) func(*v1alpha1.Widget) {
		return func(w *v1alpha1.Widget) {
			for _, c := range conds {
				if c.LastTransitionTime.IsZero() {
					c.LastTransitionTime = metav1.Unix(200, 0)
				}
				setCondition(w, c)
			}
		}
	}
	flipped := func(c metav1.Condition) metav1.Condition {
		c.Status, c.Reason, c.LastTransitionTime = "Unknown", "Flipped", metav1.Unix(300, 0)
		return c
	}
	for name, tc := range map[string]struct {
		observed  *v1alpha1.Widget
		owned     []metav1.Condition
		edit      func(*v1alpha1.Widget)
		decline   bool
		wantTypes []string // the intent's condition types, in order
	}{
		"every condition changes, replaced in place": {observed: widget(a, b, c), owned: []metav1.Condition{c, a, b},
			edit: set(flipped(a), flipped(b), flipped(c)), wantTypes: []string{"C", "A", "B"}},
		"new conditions are appended in key order, not the edit's": {observed: widget(a), owned: []metav1.Condition{a},
			edit: set(typedCond("Z", "True", 0), typedCond("M", "True", 0)), wantTypes: []string{"A", "M", "Z"}},
		"a changed condition the manager did not own is claimed": {observed: widget(a, b), owned: []metav1.Condition{a},
			edit: set(flipped(b)), wantTypes: []string{"A", "B"}},
		"nothing changed: the owned conditions stay": {observed: widget(a, b), owned: []metav1.Condition{a, b},
			edit: set(a), wantTypes: []string{"A", "B"}},
		"only reordered: nothing claimed": {observed: widget(a, b), owned: []metav1.Condition{b},
			edit: func(w *v1alpha1.Widget) { w.Status.Conditions = []metav1.Condition{b, a} }, wantTypes: []string{"B"}},
		"a time that changes below the second is no change": {observed: widget(a), owned: nil,
			edit: func(w *v1alpha1.Widget) {
				w.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Unix(100, 5e8))
			}},
		"a removed owned condition is released": {observed: widget(a, b, c), owned: []metav1.Condition{a, b},
			edit:      func(w *v1alpha1.Widget) { w.Status.Conditions = []metav1.Condition{a, c} },
			wantTypes: []string{"A"}},
		"removed and added at once": {observed: widget(a, b), owned: []metav1.Condition{a, b},
			edit:      func(w *v1alpha1.Widget) { w.Status.Conditions = []metav1.Condition{a, c} },
			wantTypes: []string{"A", "C"}},
		"declines: another status field changed": {observed: widget(a), owned: []metav1.Condition{a},
			edit: func(w *v1alpha1.Widget) { w.Status.Phase = "On" }, decline: true},
		"declines: a condition lost its observedGeneration": {observed: widget(a), owned: []metav1.Condition{a},
			edit: func(w *v1alpha1.Widget) { w.Status.Conditions[0].ObservedGeneration = 0 }, decline: true},
		"declines: a condition without a time": {observed: widget(a), owned: []metav1.Condition{a},
			edit: func(w *v1alpha1.Widget) { w.Status.Conditions[0].LastTransitionTime = metav1.Time{} }, decline: true},
		"declines: the first conditions": {observed: widget(), owned: nil, edit: set(a), decline: true},
		"declines: every condition removed": {observed: widget(a), owned: []metav1.Condition{a},
			edit: func(w *v1alpha1.Widget) { w.Status.Conditions = nil }, decline: true},
		"declines: a type twice": {observed: widget(a), owned: []metav1.Condition{a},
			edit: func(w *v1alpha1.Widget) { w.Status.Conditions = append(w.Status.Conditions, flipped(a)) }, decline: true},
		"declines: the owned content holds another status field": {observed: widget(a), owned: nil,
			edit: set(flipped(a)), decline: true},
	} {
		t.Run(name, func(t *testing.T) {
			owned := ownedIntent(t, tc.owned...)
			if strings.Contains(name, "another status field") && tc.owned == nil {
				owned["status"] = map[string]any{"phase": "Off"}
			}
			typedOut, editorOut, typedErr, editorErr := buildBoth(t, tc.observed, owned, tc.edit)
			if editorErr != nil {
				t.Fatalf("editor: %v", editorErr)
			}
			if tc.decline {
				if !errors.Is(typedErr, errDeclined) {
					t.Fatalf("typed build: %v, want it to decline", typedErr)
				}
				return
			}
			if typedErr != nil {
				t.Fatalf("typed build: %v", typedErr)
			}
			if !jsonvalue.Equal(typedOut, editorOut) {
				t.Fatalf("typed build wrote\n%v\nthe editor\n%v", typedOut, editorOut)
			}
			if got := conditionTypes(typedOut); !reflect.DeepEqual(got, tc.wantTypes) {
				t.Fatalf("intent conditions %v, want %v", got, tc.wantTypes)
			}
		})
	}
}

func setCondition(w *v1alpha1.Widget, c metav1.Condition) {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == c.Type {
			w.Status.Conditions[i] = c
			return
		}
	}
	w.Status.Conditions = append(w.Status.Conditions, c)
}

// An edit that changes nothing leaves the incremental intent holding what
// the manager owns. The control: an empty intent, what skipping the build
// would send, holds none of it, and applying it would release them all.
func TestTypedEditChangingNothingKeepsOwnedConditions(t *testing.T) {
	a, b := typedCond("A", "True", 100), typedCond("B", "True", 100)
	observed := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"},
		Status: v1alpha1.WidgetStatus{Conditions: []metav1.Condition{a, b}}}
	typedOut, _, err, _ := buildBoth(t, observed, ownedIntent(t, a, b), func(w *v1alpha1.Widget) { setCondition(w, a) })
	if err != nil {
		t.Fatal(err)
	}
	if got := conditionTypes(typedOut); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Fatalf("intent holds %v, want the owned A and B", got)
	}
	var naive any
	raw, _ := json.Marshal(&conditionsIntent{})
	_ = json.Unmarshal(raw, &naive)
	if got := conditionTypes(naive); len(got) != 0 {
		t.Fatalf("control: the empty intent holds %v", got)
	}
}

// Removing a condition another manager owns fails on the typed build too,
// naming the owner, and nothing is built; removing one's own is released.
// The control: merging the same removal without the check would have left
// the foreign condition out of the intent.
func TestTypedEditRemovingAForeignConditionFails(t *testing.T) {
	a, b := typedCond("A", "True", 100), typedCond("B", "True", 100)
	observed := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", ResourceVersion: "1",
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "other", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"B\"}":{".":{},"f:type":{},"f:status":{}}}}}`)},
			{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{}}}}}`)},
		}},
		Status: v1alpha1.WidgetStatus{Conditions: []metav1.Condition{a, b}}}
	dropB := func(w *v1alpha1.Widget) { w.Status.Conditions = w.Status.Conditions[:1] }
	_, _, err, editorErr := buildBoth(t, observed, ownedIntent(t, a, b), dropB)
	if !errors.Is(err, ssa.ErrRemovesForeignField) || !strings.Contains(err.Error(), `.status.conditions[type="B"] is owned by other`) ||
		!strings.Contains(err.Error(), "edits 1 to 1 of 1") {
		t.Fatalf("typed build: %v, want ssa.ErrRemovesForeignField naming B's owner", err)
	}
	if editorErr == nil || editorErr.Error() != err.Error() {
		t.Fatalf("the editor failed with %v, the typed build with %v", editorErr, err)
	}
	d, ok := diffConditions(observed.Status.Conditions, []metav1.Condition{a})
	in := &conditionsIntent{Status: &conditionsStatus{Conditions: []metav1ac.ConditionApplyConfiguration{conditionac.Of(a), conditionac.Of(b)}}}
	d.mergeInto(in)
	if !ok || len(in.Status.Conditions) != 1 {
		t.Fatalf("control: merging without the check kept %d conditions", len(in.Status.Conditions))
	}

	dropA := func(w *v1alpha1.Widget) { w.Status.Conditions = w.Status.Conditions[1:] }
	typedOut, _, err, _ := buildBoth(t, observed, ownedIntent(t, a), dropA)
	if err != nil {
		t.Fatalf("removing its own condition: %v", err)
	}
	if got := conditionTypes(typedOut); len(got) != 0 {
		t.Fatalf("intent holds %v after releasing A", got)
	}
}

// Owned content the typed form would not encode back as it was does not fit
// it, so that the editor builds from it; plain conditions do.
func TestConditionsIntentDecodesOnlyWhatItEncodesBack(t *testing.T) {
	id := `"apiVersion":"demo.statusapply.io/v1alpha1","kind":"Widget","metadata":{"name":"w","namespace":"ns"}`
	cond := `{"type":"A","status":"True","reason":"R","message":"m","lastTransitionTime":"2024-01-01T00:00:00Z"}`
	for name, tc := range map[string]struct {
		content string
		untyped bool
	}{
		"identity only":                 {content: `{` + id + `}`},
		"conditions":                    {content: `{` + id + `,"status":{"conditions":[` + cond + `]}}`},
		"an empty list":                 {content: `{` + id + `,"status":{"conditions":[]}}`},
		"another status field":          {content: `{` + id + `,"status":{"phase":"On","conditions":[` + cond + `]}}`, untyped: true},
		"an unknown condition field":    {content: `{` + id + `,"status":{"conditions":[{"type":"A","severity":"x"}]}}`, untyped: true},
		"a time not in UTC":             {content: `{` + id + `,"status":{"conditions":[{"type":"A","lastTransitionTime":"2024-01-01T02:00:00+02:00"}]}}`, untyped: true},
		"a null":                        {content: `{` + id + `,"status":{"conditions":[{"type":"A","reason":null}]}}`, untyped: true},
		"a spec":                        {content: `{` + id + `,"spec":{"size":1}}`, untyped: true},
		"a condition that is no object": {content: `{` + id + `,"status":{"conditions":["A"]}}`, untyped: true},
	} {
		t.Run(name, func(t *testing.T) {
			var content map[string]any
			if err := json.Unmarshal([]byte(tc.content), &content); err != nil {
				t.Fatal(err)
			}
			in, fits, err := conditionsFromContent(content)
			if err != nil || fits == tc.untyped {
				t.Fatalf("fits = %v (%v), want %v", fits, err, !tc.untyped)
			}
			if tc.untyped {
				return
			}
			raw, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var back any
			if err := json.Unmarshal(raw, &back); err != nil || !jsonvalue.Equal(back, any(content)) {
				t.Fatalf("encoded back as %s", raw)
			}
		})
	}
}

// FuzzTypedEditsAgreeWithTheEditor holds the typed build of status Edits to
// the editor's on random objects, owned conditions and edits: wherever the
// typed build does not decline, both fail or both write the same intent.
func FuzzTypedEditsAgreeWithTheEditor(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{3, 0, 1, 0, 1, 1, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 7, 2, 0, 1, 1, 1, 2, 1, 0},
		{3, 1, 2, 1, 2, 1, 2, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 2, 1, 0, 1, 0, 1, 2},
		{2, 0, 0, 0, 1, 1, 1, 1, 8, 8, 8, 8, 5, 5, 5},
		{255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data: data}
		observed := in.widget()
		observed.Generation = 3
		var owned []metav1.Condition
		mask := in.next()
		for i, c := range observed.Status.Conditions {
			if mask&(1<<i) != 0 {
				owned = append(owned, c)
			}
		}
		content := ownedIntent(t, owned...)
		if in.next()%4 == 0 {
			status, _ := content["status"].(map[string]any)
			if status == nil {
				status = map[string]any{}
				content["status"] = status
			}
			status["phase"] = observed.Status.Phase
		}
		edits := in.edits()
		edit := func(w *v1alpha1.Widget) {
			for _, e := range edits {
				e(w)
			}
		}
		typedOut, editorOut, typedErr, editorErr := buildBoth(t, observed, content, edit)
		if errors.Is(typedErr, errDeclined) {
			return
		}
		if (typedErr == nil) != (editorErr == nil) {
			t.Fatalf("typed build: %v; editor: %v", typedErr, editorErr)
		}
		if typedErr == nil && !jsonvalue.Equal(typedOut, editorOut) {
			t.Fatalf("typed build wrote\n%v\nthe editor\n%v", typedOut, editorOut)
		}
	})
}

// The entry an Edit's apply releases is the manager's Apply entry of the
// subresource: a condition its own Update entry also holds stays on the
// server, so removing it is refused, naming that entry, as a
// batcher.RemoveCondition is. The control: the manager's Apply entry alone
// lets the removal through.
func TestEditRemovingAConditionItsOwnUpdateEntryHoldsFails(t *testing.T) {
	a, b := typedCond("A", "True", 100), typedCond("B", "True", 100)
	fieldsA := metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{}}}}}`)
	applyEntry := metav1.ManagedFieldsEntry{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status",
		FieldsType: "FieldsV1", FieldsV1: fieldsA}
	updateEntry := applyEntry
	updateEntry.Operation = metav1.ManagedFieldsOperationUpdate
	dropA := func(w *v1alpha1.Widget) { w.Status.Conditions = w.Status.Conditions[1:] }
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		refused bool
	}{
		{"its Apply entry alone", []metav1.ManagedFieldsEntry{applyEntry}, false},
		{"its Apply and Update entries", []metav1.ManagedFieldsEntry{applyEntry, updateEntry}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			observed := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", ResourceVersion: "1", ManagedFields: tc.entries},
				Status: v1alpha1.WidgetStatus{Conditions: []metav1.Condition{a, b}}}
			_, _, err, editorErr := buildBoth(t, observed, ownedIntent(t, a), dropA)
			if !tc.refused {
				if err != nil || editorErr != nil {
					t.Fatalf("typed build %v, editor %v, want the removal released", err, editorErr)
				}
				return
			}
			for _, e := range []error{err, editorErr} {
				if !errors.Is(e, ssa.ErrRemovesForeignField) || !strings.Contains(e.Error(), `.status.conditions[type="A"] is owned by m (Update, status)`) {
					t.Fatalf("%v, want ssa.ErrRemovesForeignField naming m's Update entry", e)
				}
			}
		})
	}
}

// An observation read again comes unstructured: the typed build converts it
// to the edits' type, as the editor does, and builds what it builds from the
// typed one instead of declining.
func TestTypedEditsTakeAnUnstructuredObservation(t *testing.T) {
	a := typedCond("A", "True", 100)
	observed := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 3},
		Status: v1alpha1.WidgetStatus{Conditions: []metav1.Condition{a}}}
	flip := func(w *v1alpha1.Widget) {
		w.Status.Conditions[0].Status, w.Status.Conditions[0].LastTransitionTime = "False", metav1.Unix(300, 0)
	}
	target := ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w",
		Subresource: ssa.StatusSubresource, Manager: "m"}
	tb := editTypedBuild(target, fuzzTypeConverter(t), editRun([]func(*v1alpha1.Widget){flip}))
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(observed)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(target.GVK)
	var intents [2]string
	for i, obs := range []client.Object{observed, u} {
		in, fits, err := tb.FromContent(ownedIntent(t, a))
		if err != nil || !fits {
			t.Fatalf("the owned conditions do not fit: %v", err)
		}
		built, err := tb.Mutate(in, obs)
		if err != nil || built.Declined {
			t.Fatalf("%T observation: %+v, %v; want it built", obs, built, err)
		}
		raw, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		intents[i] = string(raw)
	}
	if intents[0] != intents[1] || !strings.Contains(intents[0], `"status":"False"`) {
		t.Fatalf("from a typed observation %s, from an unstructured one %s", intents[0], intents[1])
	}
}
