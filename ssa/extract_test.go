package ssa

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
)

// contentOf converts only the top-level fields an entry names, and extracting
// from that content gives what extracting from the whole object gives, for
// typed and unstructured observations alike, whichever top-level fields the
// entry holds. The control converts the status only, as a shortcut that
// assumed status entries would: the labels and spec a main-resource entry
// owns go missing, and the extraction is no longer complete.
func TestExtractionReadsOnlyTheEntrysFields(t *testing.T) {
	tc := widgetConverter(t)
	ks := widgetSchema(t, tc)
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	w := &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"team": "a", "tier": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)}}},
		Spec: v1alpha1.WidgetSpec{Replicas: 3, Message: "hi"},
		Status: v1alpha1.WidgetStatus{Phase: "On", Conditions: []metav1.Condition{
			{Type: "A", Status: metav1.ConditionTrue, Reason: "R", Message: "m", LastTransitionTime: metav1.Unix(1e9, 0)},
			{Type: "B", Status: metav1.ConditionFalse, Reason: "R", Message: "m", LastTransitionTime: metav1.Unix(1e9, 0)},
		}},
	}
	whole, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	full := ownership.WithoutManagedFields(&unstructured.Unstructured{Object: whole})
	full.SetGroupVersionKind(gvk)
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(whole)}
	u.SetGroupVersionKind(gvk)
	for _, c := range []struct {
		name, entry string
		top         []string
	}{
		{"one condition", `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{},"f:message":{},"f:lastTransitionTime":{}}}}}`, []string{"status"}},
		{"labels and spec", `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:replicas":{}}}`, []string{"metadata", "spec"}},
		{"labels, spec and status", `{"f:metadata":{"f:labels":{"f:tier":{}}},"f:spec":{"f:message":{}},"f:status":{"f:phase":{}}}`, []string{"metadata", "spec", "status"}},
		{"nothing", `{}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := newEntryFields([]byte(c.entry))
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(f.top)); !slices.Equal(got, c.top) {
				t.Fatalf("top-level fields %v, want %v", got, c.top)
			}
			want, wantComplete, err := f.extract(tc, full)
			if err != nil || !wantComplete {
				t.Fatalf("extracting from the whole object: complete %v, %v", wantComplete, err)
			}
			for _, obs := range []struct {
				kind string
				obj  interface {
					GetManagedFields() []metav1.ManagedFieldsEntry
				}
			}{{"typed", w}, {"unstructured", u}} {
				content, err := contentOf(obs.obj.(clientObject), gvk, f.top, ks, f.leaves)
				if err != nil {
					t.Fatal(err)
				}
				for k := range content.Object {
					if k != "apiVersion" && k != "kind" && !slices.Contains(c.top, k) {
						t.Errorf("%s: converted %q, which the entry does not name", obs.kind, k)
					}
				}
				got, complete, err := f.extract(tc, content)
				if err != nil || !complete || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: extracted %v (complete %v, %v), want %v", obs.kind, got, complete, err, want)
				}
				if len(obs.obj.GetManagedFields()) != 1 {
					t.Fatalf("%s: the observed object lost its managedFields", obs.kind)
				}
			}
			if len(c.top) < 2 || !slices.Contains(c.top, "status") {
				return
			}
			// The control: the status alone.
			content, err := contentOf(w, gvk, []string{"status"}, ks, f.leaves)
			if err != nil {
				t.Fatal(err)
			}
			got, complete, err := f.extract(tc, content)
			if err != nil || complete || reflect.DeepEqual(got, want) {
				t.Fatalf("the control expects converting the status alone to miss what the entry owns elsewhere; got %v, complete %v, %v", got, complete, err)
			}
		})
	}
	if w.Spec.Replicas != 3 || w.Labels["team"] != "a" || len(w.Status.Conditions) != 2 {
		t.Fatalf("contentOf modified the observed object: %+v", w)
	}
}

type clientObject = interface {
	runtime.Object
	metav1.Object
}

// The decoded entries are shared by concurrent extractions (go test -race
// checks that none writes them), an entry that does not decode is refused
// every time and never kept, and the cache holds at most entryCacheSize.
func TestEntryCache(t *testing.T) {
	tc := widgetConverter(t)
	var c entryCache
	raw := []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{}}}}}`)
	first, err := c.fields(raw)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.fields(slices.Clone(raw)); again != first {
		t.Fatal("an equal entry was decoded again")
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, _ := c.fields(raw)
			obj := widgetWithEntry(map[string]any{"status": map[string]any{"conditions": []any{
				map[string]any{"type": "A", "status": fmt.Sprint(i)}}}}, nil, "m")
			content, complete, err := f.extract(tc, ownership.WithoutManagedFields(obj))
			if err != nil || !complete || content["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["status"] != fmt.Sprint(i) {
				t.Errorf("extraction %d: %v, complete %v, %v", i, content, complete, err)
			}
		}()
	}
	wg.Wait()
	for range 2 {
		if _, err := c.fields([]byte(`{"f:status":`)); !errors.Is(err, ownership.ErrBadManagedFields) {
			t.Fatalf("a broken entry: %v, want ErrBadManagedFields", err)
		}
	}
	for i := range 2 * entryCacheSize {
		if _, err := c.fields(fmt.Appendf(nil, `{"f:status":{"f:conditions":{"k:{\"type\":\"C%d\"}":{}}}}`, i)); err != nil {
			t.Fatal(err)
		}
		if len(c.m) > entryCacheSize {
			t.Fatalf("%d entries kept, want at most %d", len(c.m), entryCacheSize)
		}
	}
}

