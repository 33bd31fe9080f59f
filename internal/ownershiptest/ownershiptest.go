// Package ownershiptest holds the managedFields fixtures that the tests and
// examples of ownership and fleet share: field sets as the API server writes
// them, entries and Widgets built from them, and a Widget as a legacy writer
// and an apply manager left it.
//
// Only tests import it, so the library links none of it.
package ownershiptest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// Field sets as the API server writes them, for the table tests.
const (
	// LegacyAB is conditions A and B and the phase, merge-patched.
	LegacyAB = `{"f:status":{".":{},"f:conditions":{".":{},` +
		`"k:{\"type\":\"A\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},` +
		`"k:{\"type\":\"B\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},` +
		`"f:phase":{}}}`
	// ApplyB is condition B, applied.
	ApplyB = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"B\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
	// ApplyR is condition R, applied.
	ApplyR = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"R\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`
	// CreateSpec is the label and the replicas a create sets.
	CreateSpec = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:replicas":{}}}`
)

// The operations of an entry, short for the tables.
const (
	Update = metav1.ManagedFieldsOperationUpdate
	Apply  = metav1.ManagedFieldsOperationApply
)

// Entry builds a managedFields entry of the Widget's API version owning
// fields (FieldsV1 JSON).
func Entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	fv := &metav1.FieldsV1{}
	fv.SetRawBytes([]byte(fields))
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, Subresource: subresource, APIVersion: "demo.statusapply.io/v1alpha1",
		Time: &t, FieldsType: "FieldsV1", FieldsV1: fv,
	}
}

// Widget returns the Widget ns/w carrying the given managedFields.
func Widget(mfs ...metav1.ManagedFieldsEntry) *v1alpha1.Widget {
	return &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", ManagedFields: mfs}}
}
