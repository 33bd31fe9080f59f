// Package util changes a Widget's conditions for its callers: the
// ListWrites fact carries that to the packages that call it.
package util

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "example.com/api/v1"
)

func MarkReady(w *v1.Widget) {
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready", Status: "True"})
}

func IsReady(w *v1.Widget) bool {
	return meta.FindStatusCondition(w.Status.Conditions, "Ready") != nil
}
