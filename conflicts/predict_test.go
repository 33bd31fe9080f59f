package conflicts

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"

	"github.com/statusapply/statusapply/ownership"
)

func exampleConverter(t *testing.T) managedfields.TypeConverter {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return applyconfiguration.NewTypeConverter(s)
}

var ltt = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

const readyFields = `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`

func entry(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, Subresource: subresource, APIVersion: demoV1,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields),
	}
}

// observedWidget is a Widget as a typed client returns it: no TypeMeta.
func observedWidget(entries ...metav1.ManagedFieldsEntry) *v1alpha1.Widget {
	return &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", ManagedFields: entries, CreationTimestamp: ltt},
		Spec:       v1alpha1.WidgetSpec{Replicas: 1},
		Status: v1alpha1.WidgetStatus{
			Phase: "Running",
			Conditions: []metav1.Condition{
				{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "m", LastTransitionTime: ltt},
			},
		},
	}
}

// widgetApply is an apply intent for the Widget with the given status and spec
// (either may be nil).
func widgetApply(status, spec map[string]interface{}) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": demoV1, "kind": "Widget",
		"metadata": map[string]interface{}{"name": "w1", "namespace": "ns"},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func readyCondition(status, reason string) map[string]interface{} {
	return map[string]interface{}{"type": "Ready", "status": status, "reason": reason, "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"}
}

func conditions(cs ...map[string]interface{}) map[string]interface{} {
	list := make([]interface{}, 0, len(cs))
	for _, c := range cs {
		list = append(list, c)
	}
	return map[string]interface{}{"conditions": list}
}

func TestPredict(t *testing.T) {
	tc := exampleConverter(t)
	readiness := entry("readiness", metav1.ManagedFieldsOperationApply, "status", readyFields)
	legacyPhase := entry("legacy", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:phase":{}}}`)
	networkUpdate := entry("network", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:phase":{}}}`)
	specOwner := entry("deployer", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:replicas":{}}}`)

	tests := []struct {
		name        string
		observed    runtime.Object
		manager     string
		subresource string
		intent      *unstructured.Unstructured
		want        []flat
	}{
		{"Apply owner, different value", observedWidget(readiness), "network", "status",
			widgetApply(conditions(readyCondition("False", "Down")), nil), []flat{
				{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].reason`, "Ready"},
				{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].status`, "Ready"},
			}},
		{"Apply owner, same value: shared", observedWidget(readiness), "network", "status",
			widgetApply(conditions(readyCondition("True", "Up")), nil), nil},
		{"own Apply entry never conflicts", observedWidget(readiness), "readiness", "status",
			widgetApply(conditions(readyCondition("False", "Down")), nil), nil},
		{"Update owner, different value", observedWidget(readiness, legacyPhase), "network", "status",
			widgetApply(map[string]interface{}{"phase": "Failed"}, nil), []flat{
				{"legacy", "Update", "status", demoV1, ".status.phase", ""},
			}},
		{"the manager's own Update entry is another owner", observedWidget(networkUpdate), "network", "status",
			widgetApply(map[string]interface{}{"phase": "Failed"}, nil), []flat{
				{"network", "Update", "status", demoV1, ".status.phase", ""},
			}},
		{"a status apply ignores spec", observedWidget(specOwner), "network", "status",
			widgetApply(map[string]interface{}{"endpoint": "x"}, map[string]interface{}{"replicas": int64(3)}), nil},
		{"a main resource apply ignores status", observedWidget(specOwner, legacyPhase), "network", "",
			widgetApply(map[string]interface{}{"phase": "Failed"}, map[string]interface{}{"replicas": int64(3)}), []flat{
				{"deployer", "Update", "", demoV1, ".spec.replicas", ""},
			}},
		{"a new condition type is nobody's", observedWidget(readiness), "network", "status",
			widgetApply(conditions(map[string]interface{}{"type": "Reachable", "status": "True", "reason": "Up", "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"}), nil), nil},
		{"unstructured observed, sorted by owner", mustUnstructured(t, observedWidget(readiness, legacyPhase)), "network", "status",
			widgetApply(map[string]interface{}{"phase": "Failed", "conditions": []interface{}{readyCondition("False", "Up")}}, nil), []flat{
				{"legacy", "Update", "status", demoV1, ".status.phase", ""},
				{"readiness", "Apply", "status", "", `.status.conditions[type="Ready"].status`, "Ready"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.intent.DeepCopy()
			got, err := Predict(tt.observed, tc, tt.manager, tt.subresource, tt.intent)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(flatten(got), tt.want) {
				t.Fatalf("got %+v\nwant %+v", flatten(got), tt.want)
			}
			if !reflect.DeepEqual(before, tt.intent) {
				t.Fatal("Predict modified the intent")
			}
		})
	}
}

func TestPredictAtomicList(t *testing.T) {
	g := &v1alpha1.Gadget{
		ObjectMeta: metav1.ObjectMeta{Name: "g1", Namespace: "ns", ManagedFields: []metav1.ManagedFieldsEntry{
			entry("readiness", metav1.ManagedFieldsOperationApply, "status", `{"f:status":{"f:conditions":{}}}`),
		}},
		Status: v1alpha1.GadgetStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: "Up", Message: "m", LastTransitionTime: ltt}}},
	}
	intent := widgetApply(conditions(map[string]interface{}{"type": "Reachable", "status": "True", "reason": "Up", "message": "m", "lastTransitionTime": "2026-01-02T03:04:05Z"}), nil)
	intent.SetKind("Gadget")
	intent.SetName("g1")
	got, err := Predict(g, exampleConverter(t), "network", "status", intent)
	if err != nil {
		t.Fatal(err)
	}
	want := []flat{{"readiness", "Apply", "status", "", ".status.conditions", ""}}
	if !reflect.DeepEqual(flatten(got), want) {
		t.Fatalf("got %+v, want %+v", flatten(got), want)
	}
}

