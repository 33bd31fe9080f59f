package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Replicas is how many copies the Widget asks for.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Message is free text the status writers may echo back.
	// +optional
	Message string `json:"message,omitempty"`
}

// WidgetPlan is a decision taken once from observed state. Two reconciles that
// both observe no plan must not both write one: the write is guarded by the
// observed resourceVersion.
type WidgetPlan struct {
	// ID names the plan.
	ID string `json:"id"`

	// CreatedBy is the writer that decided the plan.
	// +optional
	CreatedBy string `json:"createdBy,omitempty"`

	// Steps are the plan's steps, in order. The list is atomic: a plan is
	// replaced whole, never merged.
	// +listType=atomic
	// +optional
	Steps []string `json:"steps,omitempty"`
}

// WidgetStatus is written by several controllers at once, each as its own
// field manager.
type WidgetStatus struct {
	// Conditions are merged per type: each field manager owns the types it applies.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the metadata.generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Plan is set once, by whichever writer first observes none.
	// +optional
	Plan *WidgetPlan `json:"plan,omitempty"`

	// ReadyReplicas is written by the readiness writer.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Endpoint is written by the networking writer.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// Phase is a summary a single writer owns.
	// +optional
	Phase string `json:"phase,omitempty"`

	// Attributes is a granular map: each key can have its own owner.
	// +mapType=granular
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// Widget is an object with several status writers.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:subresource:status
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetList is a list of Widgets.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}
