package batcher

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ssa"
)

func TestStatusContent(t *testing.T) {
	widget := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"a": "b"}}}
	widget.Status.Phase = "Running"
	cases := []struct {
		name string
		obj  client.Object
		want map[string]any
		ok   bool
	}{
		{"a typed status, without the rest of the object", widget, map[string]any{"status": map[string]any{"phase": "Running"}}, true},
		{"an empty typed status", &v1alpha1.Widget{}, map[string]any{}, true},
		{"a built-in kind", &corev1.ConfigMap{}, nil, false},
		{"unstructured", &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "w"}, "status": map[string]any{"phase": "Running"},
		}}, map[string]any{"status": map[string]any{"phase": "Running"}}, true},
		{"unstructured without status", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "w"}}}, map[string]any{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := statusContent(tc.obj)
			if ok != tc.ok || (ok && !reflect.DeepEqual(got, tc.want)) {
				t.Fatalf("statusContent = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	// The content is a copy: an edit after it was taken does not show in it.
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": "Running"}}}
	before, _ := statusContent(u)
	_ = unstructured.SetNestedField(u.Object, "Failed", "status", "phase")
	if before["status"].(map[string]any)["phase"] != "Running" {
		t.Fatal("the content followed a later edit")
	}
}

// An apply to the status subresource writes .status; one to the object
// writes everything else but system metadata.
func TestSubresourcePaths(t *testing.T) {
	all := []fieldpath.Path{
		fieldpath.MakePathOrDie("status", "phase"),
		fieldpath.MakePathOrDie("spec", "replicas"),
		fieldpath.MakePathOrDie("metadata"),
		fieldpath.MakePathOrDie("metadata", "labels", "app"),
		fieldpath.MakePathOrDie("metadata", "finalizers"),
		fieldpath.MakePathOrDie("metadata", "resourceVersion"),
		fieldpath.MakePathOrDie("apiVersion"),
		fieldpath.MakePathOrDie("kind"),
		{},
	}
	for _, tc := range []struct {
		sub  ssa.Subresource
		want []string
	}{
		{ssa.StatusSubresource, []string{".status.phase"}},
		{ssa.MainResource, []string{".metadata.finalizers", ".metadata.labels.app", ".spec.replicas"}},
	} {
		t.Run(string(tc.sub)+" subresource", func(t *testing.T) {
			if got := paths(subresourcePaths(tc.sub, fieldpath.NewSet(all...))); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("subresourcePaths = %q, want %q", got, tc.want)
			}
		})
	}
}
