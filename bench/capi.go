package bench

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// CAPIWidget is a Widget as Cluster API's patch helper wants it: an object
// with GetConditions and SetConditions, so that the helper patches conditions
// on their own with its conflict-aware retry instead of as part of the status.
// It is registered under the Widget's GVK in a scheme of its own (one scheme
// cannot map a GVK to two Go types).
type CAPIWidget struct {
	v1alpha1.Widget `json:",inline"`
}

// GetConditions returns the Widget's status conditions.
func (w *CAPIWidget) GetConditions() []metav1.Condition { return w.Status.Conditions }

// SetConditions replaces the Widget's status conditions.
func (w *CAPIWidget) SetConditions(c []metav1.Condition) { w.Status.Conditions = c }

// DeepCopyObject copies the wrapper, not only the embedded Widget, so that the
// helper's before and after objects keep the wrapper's type.
func (w *CAPIWidget) DeepCopyObject() runtime.Object {
	return &CAPIWidget{Widget: *w.DeepCopy()}
}

// CAPIWidgetList lists CAPIWidgets; a scheme needs the list kind to serve Gets.
type CAPIWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CAPIWidget `json:"items"`
}

// DeepCopyObject copies the list.
func (l *CAPIWidgetList) DeepCopyObject() runtime.Object {
	out := &CAPIWidgetList{TypeMeta: l.TypeMeta}
	l.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*CAPIWidget))
	}
	return out
}

// NewCAPIScheme returns the built-in types plus CAPIWidget as the Widget kind.
func NewCAPIScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	gv := v1alpha1.SchemeGroupVersion
	s.AddKnownTypeWithName(gv.WithKind("Widget"), &CAPIWidget{})
	s.AddKnownTypeWithName(gv.WithKind("WidgetList"), &CAPIWidgetList{})
	metav1.AddToGroupVersion(s, gv)
	return s, nil
}
