// Package conditions is a stub of Cluster API's util/conditions.
package conditions

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

type Getter interface {
	GetConditions() []metav1.Condition
}

type Setter interface {
	Getter
	SetConditions([]metav1.Condition)
}

func Set(to Setter, c metav1.Condition) {}

func MarkTrue(to Setter, t string) {}

func IsTrue(from Getter, t string) bool { return false }
