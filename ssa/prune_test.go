package ssa

import (
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// The typed build leaves out what the unstructured build's pruneEmpty leaves
// out: objects that hold nothing. The control encodes the apply configuration
// unpruned, as the typed build did, which claims an empty status.
func TestPruneEmptyStructsAsPruneEmpty(t *testing.T) {
	for name, tc := range map[string]struct {
		ac   *acv1alpha1.WidgetApplyConfiguration
		want string
	}{
		"an empty status": {acv1alpha1.Widget("w", "ns").WithStatus(acv1alpha1.WidgetStatus()),
			`{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w","namespace":"ns"}}`},
		"an empty map in a status": {acv1alpha1.Widget("w", "ns").WithStatus(acv1alpha1.WidgetStatus().WithAttributes(map[string]string{})),
			`{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w","namespace":"ns"}}`},
		"an empty list, which omitempty leaves out": {acv1alpha1.Widget("w", "ns").WithStatus(&acv1alpha1.WidgetStatusApplyConfiguration{Conditions: []metav1ac.ConditionApplyConfiguration{}}),
			`{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w","namespace":"ns"}}`},
		"a zero time is a value": {acv1alpha1.Widget("w", "ns").WithStatus(acv1alpha1.WidgetStatus().WithConditions(
			metav1ac.Condition().WithType("A").WithLastTransitionTime(metav1.Time{}))),
			`{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w","namespace":"ns"},"status":{"conditions":[{"type":"A","lastTransitionTime":null}]}}`},
		"a phase": {acv1alpha1.Widget("w", "ns").WithStatus(acv1alpha1.WidgetStatus().WithPhase("On")),
			`{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w","namespace":"ns"},"status":{"phase":"On"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			unpruned, err := json.Marshal(tc.ac)
			if err != nil {
				t.Fatal(err)
			}
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.ac)
			if err != nil {
				t.Fatal(err)
			}
			pruneEmpty(content)
			general, err := (&unstructured.Unstructured{Object: content}).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if pruneEmptyStructs(reflect.ValueOf(tc.ac)) {
				t.Fatal("the whole apply configuration was found empty")
			}
			got, err := json.Marshal(tc.ac)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || !jsonEqual(t, got, general) {
				t.Fatalf("pruned to %s, want %s; the general build sends %s", got, tc.want, general)
			}
			if string(unpruned) != tc.want && jsonEqual(t, unpruned, general) {
				t.Fatalf("control: the unpruned encoding %s already is the general build's", unpruned)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s, %s", a, b)
	}
	return reflect.DeepEqual(x, y)
}

// A list without omitempty encodes as [] when empty and as null when nil:
// the typed build keeps the first, as pruneEmpty keeps an empty list, and
// leaves out the second, as pruneEmpty leaves out a null.
func TestPruneEmptyStructsKeepsAnEmptyListWithoutOmitempty(t *testing.T) {
	type listStatus struct {
		Items []string `json:"items"`
	}
	type listAC struct {
		Status *listStatus `json:"status,omitempty"`
	}
	for name, tc := range map[string]struct {
		ac   *listAC
		want string
	}{
		"an empty list": {&listAC{Status: &listStatus{Items: []string{}}}, `{"status":{"items":[]}}`},
		"a nil list":    {&listAC{Status: &listStatus{}}, `{}`},
	} {
		t.Run(name, func(t *testing.T) {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.ac)
			if err != nil {
				t.Fatal(err)
			}
			pruneEmpty(content)
			general, err := json.Marshal(content)
			if err != nil {
				t.Fatal(err)
			}
			pruneEmptyStructs(reflect.ValueOf(tc.ac))
			got, err := json.Marshal(tc.ac)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || !jsonEqual(t, got, general) {
				t.Fatalf("pruned to %s, want %s; the general build sends %s", got, tc.want, general)
			}
		})
	}
}
