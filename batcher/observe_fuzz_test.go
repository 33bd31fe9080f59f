package batcher

import (
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// FuzzObserve holds the batch's copy of an observed object (observe, which
// shares each managedFields entry's fieldsV1 bytes and time with the object
// given) to the general deep copy: the two are equal, and whatever a caller
// may still do to its object after queueing it (set its status, labels or
// managedFields, or edit an entry in place) leaves the batch's copy as it was.
// Bytes and times are shared because nothing modifies them in place.
func FuzzObserve(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"w","namespace":"ns","labels":{"a":"b"},"managedFields":[{"manager":"m","operation":"Apply","subresource":"status","fieldsType":"FieldsV1","fieldsV1":{"f:status":{}},"time":"2026-01-01T00:00:00Z"}]},"status":{"conditions":[{"type":"A","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"R","message":""}]}}`,
		`{"metadata":{"managedFields":[{"manager":"a"},{"manager":"b","fieldsV1":{}}]}}`,
		`{"metadata":{"name":"w"},"spec":{"size":2}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		obj := &v1alpha1.Widget{}
		if json.Unmarshal([]byte(raw), obj) != nil {
			return
		}
		want := obj.DeepCopy()
		got, err := observe(obj)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("observe(%s) = %+v, the deep copy %+v", raw, got, want)
		}
		// The caller goes on with its object.
		obj.Status.Phase = "changed"
		obj.Status.Conditions = append(obj.Status.Conditions[:0:0], metav1.Condition{Type: "Z"})
		if obj.Labels != nil {
			obj.Labels["added"] = "x"
		}
		for i := range obj.ManagedFields {
			obj.ManagedFields[i].Manager += "-renamed"
			obj.ManagedFields[i].FieldsV1 = metav1.NewFieldsV1(`{"f:spec":{}}`)
		}
		obj.ManagedFields = append(obj.ManagedFields, metav1.ManagedFieldsEntry{Manager: "new"})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the batch's copy of %s changed with the caller's object: %+v", raw, got)
		}
	})
}

// TestObserveControl is FuzzObserve's control: a copy that shares the
// managedFields list itself, not only its entries' bytes, changes when the
// caller edits an entry in place, and the fuzz target's check sees it.
func TestObserveControl(t *testing.T) {
	obj := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	want := obj.DeepCopy()
	naive := obj.DeepCopy()
	naive.ManagedFields = obj.ManagedFields
	obj.ManagedFields[0].Manager = "renamed"
	if reflect.DeepEqual(naive, want) {
		t.Fatal("the naive copy did not change with the caller's object")
	}
	got, err := observe(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}})
	if err != nil || got.GetManagedFields()[0].Manager != "m" {
		t.Fatalf("observe: %v, %v", got, err)
	}
}
