package ssa

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
)

// managedFieldsCases are the entries appliedEntry chooses among: only m's
// Apply entry of the status subresource is the one.
var managedFieldsCases = []struct {
	name    string
	entries []metav1.ManagedFieldsEntry
	raw     string
	found   bool
}{
	{"no entries", nil, "", false},
	{"another manager", []metav1.ManagedFieldsEntry{entry("other", metav1.ManagedFieldsOperationApply, "status", `{"f:status":{}}`)}, "", false},
	{"an Update entry", []metav1.ManagedFieldsEntry{entry("m", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`)}, "", false},
	{"another subresource", []metav1.ManagedFieldsEntry{entry("m", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{}}`)}, "", false},
	{"the entry among others", []metav1.ManagedFieldsEntry{
		entry("other", metav1.ManagedFieldsOperationApply, "status", `{"f:status":{"f:endpoint":{}}}`),
		entry("m", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:plan":{}}}`),
		entry("m", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{}}`),
		entry("m", metav1.ManagedFieldsOperationApply, "status", `{"f:status":{"f:phase":{}}}`),
	}, `{"f:status":{"f:phase":{}}}`, true},
	{"an entry without fields", []metav1.ManagedFieldsEntry{entry("m", metav1.ManagedFieldsOperationApply, "status", "")}, "", true},
}

func entry(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
	e := metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, FieldsType: "FieldsV1"}
	if fields != "" {
		e.FieldsV1 = metav1.NewFieldsV1(fields)
	}
	return e
}

func TestAppliedEntry(t *testing.T) {
	for _, tc := range managedFieldsCases {
		typedObj := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", ManagedFields: tc.entries}}
		u := &unstructured.Unstructured{}
		u.SetManagedFields(tc.entries)
		for form, obj := range map[string]client.Object{"typed": typedObj, "unstructured": u} {
			t.Run(tc.name+", "+form, func(t *testing.T) {
				raw, found, err := appliedEntry(obj, "m", StatusSubresource)
				if err != nil || found != tc.found || string(raw) != tc.raw || (found && raw == nil) {
					t.Fatalf("appliedEntry = %q, %v, %v; want %q, %v", raw, found, err, tc.raw, tc.found)
				}
			})
		}
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": []any{
		map[string]any{"manager": "m", "operation": "Apply", "subresource": "status", "fieldsV1": map[string]any{"f:x": make(chan int)}},
	}}}}
	if _, found, err := appliedEntry(bad, "m", StatusSubresource); err == nil || found || !strings.Contains(err.Error(), `the managed fields of "m"`) {
		t.Fatalf("an unencodable entry: found %v, error %v", found, err)
	}
}

func TestDecodeFieldSet(t *testing.T) {
	for _, raw := range []string{"", "{}"} {
		set, err := decodeFieldSet([]byte(raw))
		if err != nil || !set.Empty() {
			t.Fatalf("decodeFieldSet(%q) = %v, %v; want an empty set", raw, set, err)
		}
	}
	set, err := decodeFieldSet([]byte(`{"f:status":{"f:phase":{}}}`))
	if err != nil || set.String() != ".status.phase" {
		t.Fatalf("decodeFieldSet = %v, %v", set, err)
	}
	if _, err := decodeFieldSet([]byte(`{"f:status":`)); !errors.Is(err, ErrInvalidInput) || !errors.Is(err, ownership.ErrBadManagedFields) {
		t.Fatalf("a truncated entry: error %v", err)
	}
}

func TestOwnedStateForms(t *testing.T) {
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	target := Target{GVK: gvk, Namespace: "ns", Name: "w1", Subresource: StatusSubresource, Manager: "m"}
	want := map[string]any{"metadata": map[string]any{}, "status": map[string]any{"phase": "On"}}

	// A state made by an apply holds the form that was sent, and nothing
	// else: its content is read from the form's encoding.
	typ := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	sent := acv1alpha1.Widget("w1", "ns").WithUID("u0").WithStatus(acv1alpha1.WidgetStatus().WithPhase("On"))
	applied := &ownedState{rv: "5", last: &acForm{typ: typ, ac: sent}}
	content, err := applied.ownedContent()
	if err != nil || !reflect.DeepEqual(content, want) {
		t.Fatalf("ownedContent of an applied form = %v, %v", content, err)
	}
	var l layouts
	lay, _ := l.of(typ)
	if f, err := applied.form(target, &TypedBuild{Type: typ}, &lay, "u0"); err != nil || f != applied.last {
		t.Fatalf("the applied form was not served as it is: %v", err)
	}

	// A state read from managedFields builds its form from the content.
	st := &ownedState{rv: "5", content: want}
	f, err := st.form(target, &TypedBuild{Type: typ}, &lay, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if body := `{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w1","namespace":"ns","uid":"u1"},"status":{"phase":"On"}}`; !f.encodesAs([]byte(body)) {
		t.Fatalf("the form does not encode as %s", body)
	}
	if f.encodesAs([]byte(`{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w1","namespace":"ns","uid":"u1"},"status":{"phase":"Off"}}`)) {
		t.Fatal("the form encodes as another phase")
	}
	if again, _ := st.form(target, &TypedBuild{Type: typ}, &lay, "u1"); again != f {
		t.Fatal("the form was built again")
	}
	moved := st.at("6", false)
	if moved.rv != "6" || moved.last != f || !reflect.DeepEqual(moved.content, st.content) {
		t.Fatalf("at: %+v", moved)
	}
	moved.last = nil
	if st.last != f {
		t.Fatal("the moved state shares its form slot with the original")
	}

	broken := &ownedState{last: &acForm{typ: typ, ac: make(chan int)}}
	if _, err := broken.ownedContent(); err == nil || !strings.Contains(err.Error(), "converting the applied configuration") {
		t.Fatalf("a form that does not convert: %v", err)
	}
	if _, err := broken.form(target, &TypedBuild{Type: reflect.TypeFor[*acv1alpha1.WidgetStatusApplyConfiguration]()}, &lay, ""); err == nil {
		t.Fatal("a form was built from a form that does not convert")
	}
	wrongShape := &ownedState{content: map[string]any{"status": "not an object"}}
	if _, err := wrongShape.form(target, &TypedBuild{Type: typ}, &lay, ""); err == nil || !strings.Contains(err.Error(), "converting to") {
		t.Fatalf("content that does not fit the type: %v", err)
	}
}

// valuesSchema has every shape valuesMatch walks: a struct, a granular map,
// an atomic map, a map list keyed by name, a set of scalars and an atomic
// list.
const valuesSchema = `types:
- name: root
  map:
    fields:
    - name: labels
      type: {map: {elementType: {scalar: string}}}
    - name: selector
      type: {map: {elementType: {scalar: string}, elementRelationship: atomic}}
    - name: items
      type: {list: {elementType: {namedType: item}, elementRelationship: associative, keys: [name]}}
    - name: tags
      type: {list: {elementType: {scalar: string}, elementRelationship: associative}}
    - name: steps
      type: {list: {elementType: {scalar: string}, elementRelationship: atomic}}
    - name: other
      type: {namedType: missing}
- name: item
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value
      type: {scalar: numeric}
`

func TestValuesMatchByShape(t *testing.T) {
	p, err := typed.NewParser(valuesSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := p.Type("root")
	item := func(name string, v any) map[string]any { return map[string]any{"name": name, "value": v} }
	observed := map[string]any{
		"labels":   map[string]any{"a": "1", "b": "2"},
		"selector": map[string]any{"a": "1", "b": "2"},
		"items":    []any{item("x", int64(1)), item("y", int64(2))},
		"tags":     []any{"p", "q"},
		"steps":    []any{"s1", "s2"},
		"other":    map[string]any{"k": "v"},
	}
	for _, tc := range []struct {
		name  string
		owned map[string]any
		want  bool
	}{
		{"one label of several", map[string]any{"labels": map[string]any{"b": "2"}}, true},
		{"a changed label", map[string]any{"labels": map[string]any{"b": "3"}}, false},
		{"labels that are not a map", map[string]any{"labels": "a=1"}, false},
		{"part of an atomic map", map[string]any{"selector": map[string]any{"a": "1"}}, false},
		{"the whole atomic map", map[string]any{"selector": map[string]any{"a": "1", "b": "2"}}, true},
		{"one keyed item, by its key", map[string]any{"items": []any{item("y", 2.0)}}, true},
		{"a keyed item with another value", map[string]any{"items": []any{item("y", int64(3))}}, false},
		{"a keyed item that is gone", map[string]any{"items": []any{item("z", int64(2))}}, false},
		{"keyed items that are not a list", map[string]any{"items": item("x", int64(1))}, false},
		{"one tag of a set", map[string]any{"tags": []any{"q"}}, true},
		{"a tag not in the set", map[string]any{"tags": []any{"q", "r"}}, false},
		{"tags that are not a list", map[string]any{"tags": "p"}, false},
		{"part of an atomic list", map[string]any{"steps": []any{"s1"}}, false},
		{"the whole atomic list", map[string]any{"steps": []any{"s1", "s2"}}, true},
		{"a field of an unknown type, equal", map[string]any{"other": map[string]any{"k": "v"}}, true},
		{"a field of an unknown type, different", map[string]any{"other": map[string]any{"k": "w"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := valuesMatch(root.Schema, root.TypeRef, tc.owned, observed); got != tc.want {
				t.Fatalf("valuesMatch = %v, want %v", got, tc.want)
			}
		})
	}
	if valuesMatch(root.Schema, root.TypeRef, map[string]any{"items": []any{item("x", int64(1))}}, map[string]any{"items": []any{"x", item("y", int64(1))}}) {
		t.Fatal("an item matched a list holding only other items")
	}
	if got := findByKeys([]any{"x", item("x", int64(1))}, item("x", int64(5)), []string{"name"}); !reflect.DeepEqual(got, item("x", int64(1))) {
		t.Fatalf("findByKeys = %v", got)
	}
}

// TestEncodesAsSum: a form tells an intent's encoding apart by its length
// and checksum once it knows its own, and otherwise encodes itself. A body
// with the form's sum is still compared byte for byte; the control is a
// check that trusts the sum alone, which takes a colliding body for the
// form's own encoding.
func TestEncodesAsSum(t *testing.T) {
	typ := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	ac := acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().WithPhase("On"))
	own, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	other := []byte(strings.Replace(string(own), `"On"`, `"No"`, 1)) // same length
	longer := []byte(strings.Replace(string(own), `"On"`, `"Off"`, 1))

	f := &acForm{typ: typ, ac: ac}
	if !f.encodesAs(own) || f.sum.Load() != jsonSum(own) {
		t.Fatal("the form does not encode as itself, or did not keep its sum")
	}
	if f.encodesAs(other) || f.encodesAs(longer) {
		t.Fatal("the form encodes as another phase")
	}

	// A body whose sum collides with the form's.
	colliding := &acForm{typ: typ, ac: ac}
	colliding.sum.Store(jsonSum(other))
	if trustSum := colliding.sum.Load() == jsonSum(other); !trustSum {
		t.Fatal("the control expects the sum alone to match the colliding body")
	}
	if colliding.encodesAs(other) {
		t.Fatal("a body with the form's sum but other bytes was taken for the form's encoding")
	}
}
