package ssa

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// equalAC reports whether two apply configurations (pointers to structs) of
// one type would encode to the same JSON, compiling the comparison on every
// call: the tests' shorthand for what the Applier compiles once per type.
func equalAC(a, b any) bool {
	t := reflect.TypeOf(a)
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	return equalPointees(compileEqual(t.Elem()), a, b)
}

// FuzzEqualAC decodes two arbitrary JSON objects as Widget apply
// configurations and holds the compiled comparison to what it stands in for,
// the JSON an apply would send:
//
//   - it is sound: apply configurations it finds equal encode to the same
//     JSON (finding two equal that are not would skip an apply);
//   - it is complete where it matters: a deep copy is equal to the original
//     (a reconcile that changed nothing must send nothing), and so are two
//     decodings of one JSON;
//   - it is symmetric, and agrees with the layout's comparison, compiled once.
func FuzzEqualAC(f *testing.F) {
	widgetACType := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	for _, seed := range [][2]string{
		{`{"metadata":{"name":"w1","namespace":"ns","labels":{"a":"b"}}}`, `{"metadata":{"name":"w1","namespace":"ns","labels":{"a":"c"}}}`},
		{`{"status":{"conditions":[{"type":"A","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z"}]}}`,
			`{"status":{"conditions":[{"type":"A","status":"True","lastTransitionTime":"2026-01-02T03:04:06Z"}]}}`},
		{`{"status":{"phase":"On","conditions":[]}}`, `{"status":{"phase":"On"}}`},
		{`{"spec":{"size":3}}`, `{"spec":{"size":4}}`},
		{`{"metadata":{"annotations":{}}}`, `{"metadata":{}}`},
		{`{"status":{"plan":{"id":"p1"}}}`, `{"status":{"plan":{"id":"p2"}}}`},
	} {
		f.Add(seed[0], seed[1])
	}
	lay, ok := (&layouts{}).of(widgetACType)
	if !ok {
		f.Fatal("no layout for the Widget apply configuration")
	}
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := &acv1alpha1.WidgetApplyConfiguration{}, &acv1alpha1.WidgetApplyConfiguration{}
		if json.Unmarshal([]byte(x), a) != nil || json.Unmarshal([]byte(y), b) != nil {
			return
		}
		ja, errA := json.Marshal(a)
		jb, errB := json.Marshal(b)
		if errA != nil || errB != nil {
			return
		}
		got := equalAC(a, b)
		if got != equalAC(b, a) || got != lay.equalAC(a, b) {
			t.Fatalf("equalAC(%s, %s) = %v: not symmetric, or not what the layout's comparison says", ja, jb, got)
		}
		if got && !bytes.Equal(ja, jb) {
			t.Fatalf("equalAC finds %s and %s equal", ja, jb)
		}
		if !equalAC(a, deepCopyAC(a)) {
			t.Fatalf("%s differs from its deep copy", ja)
		}
		// What the API server answers is decoded from JSON: decoding the
		// encoding twice gives two equal values.
		once, twice := &acv1alpha1.WidgetApplyConfiguration{}, &acv1alpha1.WidgetApplyConfiguration{}
		if err := json.Unmarshal(ja, once); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(ja, twice); err != nil {
			t.Fatal(err)
		}
		if !equalAC(once, twice) {
			t.Fatalf("%s decoded twice gives two different values", ja)
		}
	})
}
