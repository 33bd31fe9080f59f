package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	// Message is free text.
	// +optional
	Message string `json:"message,omitempty"`
}

// GadgetStatus carries conditions without list markers, so the list is atomic:
// the whole list has one owner, and a second field manager that applies a
// condition conflicts with the first. Do not copy this into a real API; it
// exists to show the failure mode.
type GadgetStatus struct {
	// Conditions is an atomic list (no +listType marker).
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Phase is a summary.
	// +optional
	Phase string `json:"phase,omitempty"`
}

// Gadget is an object whose status conditions are an atomic list.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GadgetSpec   `json:"spec,omitempty"`
	Status GadgetStatus `json:"status,omitempty"`
}

// GadgetList is a list of Gadgets.
//
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gadget `json:"items"`
}
