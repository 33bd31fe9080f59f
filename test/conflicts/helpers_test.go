package conflicts

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/widgets"
)

// transition is the lastTransitionTime every condition in these specs carries,
// so that two writers setting the same condition differ only where a spec
// means them to.
var transition = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// cond is one condition a writer sets.
type cond struct {
	Type   string
	Status metav1.ConditionStatus
	Reason string
}

func (c cond) ac() *metav1ac.ConditionApplyConfiguration {
	return metav1ac.Condition().WithType(c.Type).WithStatus(c.Status).WithReason(c.Reason).
		WithMessage("reason " + c.Reason).WithLastTransitionTime(transition)
}

func (c cond) condition() metav1.Condition {
	return metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: "reason " + c.Reason, LastTransitionTime: transition}
}

// statusIntent is a fresh status apply configuration for a Widget; callers add
// fields before sending it.
func statusIntent(key client.ObjectKey, conds ...cond) *acv1alpha1.WidgetApplyConfiguration {
	st := acv1alpha1.WidgetStatus()
	for _, c := range conds {
		st.WithConditions(c.ac())
	}
	return acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(st)
}

// typeConverter knows the example API's list and map markers.
func typeConverter() managedfields.TypeConverter {
	return applyconfiguration.NewTypeConverter(env.Scheme)
}

// unstructuredOf turns an apply configuration into the unstructured intent
// Predict and RemoveFields work on.
func unstructuredOf(ac runtime.ApplyConfiguration) *unstructured.Unstructured {
	GinkgoHelper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ac)
	Expect(err).NotTo(HaveOccurred())
	return &unstructured.Unstructured{Object: m}
}

// widgetRef is the identity errors name.
func widgetRef(key client.ObjectKey) ownership.ObjectRef {
	return ownership.ObjectRef{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: key.Namespace, Name: key.Name}
}

// record is a Conflict reduced to comparable strings, to compare the server's
// report with the prediction.
type record struct {
	Manager, Operation, Subresource, APIVersion, Path, ConditionType string
}

func records(cs []conflicts.Conflict) []record {
	out := make([]record, 0, len(cs))
	for _, c := range cs {
		out = append(out, record{c.Manager, string(c.Operation), c.Subresource, c.APIVersion, c.Path.String(), c.ConditionType})
	}
	return out
}

// getWidget reads the Widget fresh from the API server, with managedFields.
func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w, err := widgets.Get(ctx, env.Client, key)
	Expect(err).NotTo(HaveOccurred())
	return w
}

// conditionOf returns the condition of the given type, or nil.
func conditionOf(w *v1alpha1.Widget, t string) *metav1.Condition {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == t {
			return &w.Status.Conditions[i]
		}
	}
	return nil
}

// ownsCondition reports whether manager's status Apply entry owns the
// condition of type t. It reads the manager's fields through the generated
// extraction, so owning any field of the condition counts, where
// widgets.OwnsCondition asks for the list element itself.
func ownsCondition(w *v1alpha1.Widget, manager, t string) bool {
	GinkgoHelper()
	for _, mf := range w.ManagedFields {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != "status" {
			continue
		}
		ac, err := acv1alpha1.ExtractWidgetStatus(w, manager)
		Expect(err).NotTo(HaveOccurred())
		if ac.Status == nil {
			return false
		}
		for _, c := range ac.Status.Conditions {
			if c.Type != nil && *c.Type == t {
				return true
			}
		}
	}
	return false
}

// appliedFields returns the fields of manager's status Apply entry on w, nil
// when it has none: what RemoveFields keeps keys against.
func appliedFields(w *v1alpha1.Widget, manager string) *fieldpath.Set {
	GinkgoHelper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	Expect(err).NotTo(HaveOccurred())
	set, _, err := ownership.AppliedFields(&unstructured.Unstructured{Object: content}, manager, "status")
	Expect(err).NotTo(HaveOccurred())
	return set
}
