// Package v1 holds the object types the testdata controllers write.
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget's conditions are a map list.
type Widget struct {
	metav1.ObjectMeta
	Spec   WidgetSpec
	Status WidgetStatus
}

type WidgetSpec struct {
	Replicas int
	Ports    []int
}

type WidgetStatus struct {
	Phase     string
	Addresses []string
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition
}

func (w *Widget) DeepCopy() *Widget                  { c := *w; return &c }
func (w *Widget) GetConditions() []metav1.Condition  { return w.Status.Conditions }
func (w *Widget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// Gadget's conditions are an atomic list.
type Gadget struct {
	metav1.ObjectMeta
	Status GadgetStatus
}

type GadgetStatus struct {
	Conditions []metav1.Condition
}

func (g *Gadget) DeepCopy() *Gadget                 { c := *g; return &c }
func (g *Gadget) GetConditions() []metav1.Condition { return g.Status.Conditions }

// Plain has no conditions.
type Plain struct {
	metav1.ObjectMeta
	Status struct{ Ready bool }
}

func (p *Plain) DeepCopyObject() *Plain { c := *p; return &c }