func TestPredictUntracked(t *testing.T) {
	tc := exampleConverter(t)
	intent := widgetApply(map[string]interface{}{"phase": "Failed", "conditions": []interface{}{readyCondition("True", "Up")}}, nil)
	_, err := Predict(observedWidget(), tc, "network", "status", intent)
	if !errors.Is(err, ownership.ErrNoManagedFields) || !strings.Contains(err.Error(), "Widget ns/w1") || !strings.Contains(err.Error(), "network") {
		t.Fatalf("error %v: want ownership.ErrNoManagedFields naming the object and manager", err)
	}
	got, err := Predict(observedWidget(), tc, "network", "status", intent, AssumeUntracked())
	if err != nil {
		t.Fatal(err)
	}
	want := []flat{{ownership.BeforeFirstApplyManager, "Update", "status", demoV1, ".status.phase", ""}}
	if !reflect.DeepEqual(flatten(got), want) {
		t.Fatalf("got %+v, want %+v", flatten(got), want)
	}
}

func TestPredictErrors(t *testing.T) {
	tc := exampleConverter(t)
	intent := widgetApply(map[string]interface{}{"phase": "x"}, nil)
	readiness := entry("readiness", metav1.ManagedFieldsOperationApply, "status", readyFields)
	badOp := readiness
	badOp.Operation = "Merge"
	badFields := readiness // JSON, but not a field set
	badFields.FieldsV1 = metav1.NewFieldsV1(`{"f:status":5}`)
	notJSON := readiness // the typed object does not even convert
	notJSON.FieldsV1 = metav1.NewFieldsV1(`{"f:status":`)
	gadget := widgetApply(nil, nil)
	gadget.SetKind("Gadget")
	typedGadget := &v1alpha1.Gadget{TypeMeta: metav1.TypeMeta{APIVersion: demoV1, Kind: "Gadget"}, ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{readiness}}}
	badIntent := widgetApply(map[string]interface{}{"phase": int64(3)}, nil)

	predict := func(observed runtime.Object, tc managedfields.TypeConverter, intent *unstructured.Unstructured) func() error {
		return func() error { _, err := Predict(observed, tc, "m", "status", intent); return err }
	}
	unknown := gadget.DeepCopy()
	unknown.SetKind("Nope")
	for _, tt := range []struct {
		name string
		call func() error
		is   error
	}{
		{"nil observed", predict(nil, tc, intent), ErrInvalidInput},
		{"nil intent", predict(observedWidget(readiness), tc, nil), ErrInvalidInput},
		{"nil converter", predict(observedWidget(readiness), nil, intent), ErrInvalidInput},
		{"no managedFields", predict(observedWidget(), tc, intent), ownership.ErrNoManagedFields},
		{"bad operation", predict(observedWidget(badOp), tc, intent), ownership.ErrBadManagedFields},
		{"bad fields", predict(observedWidget(badFields), tc, intent), ownership.ErrBadManagedFields},
		{"fields that are not JSON", predict(observedWidget(notJSON), tc, intent), ErrInvalidInput},
		{"kind mismatch", predict(typedGadget, tc, intent), ErrInvalidInput},
		{"intent of bad type", predict(observedWidget(readiness), tc, badIntent), ErrSchemaMismatch},
		// The observed Widget has no kind of its own and takes the intent's.
		{"unknown kind", predict(observedWidget(readiness), tc, unknown), ErrSchemaMismatch},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want one wrapping %v", err, tt.is)
			}
		})
	}
}

func mustUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(demoV1)
	u.SetKind("Widget")
	return u
}
