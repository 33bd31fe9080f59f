// Package jsonvalue compares values held as unstructured content (maps,
// slices, strings, numbers, booleans and nil, as JSON decodes them) the way
// their JSON encodings compare, without encoding them.
package jsonvalue

import "math"

// Equal reports whether a and b would encode to the same JSON: maps by their
// entries, slices element by element, numbers by their exact value whatever
// Go type holds them (see SameNumber).
func Equal(a, b any) bool { return equal(a, b, false) }

// EqualStated is Equal for what two values state, as server-side apply sees
// an intent: an object holding nothing (recursively: {}, {"a": {}}, nil) is
// the same as an absent one, so an apply configuration whose mutators
// allocated a struct but set nothing in it states what one without it does.
func EqualStated(a, b any) bool { return equal(a, b, true) }

func equal(a, b any, emptyIsAbsent bool) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return emptyIsAbsent && b == nil && IsEmpty(av)
		}
		if !emptyIsAbsent && len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			switch {
			case ok:
				if !equal(x, y, emptyIsAbsent) {
					return false
				}
			case !emptyIsAbsent || !IsEmpty(x):
				return false
			}
		}
		if emptyIsAbsent {
			for k, y := range bv {
				if _, ok := av[k]; !ok && !IsEmpty(y) {
					return false
				}
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equal(av[i], bv[i], emptyIsAbsent) {
				return false
			}
		}
		return true
	case nil:
		if bm, ok := b.(map[string]any); ok && emptyIsAbsent {
			return IsEmpty(bm)
		}
		return b == nil
	}
	if same, numbers := SameNumber(a, b); numbers {
		return same
	}
	return a == b
}

// IsEmpty reports whether v states nothing: nil, or an object holding
// nothing (recursively).
func IsEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !IsEmpty(e) {
				return false
			}
		}
		return true
	}
	return false
}

// SameNumber reports whether a and b are both numbers (isNumber) and, if so,
// whether they have the same value (same). Values are compared exactly, not
// through float64: integers above 2^53 that a float64 cannot tell apart (an
// observedGeneration, a resourceVersion-like counter) are different numbers,
// and an integer equals a float only when the float holds exactly that
// integer. When a is a number and b is not, isNumber is true and same false.
func SameNumber(a, b any) (same, isNumber bool) {
	ai, af, aok := number(a)
	if !aok {
		return false, false
	}
	bi, bf, bok := number(b)
	switch {
	case !bok:
		return false, true
	case af == nil && bf == nil:
		return ai == bi, true
	case af != nil && bf != nil:
		return *af == *bf, true
	case af != nil:
		return floatIsInt(*af, bi), true
	default:
		return floatIsInt(*bf, ai), true
	}
}

// number returns v as an integer (f nil) or as a float.
func number(v any) (i int64, f *float64, ok bool) {
	switch n := v.(type) {
	case int64:
		return n, nil, true
	case int:
		return int64(n), nil, true
	case int32:
		return int64(n), nil, true
	case float64:
		return 0, &n, true
	case float32:
		x := float64(n)
		return 0, &x, true
	}
	return 0, nil, false
}

// floatIsInt reports whether f holds exactly the integer i.
func floatIsInt(f float64, i int64) bool {
	// -2^63 and 2^63 are exact float64s; int64 holds [-2^63, 2^63).
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return false
	}
	return int64(f) == i
}
