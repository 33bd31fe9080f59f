package jsonvalue

import (
	"math"
	"testing"
)

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
		// Found by FuzzEqual (testdata/fuzz/FuzzEqual/ae9476fd2170c599):
		// through float64, 10000000000000001 and 1e16 were one number.
		{"integers a float64 cannot tell apart", int64(10000000000000001), 1e16, false},
		{"two such integers", int64(9007199254740993), int64(9007199254740992), false},
		{"an integral float and its integer", 1e16, int64(10000000000000000), true},
		{"2^63 is beyond int64", float64(1 << 63), int64(math.MaxInt64), false},
		{"-2^63 is the least int64", float64(-(1 << 63)), int64(math.MinInt64), true},
		{"int and int32 are numbers too", 7, int32(7), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
