package ssa

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/objects"
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
	full := objects.WithoutManagedFields(&unstructured.Unstructured{Object: whole})
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
				content, err := contentOf(obs.obj.(clientObject), gvk, f.top)
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
			content, err := contentOf(w, gvk, []string{"status"})
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
			content, complete, err := f.extract(tc, objects.WithoutManagedFields(obj))
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
