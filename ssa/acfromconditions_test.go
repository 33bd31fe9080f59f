package ssa

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// converted is content as runtime.DefaultUnstructuredConverter converts it to
// lay's type: what acFromConditions must build, when it builds anything.
func converted(t testing.TB, lay *acLayout, content map[string]any) (any, error) {
	t.Helper()
	ac := reflect.New(lay.typ.Elem()).Interface()
	return ac, runtime.DefaultUnstructuredConverter.FromUnstructured(content, ac)
}

func widgetLayout(t testing.TB) *acLayout {
	t.Helper()
	lay := (&layouts{}).shared(reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]())
	if lay == nil || !lay.identityByName || !lay.statusByName {
		t.Fatalf("the Widget apply configuration's layout: %+v", lay)
	}
	return lay
}

// TestConditionsConversion holds the direct conversion of what a manager of
// conditions owns to the unstructured converter: the same apply
// configuration for every content it converts, and no conversion of
// anything else, which the converter would convert otherwise (dropping a
// field, or failing).
func TestConditionsConversion(t *testing.T) {
	lay := widgetLayout(t)
	identity := func(status any) map[string]any {
		c := map[string]any{"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "w1", "namespace": "ns"}}
		if status != nil {
			c["status"] = status
		}
		return c
	}
	cond := func(extra map[string]any) map[string]any {
		c := map[string]any{"type": "Ready", "status": "True", "reason": "Up", "message": "all good",
			"lastTransitionTime": "2026-11-27T05:00:00Z", "observedGeneration": int64(3)}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	conds := func(items ...any) map[string]any { return map[string]any{"conditions": items} }
	cases := []struct {
		name    string
		content map[string]any
		direct  bool
	}{
		{"identity alone", identity(nil), true},
		{"a cluster-scoped identity", map[string]any{"apiVersion": "v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}}, true},
		{"empty metadata", map[string]any{"kind": "Widget", "metadata": map[string]any{}}, true},
		{"nothing", map[string]any{}, true},
		{"one condition", identity(conds(cond(nil))), true},
		{"conditions with some fields", identity(conds(cond(map[string]any{"message": nil, "observedGeneration": nil}), map[string]any{"type": "Other"})), true},
		{"no conditions", identity(conds([]any{}...)), true},
		{"a nil list of conditions", identity(conds()), true},
		{"a time with an offset", identity(conds(cond(map[string]any{"lastTransitionTime": "2026-11-27T07:00:00+02:00"}))), true},
		{"an empty message", identity(conds(cond(map[string]any{"message": ""}))), true},

		{"a field the conversion does not know", identity(conds(cond(map[string]any{"severity": "High"}))), false},
		{"another status field", identity(map[string]any{"conditions": []any{cond(nil)}, "phase": "On"}), false},
		{"a spec", map[string]any{"kind": "Widget", "spec": map[string]any{"replicas": int64(1)}}, false},
		{"labels", map[string]any{"kind": "Widget", "metadata": map[string]any{"name": "w1", "labels": map[string]any{"a": "b"}}}, false},
		{"a generation as a float", identity(conds(cond(map[string]any{"observedGeneration": 3.0}))), false},
		{"a time that does not parse", identity(conds(cond(map[string]any{"lastTransitionTime": "yesterday"}))), false},
		{"a null message", identity(conds(map[string]any{"type": "Ready", "message": nil})), false},
		{"a condition that is not an object", identity(conds("Ready")), false},
		{"conditions that are not a list", identity(map[string]any{"conditions": "Ready"}), false},
		{"a name that is not a string", map[string]any{"metadata": map[string]any{"name": int64(1)}}, false},
		{"a kind that is not a string", map[string]any{"kind": true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := acFromConditions(lay, c.content)
			if ok != c.direct {
				t.Fatalf("converted directly: %v, want %v", ok, c.direct)
			}
			if !ok {
				return
			}
			want, err := converted(t, lay, c.content)
			if err != nil {
				t.Fatalf("the converter refuses what the direct conversion converted: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("direct conversion\n%#v\nconverter\n%#v", got, want)
			}
		})
	}

	// Controls: what a careless direct conversion would build differs from
	// the converter's, and the comparison above tells them apart. Leaving
	// out a field it does not know (as the converter would not) loses it.
	t.Run("control: a status field left out", func(t *testing.T) {
		whole := identity(map[string]any{"conditions": []any{cond(nil)}, "phase": "On"})
		want, err := converted(t, lay, whole)
		if err != nil {
			t.Fatal(err)
		}
		naive, ok := acFromConditions(lay, identity(conds(cond(nil))))
		if !ok {
			t.Fatal("the content without the phase was not converted")
		}
		if reflect.DeepEqual(naive, want) {
			t.Fatal("the conversion without the phase equals the converter's: the comparison cannot catch it")
		}
	})
	// A time read without moving it to the local zone, as metav1.Time's
	// UnmarshalJSON does, is another value.
	t.Run("control: a time left in its own zone", func(t *testing.T) {
		at, err := time.Parse(time.RFC3339, "2026-11-27T07:00:00+02:00")
		if err != nil {
			t.Fatal(err)
		}
		naive := metav1.NewTime(at)
		var want metav1.Time
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(
			map[string]any{"lastTransitionTime": "2026-11-27T07:00:00+02:00"},
			&struct {
				T *metav1.Time `json:"lastTransitionTime"`
			}{&want}); err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(naive, want) {
			t.Fatal("the naive time equals the converter's: the comparison cannot catch it")
		}
	})
}

// TestConditionsConversionNeedsTheGeneratedLayout: a type whose fields are
// not where their JSON names say is left to the converter.
func TestConditionsConversionNeedsTheGeneratedLayout(t *testing.T) {
	type renamed struct {
		metav1ac.TypeMetaApplyConfiguration    `json:",inline"`
		*metav1ac.ObjectMetaApplyConfiguration `json:"meta,omitempty"`
	}
	lay := (&layouts{}).shared(reflect.TypeFor[*renamed]())
	if lay == nil {
		t.Fatal("no layout")
	}
	if _, ok := acFromConditions(lay, map[string]any{"metadata": map[string]any{"name": "w1"}}); ok {
		t.Fatal("converted metadata into a field that JSON names otherwise")
	}
	pod := (&layouts{}).shared(reflect.TypeFor[*corev1ac.PodApplyConfiguration]())
	if pod == nil || pod.conditions != nil {
		t.Fatalf("a Pod's conditions are not metav1's: %+v", pod)
	}
	if _, ok := acFromConditions(pod, map[string]any{"status": map[string]any{"conditions": []any{}}}); ok {
		t.Fatal("converted a Pod's conditions as metav1 conditions")
	}
}

// FuzzConditionsConversion: whatever JSON object the content is, the direct
// conversion either declines or builds what the unstructured converter
// builds from it, which must not fail.
func FuzzConditionsConversion(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"demo.statusapply.io/v1alpha1","kind":"Widget","metadata":{"name":"w1","namespace":"ns"},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Up","message":"m","lastTransitionTime":"2026-11-27T05:00:00Z","observedGeneration":3}]}}`,
		`{"metadata":{"name":"w1"},"status":{"conditions":[]}}`,
		`{"status":{"conditions":[{"type":"A","lastTransitionTime":"2026-11-27T05:00:00.5+01:00"}]}}`,
		`{"status":{"conditions":[{"type":"A","observedGeneration":1.5}]}}`,
		`{"status":{"conditions":[{"type":"A","observedGeneration":-1}]}}`,
		`{"status":{"conditions":[{"type":"\u00e9\ud800"}]}}`,
		`{"status":{"phase":"On"}}`,
		`{"kind":null}`,
	} {
		f.Add(s)
	}
	lay := widgetLayout(f)
	f.Fuzz(func(t *testing.T, s string) {
		var content map[string]any
		if err := utiljson.Unmarshal([]byte(s), &content); err != nil || content == nil {
			return
		}
		got, ok := acFromConditions(lay, content)
		if !ok {
			return
		}
		want, err := converted(t, lay, content)
		if err != nil {
			t.Fatalf("the converter refuses what the direct conversion converted: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("direct conversion\n%#v\nconverter\n%#v", got, want)
		}
	})
}

// BenchmarkConditionsConversion compares the direct conversion with the
// converter's on what one manager of 1 and 20 conditions owns.
func BenchmarkConditionsConversion(b *testing.B) {
	lay := widgetLayout(b)
	for _, n := range []int{1, 20} {
		items := make([]any, n)
		for i := range items {
			items[i] = map[string]any{"type": "C" + string(rune('A'+i)), "status": "True", "reason": "Up", "message": "all good",
				"lastTransitionTime": "2026-11-27T05:00:00Z", "observedGeneration": int64(3)}
		}
		content := map[string]any{"apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "w1", "namespace": "ns"}, "status": map[string]any{"conditions": items}}
		b.Run(fmt.Sprintf("direct/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := acFromConditions(lay, content); !ok {
					b.Fatal("declined")
				}
			}
		})
		b.Run(fmt.Sprintf("converter/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := converted(b, lay, content); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
