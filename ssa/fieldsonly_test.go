package ssa

import (
	"encoding/json"
	"testing"
)

func TestFieldsOnly(t *testing.T) {
	const object = `{"status": {"phase": "Running", "gears": [{"name": "b", "size": 12}],
	  "conditions": [{"type": "A", "status": "True", "reason": "x"}, {"type": "B", "status": "False"}],
	  "tags": ["x", "y"], "plan": {"id": "p", "steps": ["one"]}}}`
	for _, tc := range []struct {
		name, fields, want string
		ok                 bool
	}{{
		name:   "a condition's fields, with its key, and nothing else",
		fields: `{"f:status": {"f:conditions": {"k:{\"type\":\"A\"}": {".": {}, "f:status": {}}}}}`,
		want:   `{"status": {"conditions": [{"type": "A", "status": "True"}]}}`,
		ok:     true,
	}, {
		name:   "a member without members below is kept whole",
		fields: `{"f:status": {"f:plan": {}, "f:conditions": {"k:{\"type\":\"B\"}": {}}}}`,
		want:   `{"status": {"plan": {"id": "p", "steps": ["one"]}, "conditions": [{"type": "B", "status": "False"}]}}`,
		ok:     true,
	}, {
		name:   "items of a set by value; what is gone is left out",
		fields: `{"f:status": {"f:tags": {"v:\"y\"": {}, "v:\"z\"": {}}, "f:missing": {}}}`,
		want:   `{"status": {"tags": ["y"]}}`,
		ok:     true,
	}, {
		name:   "items by index need the schema",
		fields: `{"f:status": {"f:tags": {"i:0": {}}}}`,
		ok:     false,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var content map[string]any
			if err := json.Unmarshal([]byte(object), &content); err != nil {
				t.Fatal(err)
			}
			set, err := decodeFieldSet([]byte(tc.fields))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := fieldsOnly(content, set.Leaves())
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !equalContent(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("got %s\nwant %s", g, tc.want)
			}
		})
	}
}
