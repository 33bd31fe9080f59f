// Package jsonvalue compares values held as unstructured content (maps,
// slices, strings, numbers, booleans and nil, as JSON decodes them) the way
// their JSON encodings compare, without encoding them.
package jsonvalue

// Equal reports whether a and b would encode to the same JSON: maps by their
// entries, slices element by element, numbers by value whatever Go type
// holds them.
func Equal(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !Equal(x, y) {
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
			if !Equal(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	if x, ok := Number(a); ok {
		y, ok := Number(b)
		return ok && x == y
	}
	return a == b
}

// Number returns a JSON number's value, whatever Go type holds it.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}
