package ssa

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

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

// The identity parts of every typed intent are compared in code, which
// must compare as the compiled comparison does: for each field, two values
// that differ only there, one nil and one set, and equal copies. That the
// client-go types still have the fields the code reads is checked too: if
// one gained a field, its compiled comparison would take over, correct but
// slower, and this test says so.
func TestIdentityComparisonsAgreeWithTheCompiledOnes(t *testing.T) {
	metaType := objectMetaACType.Elem()
	special, ok := (&equalCompiler{done: map[reflect.Type]*equalFunc{}}).objectMeta(metaType)
	if !ok {
		t.Fatalf("ObjectMetaApplyConfiguration no longer has the fields %v", objectMetaFields)
	}
	if _, ok := typeMeta(typeMetaACType); !ok {
		t.Fatal("TypeMetaApplyConfiguration no longer has the fields Kind and APIVersion")
	}
	compiled := (&equalCompiler{done: map[reflect.Type]*equalFunc{}}).structOf(metaType)
	base := func() *metav1ac.ObjectMetaApplyConfiguration {
		return metav1ac.ObjectMeta().WithName("w").WithNamespace("ns").WithUID("u").WithGenerateName("g").
			WithResourceVersion("1").WithGeneration(2).WithCreationTimestamp(metav1.Unix(10, 0)).
			WithDeletionTimestamp(metav1.Unix(20, 0)).WithDeletionGracePeriodSeconds(3).
			WithLabels(map[string]string{"a": "1"}).WithAnnotations(map[string]string{"b": "2"}).
			WithOwnerReferences(metav1ac.OwnerReference().WithName("o").WithUID("ou")).WithFinalizers("f")
	}
	edits := map[string]func(m *metav1ac.ObjectMetaApplyConfiguration){
		"name":       func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithName("x") },
		"no name":    func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Name = nil },
		"namespace":  func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithNamespace("x") },
		"uid":        func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithUID("x") },
		"generate":   func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithGenerateName("x") },
		"version":    func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithResourceVersion("2") },
		"generation": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithGeneration(5) },
		"created":    func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithCreationTimestamp(metav1.Unix(11, 0)) },
		"created, same second": func(m *metav1ac.ObjectMetaApplyConfiguration) {
			m.WithCreationTimestamp(metav1.Unix(10, 5))
		},
		"no creation": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.CreationTimestamp = nil },
		"deleted":     func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithDeletionTimestamp(metav1.Unix(21, 0)) },
		"grace":       func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithDeletionGracePeriodSeconds(4) },
		"label":       func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Labels["a"] = "2" },
		"more labels": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithLabels(map[string]string{"c": "3"}) },
		"no labels":   func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Labels = nil },
		"empty labels": func(m *metav1ac.ObjectMetaApplyConfiguration) {
			m.Labels = map[string]string{}
		},
		"annotation":   func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Annotations["b"] = "3" },
		"owner":        func(m *metav1ac.ObjectMetaApplyConfiguration) { m.OwnerReferences[0].WithName("p") },
		"no owners":    func(m *metav1ac.ObjectMetaApplyConfiguration) { m.OwnerReferences = nil },
		"empty owners": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.OwnerReferences = m.OwnerReferences[:0] },
		"finalizer":    func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Finalizers[0] = "g" },
		"no finalizers": func(m *metav1ac.ObjectMetaApplyConfiguration) {
			m.Finalizers = nil
		},
		"empty finalizers": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Finalizers = []string{} },
		"unchanged":        func(*metav1ac.ObjectMetaApplyConfiguration) {},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			a, b := base(), base()
			edit(b)
			for _, pair := range [][2]*metav1ac.ObjectMetaApplyConfiguration{{a, b}, {b, a}, {b, b}} {
				pa, pb := unsafe.Pointer(pair[0]), unsafe.Pointer(pair[1])
				if got, want := special(pa, pb), compiled(pa, pb); got != want {
					t.Fatalf("in code %v, compiled %v", got, want)
				}
			}
		})
	}
}
