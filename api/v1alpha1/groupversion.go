package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemeGroupVersion is the group and version of the example API.
var SchemeGroupVersion = schema.GroupVersion{Group: "demo.statusapply.io", Version: "v1alpha1"}

// AddToScheme registers Widget and Gadget with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &Widget{}, &WidgetList{}, &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
