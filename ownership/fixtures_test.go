package ownership

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// Field sets as the API server writes them, for the table tests.
const (
	legacyAB = `{"f:status":{".":{},"f:conditions":{".":{},` +
		`"k:{\"type\":\"A\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},` +
		`"k:{\"type\":\"B\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},` +
		`"f:phase":{}}}`
	applyB = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"B\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
	applyR = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"R\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
	createSpec = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:replicas":{}}}`
)

// entry builds a managedFields entry.
func entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	fv := &metav1.FieldsV1{}
	fv.SetRawBytes([]byte(fields))
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, Subresource: subresource, APIVersion: "demo.statusapply.io/v1alpha1",
		Time: &t, FieldsType: "FieldsV1", FieldsV1: fv,
	}
}

// widget returns a Widget carrying the given managedFields.
func widget(mfs ...metav1.ManagedFieldsEntry) *v1alpha1.Widget {
	return &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ManagedFields: mfs}}
}

const (
	update = metav1.ManagedFieldsOperationUpdate
	apply  = metav1.ManagedFieldsOperationApply
)

// mustInspect inspects or fails the test.
func mustInspect(t *testing.T, obj *v1alpha1.Widget) *Ownership {
	t.Helper()
	o, err := Inspect(obj)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return o
}
