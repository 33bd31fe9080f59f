package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The conditions accessors are written by hand, as Cluster API and Flux types
// have them, so that condition helpers that take any such type (statusapply's
// conditions package among them) take Widgets and Gadgets. controller-gen
// generates neither them nor anything from them.

// GetConditions returns the Widget's status conditions.
func (w *Widget) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions replaces the Widget's status conditions.
func (w *Widget) SetConditions(conditions []metav1.Condition) { w.Status.Conditions = conditions }

// GetConditions returns the Gadget's status conditions.
func (g *Gadget) GetConditions() []metav1.Condition { return g.Status.Conditions }

// SetConditions replaces the Gadget's status conditions. The Gadget's list is
// atomic: whoever applies it owns every condition in it.
func (g *Gadget) SetConditions(conditions []metav1.Condition) { g.Status.Conditions = conditions }
