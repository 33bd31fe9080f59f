package batcher

import (
	"reflect"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// shapesSchema has a list keyed by two fields, one keyed by a number, a set
// of scalars and an atomic list.
const shapesSchema = `types:
- name: root
  map:
    fields:
    - name: ports
      type: {list: {elementType: {namedType: port}, elementRelationship: associative, keys: [name, protocol]}}
    - name: slots
      type: {list: {elementType: {namedType: slot}, elementRelationship: associative, keys: [index]}}
    - name: tags
      type: {list: {elementType: {scalar: string}, elementRelationship: associative}}
    - name: steps
      type: {list: {elementType: {scalar: string}, elementRelationship: atomic}}
- name: port
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: protocol
      type: {scalar: string}
    - name: number
      type: {scalar: numeric}
- name: slot
  map:
    fields:
    - name: index
      type: {scalar: numeric}
    - name: value
      type: {scalar: string}
`

func TestDiffContentShapes(t *testing.T) {
	p, err := typed.NewParser(shapesSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := p.Type("root")
	port := func(name, proto string, n int64) map[string]any {
		return map[string]any{"name": name, "protocol": proto, "number": n}
	}
	slot := func(i int64, v string) map[string]any { return map[string]any{"index": i, "value": v} }
	for _, tc := range []struct {
		name              string
		before, after     map[string]any
		changed, removedP []string
	}{
		{"a port's number, keyed by name and protocol",
			map[string]any{"ports": []any{port("http", "TCP", 80), port("http", "UDP", 80)}},
			map[string]any{"ports": []any{port("http", "UDP", 81), port("http", "TCP", 80)}},
			[]string{`.ports[name="http",protocol="UDP"].number`}, nil},
		{"a slot keyed by a number",
			map[string]any{"slots": []any{slot(1, "a"), slot(2, "b")}},
			map[string]any{"slots": []any{slot(2, "c")}},
			[]string{".slots[index=2].value"}, []string{".slots[index=1]"}},
		{"a tag replaced in a set",
			map[string]any{"tags": []any{"a", "b"}},
			map[string]any{"tags": []any{"b", "c"}},
			[]string{`.tags[="c"]`}, []string{`.tags[="a"]`}},
		{"a list that appears",
			map[string]any{},
			map[string]any{"tags": []any{"a"}},
			[]string{".tags"}, nil},
		{"a list that was null",
			map[string]any{"tags": nil},
			map[string]any{"tags": []any{"a"}},
			[]string{`.tags[="a"]`}, nil},
		{"a list that becomes null",
			map[string]any{"tags": []any{"a"}},
			map[string]any{"tags": nil},
			nil, []string{`.tags[="a"]`}},
		{"tags that are not a list any more",
			map[string]any{"tags": []any{"a"}},
			map[string]any{"tags": "a"},
			[]string{".tags"}, nil},
		{"an atomic list changed",
			map[string]any{"steps": []any{"a"}},
			map[string]any{"steps": []any{"a", "b"}},
			[]string{".steps"}, nil},
		{"an item without its key fields is not followed",
			map[string]any{"ports": []any{map[string]any{"name": "x"}}},
			map[string]any{"ports": []any{map[string]any{"name": "x", "number": int64(1)}}},
			nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, removed := fieldpath.NewSet(), fieldpath.NewSet()
			diffContent(root.Schema, root.TypeRef, tc.before, tc.after, nil, changed, removed)
			if got := paths(changed); !reflect.DeepEqual(got, tc.changed) {
				t.Errorf("changed %q, want %q", got, tc.changed)
			}
			if got := paths(removed); !reflect.DeepEqual(got, tc.removedP) {
				t.Errorf("removed %q, want %q", got, tc.removedP)
			}
		})
	}
}

func paths(s *fieldpath.Set) []string {
	var out []string
	s.Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	return out
}

func TestElementKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		item any
		keys []string
		want string
		ok   bool
	}{
		{"one string key", map[string]any{"type": "A"}, []string{"type"}, "A", true},
		{"one number key", map[string]any{"index": int64(2)}, []string{"index"}, "int64:2\x00", true},
		{"two keys", map[string]any{"name": "http", "port": int64(80)}, []string{"name", "port"}, "http\x00int64:80\x00", true},
		{"a missing key", map[string]any{"name": "http"}, []string{"name", "port"}, "", false},
		{"not an object", "x", []string{"name"}, "", false},
		{"a scalar of a set", "x", nil, "string:x", true},
		{"an object in a set", map[string]any{}, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := elementKey(tc.item, tc.keys)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("elementKey = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := elementOf(map[string]any{"name": "x"}, []string{"name", "port"}); ok {
		t.Fatal("elementOf an item without a key field")
	}
	if _, ok := elementOf([]any{}, nil); ok {
		t.Fatal("elementOf a list in a set")
	}
	v := value.NewValueInterface("x")
	if k, ok := keyOfElement(fieldpath.PathElement{Value: &v}, nil); !ok || k != "string:x" {
		t.Fatalf("keyOfElement of a value = %q, %v", k, ok)
	}
}

func TestCopyPathIntoExistingItems(t *testing.T) {
	src := map[string]any{"conditions": []any{
		map[string]any{"type": "A", "status": "True"},
		map[string]any{"type": "B", "status": "False"},
	}}
	a := fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "A"), "status")
	dst := map[string]any{"conditions": []any{map[string]any{"type": "A", "status": "Unknown"}}}
	out, found := copyPath(dst, src, a)
	want := map[string]any{"conditions": []any{map[string]any{"type": "A", "status": "True"}}}
	if !found || !reflect.DeepEqual(out, want) {
		t.Fatalf("copying into the first item: %v, %v; want %v", out, found, want)
	}
	b := fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "B"))
	out, found = copyPath(out, src, b)
	if list := out.(map[string]any)["conditions"].([]any); !found || len(list) != 2 || list[1].(map[string]any)["status"] != "False" {
		t.Fatalf("copying a new item: %v, %v", out, found)
	}
	for name, p := range map[string]fieldpath.Path{
		"a missing item":             fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "C")),
		"a missing field of an item": fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "A"), "reason"),
		"a field of a list":          fieldpath.MakePathOrDie("conditions", "x"),
		"below a scalar":             fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "A"), "status", "x"),
	} {
		before := map[string]any{"conditions": []any{map[string]any{"type": "A"}}}
		if out, found := copyPath(before, src, p); found || !reflect.DeepEqual(out, map[string]any{"conditions": []any{map[string]any{"type": "A"}}}) {
			t.Errorf("%s: copied %v, %v", name, out, found)
		}
	}
}

