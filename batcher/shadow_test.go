package batcher

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	"github.com/statusapply/statusapply/ssa"
)

// compareCase is a live Widget, what an apply made of it, and what Compare
// must find, as the strings people read and the metric labels.
type compareCase struct {
	sub        ssa.Subresource
	edit       func(w *v1alpha1.Widget)
	conditions []string
	fields     []string
	labels     []ssa.DivergenceLabels
}

func TestCompare(t *testing.T) {
	cond := func(typ, status, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: reason,
			ObservedGeneration: 1, LastTransitionTime: metav1.Unix(1700000000, 0)}
	}
	live := func() *v1alpha1.Widget {
		return &v1alpha1.Widget{
			ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", ResourceVersion: "7", Generation: 1,
				Labels: map[string]string{"app": "x"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "legacy", Operation: metav1.ManagedFieldsOperationUpdate,
					Subresource: "status", FieldsV1: &metav1.FieldsV1{}}}},
			Spec: v1alpha1.WidgetSpec{Replicas: 1},
			Status: v1alpha1.WidgetStatus{
				Phase:      "Running",
				Conditions: []metav1.Condition{cond("Ready", "True", "Up"), cond("Synced", "True", "Done")},
				Attributes: map[string]string{"zone": "a"},
			},
		}
	}
	status := ssa.StatusSubresource
	cases := map[string]compareCase{
		"nothing": {sub: status, edit: func(*v1alpha1.Widget) {}},
		"only lastTransitionTime": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Status.Conditions[0].LastTransitionTime = metav1.Unix(1800000000, 0)
		}},
		"only metadata (resourceVersion, managedFields, generation)": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.ResourceVersion, w.Generation = "8", 2
			w.ManagedFields = append(w.ManagedFields, metav1.ManagedFieldsEntry{Manager: "shadow",
				Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsV1: &metav1.FieldsV1{}})
		}},
		"conditions reordered": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Status.Conditions[0], w.Status.Conditions[1] = w.Status.Conditions[1], w.Status.Conditions[0]
		}},
		"a condition's reason": {sub: status, edit: func(w *v1alpha1.Widget) { w.Status.Conditions[0].Reason = "Degraded" },
			conditions: []string{`condition Ready: reason "Up" -> "Degraded"`},
			labels:     []ssa.DivergenceLabels{{ConditionType: "Ready", Field: "reason", Change: "changed"}}},
		"a condition's status, reason and message, and its lastTransitionTime": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Status.Conditions[1] = cond("Synced", "False", "Stuck")
			w.Status.Conditions[1].LastTransitionTime = metav1.Unix(1800000000, 0)
		},
			conditions: []string{`condition Synced: message "Done" -> "Stuck", reason "Done" -> "Stuck", status "True" -> "False"`},
			labels: []ssa.DivergenceLabels{
				{ConditionType: "Synced", Field: "message", Change: "changed"},
				{ConditionType: "Synced", Field: "reason", Change: "changed"},
				{ConditionType: "Synced", Field: "status", Change: "changed"},
			}},
		"a condition's observedGeneration": {sub: status, edit: func(w *v1alpha1.Widget) { w.Status.Conditions[0].ObservedGeneration = 2 },
			conditions: []string{`condition Ready: observedGeneration 1 -> 2`},
			labels:     []ssa.DivergenceLabels{{ConditionType: "Ready", Field: "observedGeneration", Change: "changed"}}},
		"a condition added": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Status.Conditions = append(w.Status.Conditions, cond("Healthy", "False", "Probing"))
		},
			conditions: []string{`condition Healthy: absent -> present (status "False", reason "Probing", message "Probing")`},
			labels:     []ssa.DivergenceLabels{{ConditionType: "Healthy", Change: "added"}}},
		"a condition removed": {sub: status, edit: func(w *v1alpha1.Widget) { w.Status.Conditions = w.Status.Conditions[:1] },
			conditions: []string{`condition Synced: present -> absent (was status "True", reason "Done", message "Done")`},
			labels:     []ssa.DivergenceLabels{{ConditionType: "Synced", Change: "removed"}}},
		"the phase": {sub: status, edit: func(w *v1alpha1.Widget) { w.Status.Phase = "Done" },
			fields: []string{`.status.phase: "Running" -> "Done"`},
			labels: []ssa.DivergenceLabels{{Field: ".status.phase", Change: "changed"}}},
		"the phase removed": {sub: status, edit: func(w *v1alpha1.Widget) { w.Status.Phase = "" },
			fields: []string{`.status.phase: "Running" -> absent`},
			labels: []ssa.DivergenceLabels{{Field: ".status.phase", Change: "removed"}}},
		"a plan added": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Status.Plan = &v1alpha1.WidgetPlan{ID: "p1", Steps: []string{"a", "b"}}
		},
			fields: []string{`.status.plan: absent -> {"id":"p1","steps":["a","b"]}`},
			labels: []ssa.DivergenceLabels{{Field: ".status.plan", Change: "added"}}},
		"map entries, reported by key, labelled by the map": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Status.Attributes = map[string]string{"zone": "b", "rack": "1"}
		},
			fields: []string{`.status.attributes.rack: absent -> "1"`, `.status.attributes.zone: "a" -> "b"`},
			labels: []ssa.DivergenceLabels{{Field: ".status.attributes", Change: "added"}, {Field: ".status.attributes", Change: "changed"}}},
		"conditions and fields together": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Status.Conditions[0].Message = "half"
			w.Status.ReadyReplicas = 3
		},
			conditions: []string{`condition Ready: message "Up" -> "half"`},
			fields:     []string{`.status.readyReplicas: absent -> 3`},
			labels: []ssa.DivergenceLabels{{ConditionType: "Ready", Field: "message", Change: "changed"},
				{Field: ".status.readyReplicas", Change: "added"}}},
		"the status subresource ignores spec and labels": {sub: status, edit: func(w *v1alpha1.Widget) {
			w.Spec.Replicas = 5
			w.Labels["app"] = "y"
		}},
		"the main resource: spec and labels, not status": {sub: ssa.MainResource, edit: func(w *v1alpha1.Widget) {
			w.Spec.Replicas = 5
			w.Labels["app"] = "y"
			w.Status.Phase = "Done"
			w.Status.Conditions = nil
			w.Generation = 2
		},
			fields: []string{`.metadata.labels.app: "x" -> "y"`, `.spec.replicas: 1 -> 5`},
			labels: []ssa.DivergenceLabels{{Field: ".metadata.labels", Change: "changed"}, {Field: ".spec.replicas", Change: "changed"}}},
	}
	tc := applyconfiguration.NewTypeConverter(scheme())
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			target := ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w",
				Subresource: c.sub, Manager: "shadow"}
			before := live()
			after := live()
			c.edit(after)
			for _, pair := range [][2]client.Object{{before, after}, {asUnstructured(t, before), after}, {before, asUnstructured(t, after)}} {
				d, err := Compare(tc, target, pair[0], pair[1])
				if err != nil {
					t.Fatal(err)
				}
				var conds, fields []string
				for _, cd := range d.Conditions {
					conds = append(conds, cd.String())
				}
				for _, fd := range d.Fields {
					fields = append(fields, fd.String())
				}
				if !reflect.DeepEqual(conds, c.conditions) {
					t.Errorf("conditions (%T, %T):\n got %q\nwant %q", pair[0], pair[1], conds, c.conditions)
				}
				if !reflect.DeepEqual(fields, c.fields) {
					t.Errorf("fields (%T, %T):\n got %q\nwant %q", pair[0], pair[1], fields, c.fields)
				}
				if got := d.labels(); !reflect.DeepEqual(got, c.labels) {
					t.Errorf("labels:\n got %+v\nwant %+v", got, c.labels)
				}
				if d.Empty() != (len(c.conditions)+len(c.fields) == 0) {
					t.Errorf("Empty() = %v", d.Empty())
				}
				if d.ResourceVersion != "7" || d.Target != target {
					t.Errorf("identity: %q %v", d.ResourceVersion, d.Target)
				}
			}
			if !reflect.DeepEqual(before, live()) {
				t.Error("Compare changed the live object")
			}
		})
	}
}

