package objects

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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

// FindStatusList knows fields by their JSON names, as the API server does:
// a Go field named Status tagged otherwise is not the status.
func TestFindStatusList(t *testing.T) {
	type conds = []metav1.Condition
	type (
		plain struct {
			Conditions conds `json:"conditions"`
		}
		embedding struct {
			plain      `json:",inline"`
			Conditions conds `json:"conditions"`
		}
		byPointer struct {
			Status *plain `json:"status"`
		}
		byValue struct {
			Status plain `json:"status,omitempty"`
		}
		misnamed struct {
			Status *plain `json:"state"`
		}
		untagged struct{ Status *plain }
		inlined  struct {
			Status *embedding `json:"status"`
		}
		noList struct {
			Status *struct {
				Phase string `json:"phase"`
			} `json:"status"`
		}
		otherType struct {
			Status *struct {
				Conditions []string `json:"conditions"`
			} `json:"status"`
		}
	)
	typ := reflect.TypeFor[conds]()
	for _, tc := range []struct {
		name string
		in   reflect.Type
		want StatusList
		ok   bool
	}{
		{"a status by pointer", reflect.TypeFor[*byPointer](), StatusList{Status: 0, StatusPtr: true, List: 0}, true},
		{"a status by value", reflect.TypeFor[*byValue](), StatusList{Status: 0, List: 0}, true},
		{"the Widget", reflect.TypeFor[*v1alpha1.Widget](), StatusList{Status: 3, List: 0}, true},
		{"not a pointer", reflect.TypeFor[byPointer](), StatusList{}, false},
		{"a Status field tagged otherwise", reflect.TypeFor[*misnamed](), StatusList{}, false},
		{"an untagged Status field (encoded as Status)", reflect.TypeFor[*untagged](), StatusList{}, false},
		{"an inlined field in the status", reflect.TypeFor[*inlined](), StatusList{}, false},
		{"no such list", reflect.TypeFor[*noList](), StatusList{}, false},
		{"a list of another type", reflect.TypeFor[*otherType](), StatusList{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FindStatusList(tc.in, "conditions", typ)
			if ok != tc.ok || ok && got != tc.want {
				t.Fatalf("FindStatusList = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// Content gives a typed object and its unstructured form the same content
// (apiVersion and kind aside, which unstructured content keeps), without
// managedFields, and leaves the object as it was.
func TestContent(t *testing.T) {
	w := &v1alpha1.Widget{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Name: "w1", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec:       v1alpha1.WidgetSpec{Replicas: 2},
		Status:     v1alpha1.WidgetStatus{Phase: "On"},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	for name, tc := range map[string]struct {
		top  []string
		want []string // top-level keys of the typed object's content
	}{
		"every field":      {nil, []string{"apiVersion", "kind", "metadata", "spec", "status"}},
		"the status alone": {[]string{"status"}, []string{"status"}},
		"none":             {[]string{}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			typed, err := Content(w, tc.top)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(typed)); !slices.Equal(got, tc.want) {
				t.Fatalf("typed content has %v, want %v", got, tc.want)
			}
			fromU, err := Content(u, tc.top)
			if err != nil {
				t.Fatal(err)
			}
			delete(fromU, "apiVersion")
			delete(fromU, "kind")
			delete(typed, "apiVersion")
			delete(typed, "kind")
			if md, ok := typed["metadata"].(map[string]any); ok {
				delete(md, "creationTimestamp") // null in the typed conversion
			}
			if md, ok := fromU["metadata"].(map[string]any); ok {
				if _, has := md["managedFields"]; has {
					t.Fatal("unstructured content keeps managedFields")
				}
				delete(md, "creationTimestamp")
			}
			if !reflect.DeepEqual(typed, fromU) {
				t.Fatalf("typed %v, unstructured %v", typed, fromU)
			}
		})
	}
	if len(w.ManagedFields) != 1 || len(u.GetManagedFields()) != 1 {
		t.Fatal("Content changed the object's managedFields")
	}
}
