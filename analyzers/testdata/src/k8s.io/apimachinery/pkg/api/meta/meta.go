// Package meta is a stub of k8s.io/apimachinery/pkg/api/meta.
package meta

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

func SetStatusCondition(conditions *[]metav1.Condition, c metav1.Condition) bool {
	*conditions = append(*conditions, c)
	return true
}

func FindStatusCondition(conditions []metav1.Condition, t string) *metav1.Condition { return nil }
