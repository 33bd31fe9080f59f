// Package v1 is a stub of k8s.io/api/batch/v1.
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

type Job struct {
	metav1.ObjectMeta
	Status JobStatus
}

type JobStatus struct {
	// +listType=atomic
	Conditions []JobCondition
	Active     int32
}

type JobCondition struct{ Type, Status string }
