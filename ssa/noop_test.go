package ssa

import "testing"

func TestUnchangedIntent(t *testing.T) {
	identity := map[string]any{
		"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "ns"},
	}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range identity {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		intent, owned map[string]any
		want          bool
	}{
		{"nothing owned, nothing stated", with(nil), map[string]any{}, true},
		{"identity and resourceVersion are not ownership",
			with(map[string]any{"metadata": map[string]any{"name": "w1", "resourceVersion": "7", "uid": "u"}}), map[string]any{}, true},
		{"same status", with(map[string]any{"status": map[string]any{"phase": "On"}}), map[string]any{"status": map[string]any{"phase": "On"}}, true},
		{"int64 and float64 of one number", with(map[string]any{"status": map[string]any{"readyReplicas": int64(3)}}),
			map[string]any{"status": map[string]any{"readyReplicas": float64(3)}}, true},
		{"an empty struct states nothing", with(map[string]any{"status": map[string]any{"plan": map[string]any{}}}), map[string]any{}, true},
		{"changed value", with(map[string]any{"status": map[string]any{"phase": "Off"}}), map[string]any{"status": map[string]any{"phase": "On"}}, false},
		{"field left out is released", with(nil), map[string]any{"status": map[string]any{"phase": "On"}}, false},
		{"new field", with(map[string]any{"status": map[string]any{"phase": "On"}}), map[string]any{}, false},
		{"labels are owned, not identity", with(map[string]any{"metadata": map[string]any{"name": "w1", "labels": map[string]any{"a": "b"}}}),
			map[string]any{}, false},
		{"list order counts", with(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "A"}, map[string]any{"type": "B"}}}}),
			map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "B"}, map[string]any{"type": "A"}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unchangedIntent(tc.intent, tc.owned); got != tc.want {
				t.Fatalf("Unchanged = %v, want %v", got, tc.want)
			}
		})
	}
}
