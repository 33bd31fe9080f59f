// Package conditions reads and writes the status conditions of any object
// that exposes them as metav1.Conditions through GetConditions and
// SetConditions (as Cluster API and Flux objects do), and of unstructured
// objects, so that one condition helper serves every such kind. Edit and
// Status turn condition changes into batcher Edits: each writer's conditions
// go out in its own field manager's apply, merged per type by the API server.
//
//	// Once, for any type with GetConditions and SetConditions:
//	err := conditions.Status(b, machine, "infra-controller", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up"})
//
// Setting a condition follows meta.SetStatusCondition: lastTransitionTime is
// kept while the status does not change (and set to now when it does, unless
// the condition carries one), and observedGeneration defaults to the object's
// generation. Setting a condition to what it already is changes nothing, so
// its Edit claims nothing and a reconcile that decides the same again sends
// nothing.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/batcher"
)

// Getter is an object whose status conditions can be read.
type Getter interface {
	GetConditions() []metav1.Condition
}

// Setter is an object whose status conditions can be read and replaced.
type Setter interface {
	Getter
	SetConditions([]metav1.Condition)
}

// Object is a Kubernetes object with conditions accessors.
type Object interface {
	client.Object
	Setter
}

// Get returns a copy of the condition of condType on obj, or nil.
func Get(obj Getter, condType string) *metav1.Condition {
	c := meta.FindStatusCondition(obj.GetConditions(), condType)
	if c == nil {
		return nil
	}
	cp := *c
	return &cp
}

// IsTrue reports whether obj has the condition of condType with status True.
func IsTrue(obj Getter, condType string) bool {
	return meta.IsStatusConditionTrue(obj.GetConditions(), condType)
}

// Set sets cond on obj, replacing the condition of the same type, and
// reports whether anything changed. observedGeneration defaults to obj's
// generation; lastTransitionTime is kept while the status does not change.
func Set(obj Object, cond metav1.Condition) bool {
	if cond.ObservedGeneration == 0 {
		cond.ObservedGeneration = obj.GetGeneration()
	}
	list := obj.GetConditions()
	if !meta.SetStatusCondition(&list, cond) {
		return false
	}
	obj.SetConditions(list)
	return true
}

// Remove removes the condition of condType from obj and reports whether
// there was one. Applied, the removal releases the condition; only its
// owner can remove it (see ssa.ErrRemovesForeignField).
func Remove(obj Setter, condType string) bool {
	list := obj.GetConditions()
	if !meta.RemoveStatusCondition(&list, condType) {
		return false
	}
	obj.SetConditions(list)
	return true
}

// Edit returns a batcher Edit that sets conds, in order, on any object with
// conditions accessors.
func Edit[O Object](conds ...metav1.Condition) batcher.Edit[O] {
	return func(obj O) error {
		for _, c := range conds {
			Set(obj, c)
		}
		return nil
	}
}

// RemoveEdit returns a batcher Edit that removes the conditions of types.
func RemoveEdit[O Object](types ...string) batcher.Edit[O] {
	return func(obj O) error {
		for _, t := range types {
			Remove(obj, t)
		}
		return nil
	}
}

// Status queues, for what manager applies to obj's status, an Edit setting
// conds (see Edit and batcher.EditStatus).
func Status[O Object](b *batcher.Batch, obj O, manager string, conds ...metav1.Condition) error {
	return batcher.EditStatus(b, obj, manager, Edit[O](conds...))
}

// EditUnstructured is Edit for unstructured objects: it sets conds in
// status.conditions (see Unstructured).
func EditUnstructured(conds ...metav1.Condition) batcher.Edit[*unstructured.Unstructured] {
	return func(u *unstructured.Unstructured) error {
		obj := Unstructured(u)
		for _, c := range conds {
			Set(obj, c)
		}
		return obj.Err()
	}
}

// StatusUnstructured is Status for unstructured objects.
func StatusUnstructured(b *batcher.Batch, u *unstructured.Unstructured, manager string, conds ...metav1.Condition) error {
	return batcher.EditStatus(b, u, manager, EditUnstructured(conds...))
}
