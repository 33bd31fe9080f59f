package conditions_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/statusapply/statusapply/conditions"
)

// machine is a type with conditions accessors, as Cluster API and Flux
// types have.
type machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
	} `json:"status,omitempty"`
}

func (m *machine) GetConditions() []metav1.Condition  { return m.Status.Conditions }
func (m *machine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }
func (m *machine) DeepCopyObject() runtime.Object {
	cp := *m
	cp.ObjectMeta = *m.DeepCopy()
	cp.Status.Conditions = append([]metav1.Condition(nil), m.Status.Conditions...)
	return &cp
}

var _ conditions.Object = (*machine)(nil)
var _ conditions.Object = conditions.Unstructured(&unstructured.Unstructured{})

func ready(status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: "m"}
}

func TestSetGetRemove(t *testing.T) {
	m := &machine{}
	m.Generation = 3
	if !conditions.Set(m, ready(metav1.ConditionTrue, "Up")) {
		t.Fatal("Set of a new condition reported no change")
	}
	c := conditions.Get(m, "Ready")
	if c == nil || c.ObservedGeneration != 3 || c.LastTransitionTime.IsZero() || !conditions.IsTrue(m, "Ready") {
		t.Fatalf("Get = %+v", c)
	}
	since := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	m.Status.Conditions[0].LastTransitionTime = since
	if conditions.Set(m, ready(metav1.ConditionTrue, "Up")) {
		t.Error("Set of the same condition reported a change")
	}
	conditions.Set(m, ready(metav1.ConditionTrue, "StillUp"))
	if got := conditions.Get(m, "Ready"); got.Reason != "StillUp" || !got.LastTransitionTime.Equal(&since) {
		t.Errorf("same status: %+v, want reason StillUp and lastTransitionTime kept", got)
	}
	conditions.Set(m, ready(metav1.ConditionFalse, "Down"))
	if got := conditions.Get(m, "Ready"); got.LastTransitionTime.Equal(&since) {
		t.Errorf("a status change kept lastTransitionTime %v", got.LastTransitionTime)
	}
	if !conditions.Remove(m, "Ready") || conditions.Remove(m, "Ready") || conditions.Get(m, "Ready") != nil {
		t.Error("Remove")
	}
}

func TestEditsWorkOnAnyObjectWithAccessors(t *testing.T) {
	m := &machine{}
	edit := conditions.Edit[*machine](ready(metav1.ConditionTrue, "Up"), metav1.Condition{Type: "Synced", Status: metav1.ConditionUnknown, Reason: "Waiting"})
	if err := edit(m); err != nil {
		t.Fatal(err)
	}
	if len(m.Status.Conditions) != 2 {
		t.Fatalf("conditions %+v", m.Status.Conditions)
	}
	if err := conditions.RemoveEdit[*machine]("Synced")(m); err != nil {
		t.Fatal(err)
	}
	if len(m.Status.Conditions) != 1 || m.Status.Conditions[0].Type != "Ready" {
		t.Fatalf("conditions %+v", m.Status.Conditions)
	}
}

func TestUnstructuredKeepsWhatItDoesNotChange(t *testing.T) {
	other := map[string]any{
		// Written by another writer: no message, a field metav1.Condition lacks.
		"type": "Other", "status": "True", "reason": "R", "lastTransitionTime": "2026-01-02T03:04:05Z", "severity": "Info",
	}
	mine := map[string]any{
		"type": "Ready", "status": "False", "reason": "Down", "message": "", "lastTransitionTime": "2026-01-02T03:04:05Z",
		"observedGeneration": int64(1), "extra": "kept",
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.statusapply.io/v1", "kind": "Sprocket",
		"metadata": map[string]any{"name": "s", "generation": int64(2)},
		"status":   map[string]any{"conditions": []any{runtime.DeepCopyJSONValue(other), runtime.DeepCopyJSONValue(mine)}},
	}}

	if err := conditions.EditUnstructured(metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up"})(u); err != nil {
		t.Fatal(err)
	}
	items, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if len(items) != 2 {
		t.Fatalf("conditions %v", items)
	}
	if !reflect.DeepEqual(items[0], other) {
		t.Errorf("the other writer's condition changed:\n got %v\nwant %v", items[0], other)
	}
	ready := items[1].(map[string]any)
	if ready["status"] != "True" || ready["reason"] != "Up" || ready["observedGeneration"] != int64(2) || ready["extra"] != "kept" {
		t.Errorf("Ready = %v", ready)
	}
	if ready["lastTransitionTime"] == mine["lastTransitionTime"] {
		t.Error("a status change kept lastTransitionTime")
	}

	// Setting what is there already leaves the content as it was.
	before := runtime.DeepCopyJSON(u.Object)
	got := conditions.Get(conditions.Unstructured(u), "Ready")
	if err := conditions.EditUnstructured(*got)(u); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, u.Object) {
		t.Errorf("setting the same condition changed the object:\n got %v\nwant %v", u.Object, before)
	}

	// Removing the last condition removes the list.
	obj := conditions.Unstructured(u)
	conditions.Remove(obj, "Ready")
	conditions.Remove(obj, "Other")
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "conditions"); found {
		t.Error("an empty conditions list was left")
	}
}

func TestUnstructuredReportsWhatItCannotRead(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"conditions": []any{"not an object", map[string]any{"type": "A", "status": "True"}}},
	}}
	obj := conditions.Unstructured(u)
	if got := obj.GetConditions(); len(got) != 1 || got[0].Type != "A" {
		t.Fatalf("GetConditions = %v", got)
	}
	if err := obj.Err(); err == nil || !strings.Contains(err.Error(), "status.conditions[0]") {
		t.Fatalf("Err = %v", err)
	}
	if err := conditions.EditUnstructured(ready(metav1.ConditionTrue, "Up"))(u); err == nil {
		t.Fatal("an Edit on unreadable conditions reported no error")
	}
}
