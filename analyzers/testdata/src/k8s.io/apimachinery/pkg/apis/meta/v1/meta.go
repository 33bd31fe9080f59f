// Package v1 is a stub of k8s.io/apimachinery/pkg/apis/meta/v1.
package v1

import "time"

type Time struct{ time.Time }

func Now() Time { return Time{time.Now()} }

type Condition struct {
	Type               string
	Status             string
	Reason             string
	Message            string
	LastTransitionTime Time
}

type ObjectMeta struct {
	Name, Namespace string
	Finalizers      []string
	OwnerReferences []OwnerReference
}

type OwnerReference struct{ Kind, Name string }

func (m *ObjectMeta) GetName() string { return m.Name }

func NewTime(t time.Time) Time { return Time{t} }

type UpdateOptions struct{ FieldManager string }

type PatchOptions struct{ FieldManager string }

func (m *ObjectMeta) SetFinalizers(f []string) {}