// The fields of a condition that differ are named, and its values on both
// sides are kept, for hooks that want more than the strings.
func TestCompareConditionValues(t *testing.T) {
	live := map[string]map[string]any{
		"Ready": {"type": "Ready", "status": "True", "reason": "Up", "lastTransitionTime": "2023-11-14T22:13:20Z"},
	}
	shadow := map[string]map[string]any{
		"Ready":   {"type": "Ready", "status": "True", "reason": "Up", "message": "new", "lastTransitionTime": "2024-01-01T00:00:00Z"},
		"Healthy": {"type": "Healthy", "status": "Unknown"},
	}
	got := compareConditions(live, shadow)
	want := []ConditionDivergence{
		{Type: "Healthy", Change: Added, Shadow: shadow["Healthy"]},
		{Type: "Ready", Change: Changed, Fields: []string{"message"}, Live: live["Ready"], Shadow: shadow["Ready"]},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if s := got[1].String(); s != `condition Ready: message absent -> "new"` {
		t.Errorf("String() = %s", s)
	}
}

// A status absent on the live object is reported field by field, not as one
// .status field, so that conditions and fields keep their own labels.
func TestCompareWholeStatus(t *testing.T) {
	tc := applyconfiguration.NewTypeConverter(scheme())
	target := ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w",
		Subresource: ssa.StatusSubresource, Manager: "shadow"}
	live := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}}
	result := live.DeepCopy()
	result.Status.Phase = "Done"
	result.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Up", LastTransitionTime: metav1.Unix(1, 0)}}
	for _, pair := range [][2]client.Object{{live, result}, {result, live}} {
		d, err := Compare(tc, target, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Conditions) != 1 || d.Conditions[0].Type != "Ready" || len(d.Fields) != 1 || d.Fields[0].Path.String() != ".status.phase" {
			t.Errorf("got %s", d)
		}
	}
}

// Compare needs the kind's schema, and says so when it has none.
func TestCompareUnknownKind(t *testing.T) {
	tc := applyconfiguration.NewTypeConverter(scheme())
	target := ssa.Target{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Unknown"}, Name: "x",
		Subresource: ssa.StatusSubresource, Manager: "shadow"}
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": "A"}}}
	if _, err := Compare(tc, target, u, u); err == nil {
		t.Fatal("no error for a kind without a schema")
	}
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(s)
	return s
}
