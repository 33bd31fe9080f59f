package objects

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

func TestEmptyLike(t *testing.T) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Status: v1alpha1.WidgetStatus{Phase: "On"}}
	got, ok := EmptyLike(w).(*v1alpha1.Widget)
	if !ok || got == w || got.Name != "" || got.Status.Phase != "" {
		t.Fatalf("EmptyLike(%T) = %#v, want a new empty *v1alpha1.Widget", w, got)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	u.SetName("w1")
	gotU, ok := EmptyLike(u).(*unstructured.Unstructured)
	if !ok || gotU == u || gotU.GetName() != "" || gotU.GroupVersionKind() != u.GroupVersionKind() {
		t.Fatalf("EmptyLike(unstructured) = %#v, want an empty one of kind %v", gotU, u.GroupVersionKind())
	}
}