func TestRemovePath(t *testing.T) {
	content := func() map[string]any {
		return map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B", "status": "False"}},
			"phase":      "On",
		}}
	}
	for _, tc := range []struct {
		name string
		path fieldpath.Path
		want map[string]any
	}{
		{"a field", fieldpath.MakePathOrDie("status", "phase"), map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B", "status": "False"}}}}},
		{"the first item", fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "A")), map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": "B", "status": "False"}}, "phase": "On"}}},
		{"a field of an item", fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "B"), "status"), map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B"}}, "phase": "On"}}},
		{"a missing item", fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "C")), content()},
		{"below a scalar", fieldpath.MakePathOrDie("status", "phase", "x"), content()},
		{"a missing field", fieldpath.MakePathOrDie("spec", "x"), content()},
		{"nothing", nil, content()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := removePath(content(), tc.path); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("removePath = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClaimElementsAndTopmost(t *testing.T) {
	set := fieldpath.NewSet
	condA := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "A"))
	claimed := claimElements(set(
		fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "A"), "status"),
		fieldpath.MakePathOrDie("status", "plan", "id"),
		fieldpath.MakePathOrDie("status", "phase"),
	))
	if got := paths(claimed); !reflect.DeepEqual(got, []string{".status.phase", `.status.conditions[type="A"]`, ".status.plan.id"}) {
		t.Fatalf("claimElements = %q", got)
	}
	top := topmost(set(condA, append(condA.Copy(), fieldpath.PathElement{FieldName: ptr("status")}),
		fieldpath.MakePathOrDie("status", "phase"), fieldpath.MakePathOrDie("status", "plan", "id")))
	if got := paths(top); !reflect.DeepEqual(got, []string{".status.phase", `.status.conditions[type="A"]`, ".status.plan.id"}) {
		t.Fatalf("topmost = %q", got)
	}
}

func ptr(s string) *string { return &s }
