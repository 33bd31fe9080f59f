package ssa

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// FuzzEqualAC decodes two arbitrary JSON objects as Widget apply
// configurations and holds the comparison to what it stands in for,
// the JSON an apply would send:
//
//   - it is sound: apply configurations it finds equal encode to the same
//     JSON (finding two equal that are not would skip an apply);
//   - it is complete where it matters: a deep copy is equal to the original
//     (a reconcile that changed nothing must send nothing), and so are two
//     decodings of one JSON;
//   - it is symmetric.
func FuzzEqualAC(f *testing.F) {
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
		if got != equalAC(b, a) {
			t.Fatalf("equalAC(%s, %s) = %v: not symmetric", ja, jb, got)
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

// TestObjectMetaFields: equalObjectMeta compares ObjectMetaApplyConfiguration
// field by field in code, and equalAC uses it only while the type has as many
// fields as it compares; this holds their names to it, so that a field
// client-go adds, or renames, is noticed rather than left uncompared.
func TestObjectMetaFields(t *testing.T) {
	typ := objectMetaACType.Elem()
	var names []string
	for i := range typ.NumField() {
		names = append(names, typ.Field(i).Name)
	}
	if !slices.Equal(names, objectMetaFields[:]) {
		t.Fatalf("ObjectMetaApplyConfiguration has the fields %v; equalObjectMeta compares %v", names, objectMetaFields)
	}
	base := func() *metav1ac.ObjectMetaApplyConfiguration {
		return metav1ac.ObjectMeta().WithName("w").WithNamespace("ns").WithUID("u").WithGenerateName("g").
			WithResourceVersion("1").WithGeneration(2).WithCreationTimestamp(metav1.Unix(10, 0)).
			WithDeletionTimestamp(metav1.Unix(20, 0)).WithDeletionGracePeriodSeconds(3).
			WithLabels(map[string]string{"a": "1"}).WithAnnotations(map[string]string{"b": "2"}).
			WithOwnerReferences(metav1ac.OwnerReference().WithName("o")).WithFinalizers("f")
	}
	for name, edit := range map[string]func(m *metav1ac.ObjectMetaApplyConfiguration){
		"name": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithName("x") }, "namespace": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithNamespace("x") },
		"uid": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithUID("x") }, "generateName": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithGenerateName("x") },
		"resourceVersion": func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithResourceVersion("2") },
		"generation":      func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithGeneration(5) },
		"created":         func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithCreationTimestamp(metav1.Unix(11, 0)) },
		"deleted":         func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithDeletionTimestamp(metav1.Unix(21, 0)) },
		"grace":           func(m *metav1ac.ObjectMetaApplyConfiguration) { m.WithDeletionGracePeriodSeconds(4) },
		"label":           func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Labels["a"] = "2" },
		"no labels":       func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Labels = nil },
		"annotation":      func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Annotations["b"] = "3" },
		"owner":           func(m *metav1ac.ObjectMetaApplyConfiguration) { m.OwnerReferences[0].WithName("p") },
		"finalizer":       func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Finalizers[0] = "g" },
		"no finalizers":   func(m *metav1ac.ObjectMetaApplyConfiguration) { m.Finalizers = nil },
	} {
		changed := base()
		edit(changed)
		if equalAC(base(), changed) || equalAC(changed, base()) {
			t.Errorf("%s: a change is not seen", name)
		}
	}
	same := base()
	same.CreationTimestamp = &metav1.Time{Time: base().CreationTimestamp.Add(500 * time.Millisecond)}
	if !equalAC(base(), same) {
		t.Error("two times in the same second differ, though they encode alike")
	}
}
