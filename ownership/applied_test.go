package ownership

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

func TestAppliedFields(t *testing.T) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "readiness", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:phase":{}}}`)},
		{Manager: "readiness", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{}}}}}`)},
		{Manager: "readiness", Operation: metav1.ManagedFieldsOperationApply,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
	}}}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	for _, tc := range []struct {
		name, manager, subresource string
		found                      bool
		want                       string
	}{
		{"status Apply entry, not the Update one", "readiness", "status", true, `.status.conditions[type="Ready"].status`},
		{"main resource entry", "readiness", "", true, ".spec.replicas"},
		{"another manager", "networking", "status", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, found, err := AppliedFields(u, tc.manager, tc.subresource)
			if err != nil || found != tc.found {
				t.Fatalf("found %v, err %v; want found %v", found, err, tc.found)
			}
			if !found {
				return
			}
			var leaves []string
			set.Leaves().Iterate(func(p fieldpath.Path) { leaves = append(leaves, p.String()) })
			if len(leaves) != 1 || leaves[0] != tc.want {
				t.Fatalf("leaves %v, want [%s]", leaves, tc.want)
			}
		})
	}
	if !HasManagedFields(u) || !HasManagedFields(w) {
		t.Fatal("HasManagedFields is false for an object with managedFields")
	}
	w.ManagedFields = nil
	content, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if HasManagedFields(&unstructured.Unstructured{Object: content}) || HasManagedFields(w) {
		t.Fatal("HasManagedFields is true for an object without managedFields")
	}
}
