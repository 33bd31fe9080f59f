package batcher

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// keyedSchema has types that hold a keyed list at some depth and types that
// do not, reached through struct fields, list items and map entries.
const keyedSchema = `types:
- name: item
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: value
      type: {scalar: string}
- name: keyedList
  list: {elementType: {namedType: item}, elementRelationship: associative, keys: [name]}
- name: setOfStrings
  list: {elementType: {scalar: string}, elementRelationship: associative}
- name: atomicOfStrings
  list: {elementType: {scalar: string}, elementRelationship: atomic}
- name: atomicOfHolders
  list: {elementType: {namedType: holder}, elementRelationship: atomic}
- name: atomicOfItems
  list: {elementType: {namedType: item}, elementRelationship: atomic}
- name: holder
  map:
    fields:
    - name: id
      type: {scalar: string}
    - name: items
      type: {namedType: keyedList}
- name: plain
  map:
    fields:
    - name: id
      type: {scalar: string}
    - name: item
      type: {namedType: item}
    - name: tags
      type: {namedType: setOfStrings}
- name: mapOfHolders
  map: {elementType: {namedType: holder}}
- name: mapOfItems
  map: {elementType: {namedType: item}}
- name: mapOfInlinedKeyedLists
  map: {elementType: {list: {elementType: {namedType: item}, elementRelationship: associative, keys: [name]}}}
- name: mapOfStrings
  map: {elementType: {scalar: string}}
- name: fieldOfUnknownType
  map:
    fields:
    - name: x
      type: {namedType: nowhere}
- name: recursive
  map:
    fields:
    - name: id
      type: {scalar: string}
    - name: next
      type: {namedType: recursive}
`

func TestHoldsKeyedList(t *testing.T) {
	p, err := typed.NewParser(keyedSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ  string
		want bool
	}{
		{"item", false},
		{"keyedList", true},
		{"setOfStrings", false},
		{"atomicOfStrings", false},
		{"atomicOfItems", false},
		{"atomicOfHolders", true},
		{"holder", true},
		{"plain", false},
		{"mapOfHolders", true},
		{"mapOfItems", false},
		{"mapOfInlinedKeyedLists", true},
		{"mapOfStrings", false},
		// What the schema does not describe might hold one: the walk leaf by
		// leaf is right for anything.
		{"nowhere", true},
		{"fieldOfUnknownType", true},
		{"recursive", true},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			pt := p.Type(tc.typ)
			if got := holdsKeyedList(pt.Schema, pt.TypeRef, 0); got != tc.want {
				t.Fatalf("holdsKeyedList(%s) = %v, want %v", tc.typ, got, tc.want)
			}
		})
	}
}

// A schema nested deeper than the bound is taken to hold a keyed list, through
// struct fields, list items and map entries alike; one just within the bound
// is walked to its end.
func TestHoldsKeyedListDepthBound(t *testing.T) {
	for _, via := range []string{"field", "list", "map"} {
		for levels, want := range map[int]bool{32: false, 33: true} {
			t.Run(fmt.Sprintf("%d levels of %s", levels, via), func(t *testing.T) {
				p, err := typed.NewParser(typed.YAMLObject(chainSchema(via, levels)))
				if err != nil {
					t.Fatal(err)
				}
				pt := p.Type("c0")
				if got := holdsKeyedList(pt.Schema, pt.TypeRef, 0); got != want {
					t.Fatalf("holdsKeyedList = %v, want %v", got, want)
				}
			})
		}
	}
}

// chainSchema is types c0 to c<levels-1>, each holding the next through via
// (a struct field, an atomic list's items or a map's entries), the last one a
// string: the string is levels deep.
func chainSchema(via string, levels int) string {
	var b strings.Builder
	b.WriteString("types:\n")
	for i := range levels {
		next := fmt.Sprintf("{namedType: c%d}", i+1)
		if i == levels-1 {
			next = "{scalar: string}"
		}
		fmt.Fprintf(&b, "- name: c%d\n", i)
		switch via {
		case "field":
			fmt.Fprintf(&b, "  map:\n    fields:\n    - name: next\n      type: %s\n", next)
		case "list":
			fmt.Fprintf(&b, "  list: {elementType: %s, elementRelationship: atomic}\n", next)
		case "map":
			fmt.Fprintf(&b, "  map: {elementType: %s}\n", next)
		}
	}
	return b.String()
}