// A typed object's conditions no path of the entry names are left out before
// converting it, and the extraction is what it is from the whole object. A
// list every item of which would go is kept whole; the control empties it,
// as a plain filter would, and the extraction then differs: structured-merge-
// diff gives an empty list back as it is, and nothing from a full one.
func TestNarrowedConditions(t *testing.T) {
	tc := widgetConverter(t)
	ks := widgetSchema(t, tc)
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Unix(1e9, 0)}
	}
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Status: v1alpha1.WidgetStatus{Conditions: []metav1.Condition{cond("A"), cond("B"), cond("C")}}}
	entryFor := func(typ string) *entryFields {
		f, err := newEntryFields(fmt.Appendf(nil, `{"f:status":{"f:conditions":{"k:{\"type\":\"%s\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{}}}}}`, typ))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	types := func(u *unstructured.Unstructured) []string {
		items, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var out []string
		for _, item := range items {
			out = append(out, item.(map[string]any)["type"].(string))
		}
		return out
	}
	for _, c := range []struct {
		owned string
		kept  []string
	}{{"B", []string{"B"}}, {"Z", []string{"A", "B", "C"}}} {
		f := entryFor(c.owned)
		narrow, err := contentOf(w, gvk, f.top, ks, f.leaves)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := contentOf(w, gvk, f.top, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := types(narrow); !slices.Equal(got, c.kept) {
			t.Fatalf("owning %s: converted conditions %v, want %v", c.owned, got, c.kept)
		}
		got, complete, err := f.extract(tc, narrow)
		want, wantComplete, wantErr := f.extract(tc, whole)
		if err != nil || wantErr != nil || complete != wantComplete || !reflect.DeepEqual(got, want) {
			t.Fatalf("owning %s: extracted %v (complete %v, %v), from the whole object %v (%v, %v)", c.owned, got, complete, err, want, wantComplete, wantErr)
		}
	}
	if len(w.Status.Conditions) != 3 {
		t.Fatalf("narrowing modified the observed object: %v", w.Status.Conditions)
	}
	// The control: the list emptied.
	f := entryFor("Z")
	emptied := w.DeepCopy()
	emptied.Status.Conditions = []metav1.Condition{}
	content, err := contentOf(emptied, gvk, f.top, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := contentOf(w, gvk, f.top, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromEmpty, _, err1 := f.extract(tc, content)
	fromWhole, _, err2 := f.extract(tc, whole)
	if err1 != nil || err2 != nil || reflect.DeepEqual(fromEmpty, fromWhole) {
		t.Fatalf("the control expects an emptied list to extract otherwise: %v and %v (%v, %v)", fromEmpty, fromWhole, err1, err2)
	}
}

// FuzzNarrowedExtraction holds the narrowed conversion of a typed object
// (contentOf with the kind's schema and the entry's leaves, which leaves out
// keyed-list items no path of the entry names) to the whole one: on any
// Widget content and any field set, extracting from either gives the same
// owned fields, equally complete.
func FuzzNarrowedExtraction(f *testing.F) {
	for _, seed := range extractionSeeds() {
		f.Add(seed[0], seed[1])
	}
	tc := widgetConverter(f)
	ks := widgetSchema(f, tc)
	f.Fuzz(func(t *testing.T, doc, fields string) {
		var content map[string]any
		if utiljson.Unmarshal([]byte(doc), &content) != nil || content == nil {
			return
		}
		// A typed object: narrowing its lists before converting it changes
		// neither what is extracted nor whether it is complete.
		w := &v1alpha1.Widget{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(content, w) != nil {
			return
		}
		entry, err := newEntryFields([]byte(fields))
		if err != nil {
			return
		}
		gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
		whole, err := contentOf(w, gvk, entry.top, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		narrow, err := contentOf(w, gvk, entry.top, ks, entry.leaves)
		if err != nil {
			t.Fatal(err)
		}
		want, wantComplete, wantErr := entry.extract(tc, whole)
		got, complete, err := entry.extract(tc, narrow)
		if (err != nil) != (wantErr != nil) || complete != wantComplete || !reflect.DeepEqual(got, want) {
			t.Fatalf("from %s narrowed by %s: %v (complete %v, %v), from the whole object %v (complete %v, %v)", doc, fields, got, complete, err, want, wantComplete, wantErr)
		}
	})
}

// FuzzLeavesExtraction holds extractLeaves to the schema's own walks
// (ExtractItems and ToFieldSet, see extractTyped): on any Widget content,
// as a typed object converts it and as it reads from JSON (nulls, missing
// keys, duplicate items and all), and any field set, wherever extractLeaves
// reads the content it gives the same owned fields, equally complete.
func FuzzLeavesExtraction(f *testing.F) {
	for _, seed := range extractionSeeds() {
		f.Add(seed[0], seed[1])
	}
	tc := widgetConverter(f)
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	f.Fuzz(func(t *testing.T, doc, fields string) {
		var content map[string]any
		if utiljson.Unmarshal([]byte(doc), &content) != nil || content == nil {
			return
		}
		entry, err := newEntryFields([]byte(fields))
		if err != nil || entry.leaves.Empty() {
			return
		}
		contents := []map[string]any{content}
		w := &v1alpha1.Widget{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(runtime.DeepCopyJSON(content), w) == nil {
			typedContent, err := contentOf(w, gvk, entry.top, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			contents = append(contents, typedContent.Object)
		}
		for _, c := range contents {
			u := &unstructured.Unstructured{Object: c}
			u.SetGroupVersionKind(gvk)
			tv, err := tc.ObjectToTyped(u, typed.AllowDuplicates)
			if err != nil {
				continue // extract fails before either reads anything
			}
			out, complete, read := extractLeaves(tv.Schema(), tv.TypeRef(), u.Object, entry.leaves)
			if !read {
				continue
			}
			want, wantComplete, wantErr := entry.extractTyped(tv)
			got, isMap := out.(map[string]any)
			if !isMap {
				if wantErr == nil {
					t.Fatalf("from %s by %s: extractLeaves gives %v, the schema's walk %v", doc, fields, out, want)
				}
				continue // extract falls back to the walk, which fails
			}
			if wantErr != nil || complete != wantComplete || !equality.Semantic.DeepEqual(got, want) {
				t.Fatalf("from %s by %s: extractLeaves gives %v (complete %v), the schema's walk %v (complete %v, %v)", doc, fields, got, complete, want, wantComplete, wantErr)
			}
		}
	})
}

// extractionSeeds are Widget contents and managedFields entries for the
// extraction fuzz targets: conditions owned whole and in part, missing,
// null, empty and keyless items, maps and lists owned whole, sets, keyed
// lists of metadata, and fields of several top-level fields.
func extractionSeeds() [][2]string {
	cond := `{"type":"A","status":"True","reason":"R","message":"m","lastTransitionTime":"2026-01-02T03:04:05Z","observedGeneration":3}`
	condEntry := `"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{}}}`
	return [][2]string{
		{`{"status":{"phase":"On","conditions":[` + cond + `,{"type":"B","status":"False"}]}}`, `{"f:status":{` + condEntry + `,"f:phase":{}}}`},
		{`{"status":{"conditions":[{"type":"B","status":"False"}]}}`, `{"f:status":{` + condEntry + `}}`},
		{`{"status":{"conditions":[{"type":"B","status":"False"},` + cond + `,{"type":"C","status":"True"}]}}`, `{"f:status":{` + condEntry + `}}`},
		{`{"status":{"conditions":[{"type":"","status":"False"},{"type":"C","status":"True"}]}}`, `{"f:status":{` + condEntry + `}}`},
		{`{"status":{"conditions":[` + cond + `,{"type":"C","status":"True"}]}}`, `{"f:status":{"f:conditions":{}}}`},
		{`{"status":{"conditions":[]}}`, `{"f:status":{` + condEntry + `}}`},
		{`{"status":{"conditions":null,"phase":null}}`, `{"f:status":{` + condEntry + `,"f:phase":{}}}`},
		{`{"status":{"conditions":[{"status":"False"}]}}`, `{"f:status":{` + condEntry + `}}`},
		{`{"status":{"attributes":{"zone":"a","rack":"1"},"plan":{"id":"p","steps":["a","b"]}}}`, `{"f:status":{"f:attributes":{"f:zone":{}},"f:plan":{"f:steps":{}}}}`},
		{`{"status":{"attributes":{"zone":"a"},"plan":{"id":"p","steps":["a","b"]}}}`, `{"f:status":{"f:attributes":{},"f:plan":{}}}`},
		{`{"status":{"phase":"On","observedGeneration":2}}`, `{"f:status":{}}`},
		{`{"status":{}}`, `{"f:status":{"f:phase":{}}}`},
		{`{"status":{"phase":"On"}}`, `{"f:status":{"f:phase":{},".":{}}}`},
		{`{"metadata":{"labels":{"a":"1","b":"2"},"finalizers":["x","y"],"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u1"},{"apiVersion":"v1","kind":"K","name":"m","uid":"u2"}]}}`,
			`{"f:metadata":{"f:labels":{"f:a":{}},"f:finalizers":{"v:\"x\"":{}},"f:ownerReferences":{"k:{\"uid\":\"u2\"}":{".":{},"f:name":{}}}}}`},
		{`{"metadata":{"finalizers":["x"]}}`, `{"f:metadata":{"f:finalizers":{}}}`},
		{`{"spec":{"replicas":3,"message":"hi"},"status":{"phase":"On"}}`, `{"f:spec":{"f:replicas":{}},"f:status":{"f:phase":{}}}`},
		{`{"status":{"conditions":[` + cond + `,` + cond + `]}}`, `{"f:status":{` + condEntry + `}}`},
		{`{"status":{"conditions":[{"status":"True","reason":"R"}]}}`, `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{"f:status":{}}}}}`},
		{`{"status":{"conditions":[` + cond + `]}}`, `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{"f:status":{}}}}}`},
		{`{"status":{"conditions":[` + cond + `,{"type":"B","status":"False"}]}}`, `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{}}}}`},
		{`{"status":{"conditions":[null,` + cond + `]}}`, `{"f:status":{` + condEntry + `}}`},
	}
}

// extractLeaves keeps only the fields an entry names, reports a missing one
// as incomplete, and leaves to the schema's walk what it does not read. The
// control is the shortcut it must not take: the narrowed content as it is,
// which holds every field of the items the entry names, so a manager that
// applied three fields of a condition would be taken to own all six and
// send them back, taking the message another writer owns.
func TestLeavesExtraction(t *testing.T) {
	tc := widgetConverter(t)
	ks := widgetSchema(t, tc)
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	partial := `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{}}}}}`
	for _, c := range []struct {
		name, doc, entry string
		read, complete   bool
		want             string // JSON of the owned content, when read
		// control: the narrowed content holds more than the owned fields.
		control bool
	}{
		{"three fields of a condition", `{"status":{"conditions":[{"type":"A","status":"True","reason":"R","message":"theirs"},{"type":"B","status":"False"}]}}`, partial,
			true, true, `{"status":{"conditions":[{"type":"A","status":"True","reason":"R"}]}}`, true},
		{"a field missing", `{"status":{"conditions":[{"type":"A","status":"True","message":"theirs"}]}}`, partial,
			true, false, `{"status":{"conditions":[{"type":"A","status":"True"}]}}`, true},
		{"the condition missing", `{"status":{"phase":"On","conditions":[{"type":"B","status":"False"}]}}`, partial,
			true, false, `{"status":{"conditions":null}}`, false},
		{"a set of finalizers", `{"metadata":{"finalizers":["x","y"]}}`, `{"f:metadata":{"f:finalizers":{"v:\"x\"":{}}}}`, false, false, ``, false},
		{"duplicate keys", `{"status":{"conditions":[{"type":"A","status":"True"},{"type":"A","status":"False"}]}}`, partial, false, false, ``, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			entry, err := newEntryFields([]byte(c.entry))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := utiljson.Unmarshal([]byte(c.doc), &u.Object); err != nil {
				t.Fatal(err)
			}
			u.SetGroupVersionKind(gvk)
			tv, err := tc.ObjectToTyped(u, typed.AllowDuplicates)
			if err != nil {
				t.Fatal(err)
			}
			out, complete, read := extractLeaves(ks.schema, ks.typeRef, u.Object, entry.leaves)
			if read != c.read {
				t.Fatalf("read %v, want %v", read, c.read)
			}
			want, wantComplete, err := entry.extractTyped(tv)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := entry.extract(tc, u)
			if err != nil || !equality.Semantic.DeepEqual(got, want) {
				t.Fatalf("extract gives %v (%v), the schema's walk %v", got, err, want)
			}
			if !c.read {
				return
			}
			var stated map[string]any
			if err := utiljson.Unmarshal([]byte(c.want), &stated); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(out, stated) || !equality.Semantic.DeepEqual(stated, want) || complete != c.complete || wantComplete != c.complete {
				t.Fatalf("extractLeaves gives %v (complete %v), the schema's walk %v (complete %v), want %s (complete %v)", out, complete, want, wantComplete, c.want, c.complete)
			}
			if !c.control {
				return
			}
			w := &v1alpha1.Widget{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, w); err != nil {
				t.Fatal(err)
			}
			narrow, err := contentOf(w, gvk, entry.top, ks, entry.leaves)
			if err != nil {
				t.Fatal(err)
			}
			delete(narrow.Object, "apiVersion")
			delete(narrow.Object, "kind")
			if equality.Semantic.DeepEqual(narrow.Object, stated) {
				t.Fatalf("control: the narrowed content %v holds no more than the owned fields", narrow.Object)
			}
		})
	}
}
