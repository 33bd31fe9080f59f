package objects

import (
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

func TestEmptyLike(t *testing.T) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Status: v1alpha1.WidgetStatus{Phase: "On"}}
	got, ok := EmptyLike(w).(*v1alpha1.Widget)
	if !ok || got == w || got.Name != "" || got.Status.Phase != "" {
		t.Fatalf("EmptyLike(%T) = %#v, want a new empty *v1alpha1.Widget", w, got)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	u.SetName("w1")
	gotU, ok := EmptyLike(u).(*unstructured.Unstructured)
	if !ok || gotU == u || gotU.GetName() != "" || gotU.GroupVersionKind() != u.GroupVersionKind() {
		t.Fatalf("EmptyLike(unstructured) = %#v, want an empty one of kind %v", gotU, u.GroupVersionKind())
	}
}

type jsonInner struct {
	Inner string `json:"inner"`
}

type jsonMeta struct {
	Meta string `json:"meta"`
}

// jsonNames has a field of every kind JSONName tells apart.
type jsonNames struct {
	Tagged    string `json:"tagged,omitempty"`
	Untagged  string
	NoName    string           `json:",omitempty"`
	Skipped   string           `json:"-"`
	hidden    string           // left out of JSON: what the test checks
	jsonInner                  // embedded without a tag: its fields are written in its place
	jsonMeta  `json:",inline"` // as TypeMeta and ObjectMeta are embedded
	Named     jsonInner        `json:"named"`
}

// JSONName names each field as it is written in JSON, which the test checks
// against what encoding/json writes for a value with every field set.
func TestJSONName(t *testing.T) {
	typ := reflect.TypeFor[jsonNames]()
	want := map[string]struct {
		name       string
		inline, ok bool
	}{
		"Tagged": {"tagged", false, true}, "Untagged": {"Untagged", false, true}, "NoName": {"NoName", false, true},
		"Skipped": {"", false, false}, "hidden": {"", false, false}, "jsonInner": {"", true, true},
		"jsonMeta": {"", true, true}, "Named": {"named", false, true},
	}
	written := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, inline, ok := JSONName(f)
		if w := want[f.Name]; name != w.name || inline != w.inline || ok != w.ok {
			t.Errorf("JSONName(%s) = %q, %v, %v; want %q, %v, %v", f.Name, name, inline, ok, w.name, w.inline, w.ok)
		}
		if ok && !inline {
			written[name] = true
		}
	}
	v := jsonNames{Tagged: "x", Untagged: "x", NoName: "x", Skipped: "x", hidden: "x", jsonInner: jsonInner{"x"}, Named: jsonInner{"x"}}
	v.Meta = "x"
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for k := range got {
		if !written[k] && k != "inner" && k != "meta" { // fields of the inlined structs
			t.Errorf("encoding/json writes %q, which JSONName names no field", k)
		}
	}
	for k := range written {
		if _, has := got[k]; !has {
			t.Errorf("JSONName names %q, which encoding/json does not write", k)
		}
	}
}

func hasManagedFields(u *unstructured.Unstructured) bool {
	_, has, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	return has
}

func TestWithoutManagedFieldsLeavesTheObjectAlone(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "w1", "managedFields": []any{map[string]any{"manager": "m"}}},
		"status":   map[string]any{"phase": "On"},
	}}
	view := WithoutManagedFields(u)
	if hasManagedFields(view) || view.GetName() != "w1" || view.Object["status"] == nil {
		t.Fatalf("view %v: want everything but managedFields", view.Object)
	}
	if !hasManagedFields(u) {
		t.Fatal("the original lost its managedFields")
	}
	bare := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "w1"}}}
	if WithoutManagedFields(bare) != bare {
		t.Fatal("an object without managedFields should be returned as is")
	}
}

func TestWithoutManagedFieldsEdges(t *testing.T) {
	noMeta := &unstructured.Unstructured{Object: map[string]any{"metadata": "odd"}}
	if WithoutManagedFields(noMeta) != noMeta {
		t.Error("an object whose metadata is not a map should be returned as is")
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"kind":     "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "managedFields": []any{}},
	}}
	view := WithoutManagedFields(u)
	md := view.Object["metadata"].(map[string]any)
	if _, has := md["managedFields"]; has || md["name"] != "w" || md["namespace"] != "ns" || view.Object["kind"] != "Widget" {
		t.Errorf("view %v", view.Object)
	}
	if _, has := u.Object["metadata"].(map[string]any)["managedFields"]; !has {
		t.Error("the original lost its managedFields")
	}
}
