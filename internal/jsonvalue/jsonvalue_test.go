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

func TestEqualStated(t *testing.T) {
	empty := map[string]any{"a": map[string]any{}}
	cases := []struct {
		name       string
		a, b       any
		stated, eq bool
	}{
		{"an empty object and nil", map[string]any{}, nil, true, false},
		{"nested empty objects and an absent key", map[string]any{"s": empty}, map[string]any{}, true, false},
		{"an absent key and a value", map[string]any{}, map[string]any{"a": "x"}, false, false},
		{"nil and an empty object", nil, empty, true, false},
		{"an empty list is not absent", map[string]any{"l": []any{}}, map[string]any{}, false, false},
		{"numbers by value", map[string]any{"n": int64(1)}, map[string]any{"n": 1.0}, true, true},
		{"lists element by element", []any{empty}, []any{map[string]any{}}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := EqualStated(tc.a, tc.b); got != tc.stated {
				t.Errorf("EqualStated = %v, want %v", got, tc.stated)
			}
			if got := EqualStated(tc.b, tc.a); got != tc.stated {
				t.Errorf("EqualStated reversed = %v, want %v", got, tc.stated)
			}
			if got := Equal(tc.a, tc.b); got != tc.eq {
				t.Errorf("Equal = %v, want %v", got, tc.eq)
			}
		})
	}
}
