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

func Set(to Setter, c metav1.Condition) { to.SetConditions(append(to.GetConditions(), c)) }

func MarkTrue(to Setter, t string) { Set(to, metav1.Condition{Type: t, Status: "True"}) }

func IsTrue(from Getter, t string) bool { return false }
