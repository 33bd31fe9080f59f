package widgets

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// Conditions returns w's conditions as type -> status, the shape specs compare
// whole: a lost or a left-behind condition shows as a difference.
func Conditions(w *v1alpha1.Widget) map[string]metav1.ConditionStatus {
	out := map[string]metav1.ConditionStatus{}
	for _, c := range w.Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}

// CS builds a type -> status map from pairs ("A", "True", "B", "False"), for
// readable specs; a trailing odd element is ignored.
func CS(pairs ...string) map[string]metav1.ConditionStatus {
	out := map[string]metav1.ConditionStatus{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = metav1.ConditionStatus(pairs[i+1])
	}
	return out
}