// claimsSchema has conditions (a list keyed by type), groups whose items
// hold a keyed list of their own, a set, an atomic struct and a field of a
// type the schema lacks.
const claimsSchema = `types:
- name: root
  map:
    fields:
    - name: phase
      type: {scalar: string}
    - name: conditions
      type: {list: {elementType: {namedType: condition}, elementRelationship: associative, keys: [type]}}
    - name: groups
      type: {list: {elementType: {namedType: group}, elementRelationship: associative, keys: [name]}}
    - name: tags
      type: {list: {elementType: {scalar: string}, elementRelationship: associative}}
    - name: ref
      type: {namedType: ref}
    - name: opaque
      type: {namedType: nowhere}
- name: condition
  map:
    fields:
    - name: type
      type: {scalar: string}
    - name: status
      type: {scalar: string}
    - name: reason
      type: {scalar: string}
- name: group
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: size
      type: {scalar: numeric}
    - name: members
      type: {list: {elementType: {namedType: member}, elementRelationship: associative, keys: [id]}}
- name: member
  map:
    fields:
    - name: id
      type: {scalar: string}
    - name: role
      type: {scalar: string}
- name: ref
  map:
    elementRelationship: atomic
    fields:
    - name: kind
      type: {scalar: string}
    - name: name
      type: {scalar: string}
`

