package jsonvalue

import "testing"

func TestEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"numbers of different Go types", int64(3), float64(3), true},
		{"different numbers", int64(3), 3.5, false},
		{"nested maps", map[string]any{"a": []any{"x", int64(1)}}, map[string]any{"a": []any{"x", 1.0}}, true},
		{"a missing key", map[string]any{"a": nil}, map[string]any{}, false},
		{"order matters in a slice", []any{"a", "b"}, []any{"b", "a"}, false},
		{"a string is no number", "1", int64(1), false},
		{"nil", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
