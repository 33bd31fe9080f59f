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