// diffClaims records a changed item of a keyed list as the item, unless the
// item's type holds a keyed list, where it records leaves as diffContent
// does; everything else it records as diffContent does.
func TestDiffClaimsPaths(t *testing.T) {
	p, err := typed.NewParser(claimsSchema)
	if err != nil {
		t.Fatal(err)
	}
	root := p.Type("root")
	cond := func(typ, status, reason string) map[string]any {
		c := map[string]any{"type": typ, "status": status}
		if reason != "" {
			c["reason"] = reason
		}
		return c
	}
	group := func(name string, size int64, roles ...string) map[string]any {
		var members []any
		for i, r := range roles {
			members = append(members, map[string]any{"id": fmt.Sprint(i), "role": r})
		}
		return map[string]any{"name": name, "size": size, "members": members}
	}
	for _, tc := range []struct {
		name                   string
		before, after          map[string]any
		claims, leaves, remove []string
	}{
		{"nothing",
			map[string]any{"phase": "On", "conditions": []any{cond("A", "True", "R")}},
			map[string]any{"phase": "On", "conditions": []any{cond("A", "True", "R")}},
			nil, nil, nil},
		{"a condition's status",
			map[string]any{"conditions": []any{cond("A", "True", "R"), cond("B", "True", "R")}},
			map[string]any{"conditions": []any{cond("A", "False", "R"), cond("B", "True", "R")}},
			[]string{`.conditions[type="A"]`}, []string{`.conditions[type="A"].status`}, nil},
		{"two fields of a condition: the condition once",
			map[string]any{"conditions": []any{cond("A", "True", "R")}},
			map[string]any{"conditions": []any{cond("A", "False", "S")}},
			[]string{`.conditions[type="A"]`}, []string{`.conditions[type="A"].reason`, `.conditions[type="A"].status`}, nil},
		{"a field removed from a condition: removed, not claimed",
			map[string]any{"conditions": []any{cond("A", "True", "R")}},
			map[string]any{"conditions": []any{cond("A", "True", "")}},
			nil, nil, []string{`.conditions[type="A"].reason`}},
		{"a field changed and one removed in a condition",
			map[string]any{"conditions": []any{cond("A", "True", "R")}},
			map[string]any{"conditions": []any{cond("A", "False", "")}},
			[]string{`.conditions[type="A"]`}, []string{`.conditions[type="A"].status`}, []string{`.conditions[type="A"].reason`}},
		{"a new and a removed condition",
			map[string]any{"conditions": []any{cond("A", "True", "R")}},
			map[string]any{"conditions": []any{cond("B", "True", "R")}},
			[]string{`.conditions[type="B"]`}, []string{`.conditions[type="B"]`}, []string{`.conditions[type="A"]`}},
		{"a member's role: the member, not the group, which holds a keyed list",
			map[string]any{"groups": []any{group("g", 2, "lead", "dev")}},
			map[string]any{"groups": []any{group("g", 2, "lead", "ops")}},
			[]string{`.groups[name="g"].members[id="1"]`}, []string{`.groups[name="g"].members[id="1"].role`}, nil},
		{"a group's size: the field, not the group",
			map[string]any{"groups": []any{group("g", 2, "lead")}},
			map[string]any{"groups": []any{group("g", 3, "lead")}},
			[]string{`.groups[name="g"].size`}, []string{`.groups[name="g"].size`}, nil},
		{"a tag replaced in a set",
			map[string]any{"tags": []any{"a", "b"}},
			map[string]any{"tags": []any{"b", "c"}},
			[]string{`.tags[="c"]`}, []string{`.tags[="c"]`}, []string{`.tags[="a"]`}},
		{"an atomic struct: whole",
			map[string]any{"ref": map[string]any{"kind": "K", "name": "a"}},
			map[string]any{"ref": map[string]any{"kind": "K", "name": "b"}},
			[]string{".ref"}, []string{".ref"}, nil},
		{"a field of a type the schema lacks: whole",
			map[string]any{"opaque": map[string]any{"x": "1", "y": "1"}},
			map[string]any{"opaque": map[string]any{"x": "2", "y": "1"}},
			[]string{".opaque"}, []string{".opaque"}, nil},
		{"the phase",
			map[string]any{"phase": "On"},
			map[string]any{"phase": "Off"},
			[]string{".phase"}, []string{".phase"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims, claimsRemoved := fieldpath.NewSet(), fieldpath.NewSet()
			diffClaims(root.Schema, root.TypeRef, tc.before, tc.after, claims, claimsRemoved)
			if got := paths(claims); !reflect.DeepEqual(got, tc.claims) {
				t.Errorf("diffClaims changed %q, want %q", got, tc.claims)
			}
			if got := paths(claimsRemoved); !reflect.DeepEqual(got, tc.remove) {
				t.Errorf("diffClaims removed %q, want %q", got, tc.remove)
			}
			leaves, leavesRemoved := fieldpath.NewSet(), fieldpath.NewSet()
			diffContent(root.Schema, root.TypeRef, tc.before, tc.after, nil, leaves, leavesRemoved)
			if got := paths(leaves); !reflect.DeepEqual(got, tc.leaves) {
				t.Errorf("diffContent changed %q, want %q", got, tc.leaves)
			}
			if got := paths(leavesRemoved); !reflect.DeepEqual(got, tc.remove) {
				t.Errorf("diffContent removed %q, want %q", got, tc.remove)
			}
		})
	}
}

func TestIndexOf(t *testing.T) {
	list := []any{
		map[string]any{"name": "no type"},
		map[string]any{"type": "A", "status": "True"},
		map[string]any{"type": "B", "status": "False"},
		"x",
		map[string]any{"type": "A", "status": "again"},
	}
	str := value.NewValueInterface("x")
	other := value.NewValueInterface("y")
	object := value.NewValueInterface(map[string]any{"type": "A"})
	for _, tc := range []struct {
		name string
		list []any
		pe   fieldpath.PathElement
		want int
	}{
		{"the first item of its key", list, fieldpath.PathElement{Key: keyOf("type", "A")}, 1},
		{"a later item", list, fieldpath.PathElement{Key: keyOf("type", "B")}, 2},
		{"a missing key", list, fieldpath.PathElement{Key: keyOf("type", "C")}, -1},
		{"a value", list, fieldpath.PathElement{Value: &str}, 3},
		{"a missing value", list, fieldpath.PathElement{Value: &other}, -1},
		{"a value that cannot be a set's item", list, fieldpath.PathElement{Value: &object}, -1},
		{"no list", nil, fieldpath.PathElement{Key: keyOf("type", "A")}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := indexOf(tc.list, tc.pe); got != tc.want {
				t.Fatalf("indexOf = %d, want %d", got, tc.want)
			}
		})
	}
}

