package batcher

import (
	"reflect"
	"testing"
)

func TestRemoveConditionFromContent(t *testing.T) {
	cond := func(t string) any { return map[string]any{"type": t, "status": "True"} }
	for _, tc := range []struct {
		name    string
		content map[string]any
		want    map[string]any
	}{
		{"one of two", map[string]any{"status": map[string]any{"conditions": []any{cond("A"), cond("B")}}},
			map[string]any{"status": map[string]any{"conditions": []any{cond("B")}}}},
		{"the only one leaves the list out", map[string]any{"status": map[string]any{"phase": "Up", "conditions": []any{cond("A")}}},
			map[string]any{"status": map[string]any{"phase": "Up"}}},
		{"absent", map[string]any{"status": map[string]any{"conditions": []any{cond("B")}}},
			map[string]any{"status": map[string]any{"conditions": []any{cond("B")}}}},
		{"no conditions", map[string]any{"status": map[string]any{"phase": "Up"}}, map[string]any{"status": map[string]any{"phase": "Up"}}},
		{"not a list", map[string]any{"status": map[string]any{"conditions": "x"}}, map[string]any{"status": map[string]any{"conditions": "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			removeCondition(tc.content, "A")
			if !reflect.DeepEqual(tc.content, tc.want) {
				t.Fatalf("got %v, want %v", tc.content, tc.want)
			}
		})
	}
}
