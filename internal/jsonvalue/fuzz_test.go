package jsonvalue

import (
	"encoding/json"
	"math/big"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// FuzzEqual decodes two JSON documents the way apimachinery decodes
// unstructured content (integers as int64, other numbers as float64) and, a
// second time, with every number as float64, as encoding/json decodes them.
// Equal must be reflexive and symmetric, and must agree with sameJSON, which
// compares numbers by their exact value: two values are equal exactly when
// their JSON states the same thing, whichever decoding each came from.
func FuzzEqual(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"a":["x",1]}`, `{"a":["x",1.0]}`},
		{`3`, `3.5`},
		{`{"a":null}`, `{}`},
		{`["a","b"]`, `["b","a"]`},
		{`"1"`, `1`},
		{`null`, `null`},
		{`{"conditions":[{"type":"Ready","status":"True","observedGeneration":3}]}`, `{"conditions":[{"type":"Ready","status":"True","observedGeneration":3.0}]}`},
		{`1e300`, `1e300`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		var forms [][]any // each document as apimachinery and as encoding/json decode it
		for _, doc := range []string{a, b} {
			var unstructured, floats any
			if utiljson.Unmarshal([]byte(doc), &unstructured) != nil || json.Unmarshal([]byte(doc), &floats) != nil {
				return
			}
			forms = append(forms, []any{unstructured, floats})
		}
		var all []any
		for _, f := range forms {
			all = append(all, f...)
		}
		for _, x := range all {
			if !Equal(x, x) {
				t.Fatalf("Equal(%#v, itself) is false", x)
			}
			for _, y := range all {
				got := Equal(x, y)
				if got != Equal(y, x) {
					t.Fatalf("Equal is not symmetric for %#v and %#v", x, y)
				}
				if want := sameJSON(x, y); got != want {
					t.Fatalf("Equal(%#v, %#v) = %v, want %v", x, y, got, want)
				}
			}
		}
	})
}

// sameJSON is the oracle: a plain recursive comparison in which numbers
// compare as exact rationals (a float64 converts exactly; -0 is 0).
func sameJSON(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			if y, ok := bv[k]; !ok || !sameJSON(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !sameJSON(av[i], bv[i]) {
				return false
			}
		}
		return true
	case int64, float64:
		x, y := exact(a), exact(b)
		return y != nil && x.Cmp(y) == 0
	}
	return a == b
}

func exact(v any) *big.Rat {
	switch n := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(n)
	case float64:
		return new(big.Rat).SetFloat64(n)
	}
	return nil
}