func keyOf(name, v string) *value.FieldList {
	return &value.FieldList{{Name: name, Value: value.NewValueInterface(v)}}
}

// Paths through keyed items, set values and field names reach what they
// name; a list index, which no path of a map list or set has, reaches
// nothing. copyPath copies what valueAt finds into an empty object, and
// removePath removes it.
func TestPathElementKinds(t *testing.T) {
	content := func() map[string]any {
		return map[string]any{
			"conditions": []any{map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B", "status": "False"}},
			"tags":       []any{"a", "b"},
			"phase":      "On",
		}
	}
	conditions := func(items ...any) []any { return items }
	tag := value.NewValueInterface("b")
	index := 0
	for _, tc := range []struct {
		name    string
		path    fieldpath.Path
		value   any // valueAt's, nil when it finds nothing
		copied  any // copyPath's into an empty object
		removed map[string]any
	}{
		{"nothing: the content", nil, content(), content(), content()},
		{"a field", fieldpath.MakePathOrDie("phase"), "On", map[string]any{"phase": "On"},
			map[string]any{"conditions": content()["conditions"], "tags": []any{"a", "b"}}},
		{"a missing field", fieldpath.MakePathOrDie("spec"), nil, map[string]any{}, content()},
		{"below a scalar", fieldpath.MakePathOrDie("phase", "x"), nil, map[string]any{}, content()},
		{"the first keyed item", fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "A")),
			map[string]any{"type": "A", "status": "True"},
			map[string]any{"conditions": conditions(map[string]any{"type": "A", "status": "True"})},
			map[string]any{"conditions": conditions(map[string]any{"type": "B", "status": "False"}), "tags": []any{"a", "b"}, "phase": "On"}},
		{"a field of a keyed item", fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "B"), "status"),
			"False",
			map[string]any{"conditions": conditions(map[string]any{"status": "False"})},
			map[string]any{"conditions": conditions(map[string]any{"type": "A", "status": "True"}, map[string]any{"type": "B"}),
				"tags": []any{"a", "b"}, "phase": "On"}},
		{"a missing keyed item", fieldpath.MakePathOrDie("conditions", fieldpath.KeyByFields("type", "C")), nil, map[string]any{}, content()},
		{"a set's value", fieldpath.Path{{FieldName: ptr("tags")}, {Value: &tag}}, "b", map[string]any{"tags": []any{"b"}},
			map[string]any{"conditions": content()["conditions"], "tags": []any{"a"}, "phase": "On"}},
		{"a list index", fieldpath.Path{{FieldName: ptr("tags")}, {Index: &index}}, nil, map[string]any{}, content()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, found := valueAt(content(), tc.path)
			if found != (tc.value != nil) || !reflect.DeepEqual(v, tc.value) {
				t.Errorf("valueAt = %v, %v; want %v", v, found, tc.value)
			}
			out, found := copyPath(map[string]any{}, content(), tc.path)
			if found != (tc.value != nil) || !reflect.DeepEqual(out, tc.copied) {
				t.Errorf("copyPath = %v, %v; want %v", out, found, tc.copied)
			}
			if got := removePath(content(), tc.path); !reflect.DeepEqual(got, tc.removed) {
				t.Errorf("removePath = %v, want %v", got, tc.removed)
			}
		})
	}
}
