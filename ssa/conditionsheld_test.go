package ssa

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

var heldBase = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

// kindSchemaFor resolves gvk's schema as an Applier does (see schemaOf).
func kindSchemaFor(t testing.TB, gvk schema.GroupVersionKind) *kindSchema {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	tv, err := widgetConverter(t).ObjectToTyped(u)
	if err != nil {
		t.Fatal(err)
	}
	return &kindSchema{schema: tv.Schema(), typeRef: tv.TypeRef(), conditions: conditionsSchemaOf(tv)}
}

// generalHeld is the general value check on the same inputs: the form's
// content as a remembered state reads it (see ownedState.ownedContent)
// against observed's.
func generalHeld(t testing.TB, ks *kindSchema, form any, observed client.Object) bool {
	t.Helper()
	owned, err := runtime.DefaultUnstructuredConverter.ToUnstructured(form)
	if err != nil {
		t.Fatal(err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(observed)
	if err != nil {
		t.Fatal(err)
	}
	return valuesMatch(ks.schema, ks.typeRef, withoutIdentity(owned), content)
}

// heldCondition is a condition's apply configuration with every field set.
func heldCondition(typ, status, reason, message string, gen int64, at time.Time) *metav1ac.ConditionApplyConfiguration {
	return metav1ac.Condition().WithType(typ).WithStatus(metav1.ConditionStatus(status)).WithReason(reason).
		WithMessage(message).WithObservedGeneration(gen).WithLastTransitionTime(metav1.NewTime(at))
}

func heldForm(conds ...*metav1ac.ConditionApplyConfiguration) *acv1alpha1.WidgetApplyConfiguration {
	ac := acv1alpha1.Widget("w1", "ns")
	ac.WithUID("u1")
	return ac.WithStatus(acv1alpha1.WidgetStatus().WithConditions(conds...))
}

func heldObserved(conds ...metav1.Condition) *v1alpha1.Widget {
	return &v1alpha1.Widget{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"x": "y"}},
		Spec:       v1alpha1.WidgetSpec{Replicas: 2},
		Status:     v1alpha1.WidgetStatus{Phase: "On", Conditions: conds},
	}
}

func observedCondition(typ, status, reason, message string, gen int64, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: message,
		ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(at)}
}

// TestConditionsHeld holds the typed value check to the general one on the
// ways a condition can change, and shows what it leaves to the general one.
func TestConditionsHeld(t *testing.T) {
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	ks := kindSchemaFor(t, gvk)
	var layouts layouts
	lay := layouts.shared(reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]())
	ready := func() *metav1ac.ConditionApplyConfiguration {
		return heldCondition("Ready", "True", "Up", "all up", 3, heldBase)
	}
	observedReady := observedCondition("Ready", "True", "Up", "all up", 3, heldBase)
	synced := observedCondition("Synced", "False", "Behind", "two behind", 3, heldBase.Add(-time.Hour))

	type outcome int
	const (
		held outcome = iota
		notHeld
		declined // left to the general check
	)
	for _, tc := range []struct {
		name     string
		form     any
		observed client.Object
		ks       *kindSchema
		want     outcome
	}{
		{"every field as observed, among other conditions", heldForm(ready()), heldObserved(synced, observedReady), ks, held},
		{"a changed message", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "one down", 3, heldBase)), ks, notHeld},
		{"a changed status", heldForm(ready()), heldObserved(observedCondition("Ready", "False", "Up", "all up", 3, heldBase)), ks, notHeld},
		{"a changed reason", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Down", "all up", 3, heldBase)), ks, notHeld},
		{"a changed observedGeneration", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "all up", 4, heldBase)), ks, notHeld},
		{"a transition a second later", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "all up", 3, heldBase.Add(time.Second))), ks, notHeld},
		{"a transition within the same second", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "all up", 3, heldBase.Add(400*time.Millisecond))), ks, held},
		{"the same transition in another zone", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "all up", 3, heldBase.In(time.FixedZone("east", 5*3600)))), ks, held},
		{"the condition gone", heldForm(ready()), heldObserved(synced), ks, notHeld},
		{"one of two conditions changed", heldForm(ready(), heldCondition("Synced", "False", "Behind", "two behind", 3, heldBase.Add(-time.Hour))),
			heldObserved(observedReady, observedCondition("Synced", "False", "Behind", "one behind", 3, heldBase.Add(-time.Hour))), ks, notHeld},
		{"the first of two items of one type is what counts", heldForm(ready()),
			heldObserved(observedCondition("Ready", "True", "Up", "one down", 3, heldBase), observedReady), ks, notHeld},
		{"only the fields the form states", heldForm(metav1ac.Condition().WithType("Ready").WithStatus("True")),
			heldObserved(observedCondition("Ready", "True", "Other", "anything", 9, heldBase.Add(time.Hour))), ks, held},
		{"no conditions", heldForm(), heldObserved(), ks, held},
		{"no status", acv1alpha1.Widget("w1", "ns"), heldObserved(observedReady), ks, held},
		{"no metadata", &acv1alpha1.WidgetApplyConfiguration{Status: acv1alpha1.WidgetStatus().WithConditions(ready())}, heldObserved(observedReady), ks, held},

		{"another status field", heldForm(ready()).WithStatus(acv1alpha1.WidgetStatus().WithPhase("On").WithConditions(ready())), heldObserved(observedReady), ks, declined},
		{"a label", func() any { f := heldForm(ready()); f.WithLabels(map[string]string{"x": "y"}); return f }(), heldObserved(observedReady), ks, declined},
		{"a spec", heldForm(ready()).WithSpec(acv1alpha1.WidgetSpec().WithReplicas(2)), heldObserved(observedReady), ks, declined},
		{"a condition without a type", heldForm(metav1ac.Condition().WithStatus("True")), heldObserved(observedReady), ks, declined},
		{"a zero observedGeneration stated", heldForm(heldCondition("Ready", "True", "Up", "all up", 0, heldBase)),
			heldObserved(observedCondition("Ready", "True", "Up", "all up", 0, heldBase)), ks, declined},
		{"a zero observedGeneration observed", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "all up", 0, heldBase)), ks, declined},
		{"a zero transition stated", heldForm(heldCondition("Ready", "True", "Up", "all up", 3, time.Time{})), heldObserved(observedReady), ks, declined},
		{"a zero transition observed", heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "all up", 3, time.Time{})), ks, declined},
		{"an atomic list of conditions", heldForm(ready()), heldObserved(observedReady), kindSchemaFor(t, v1alpha1.SchemeGroupVersion.WithKind("Gadget")), declined},
		{"no schema", heldForm(ready()), heldObserved(observedReady), nil, declined},
		{"an unstructured object", heldForm(ready()), func() client.Object {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(heldObserved(observedReady))
			if err != nil {
				t.Fatal(err)
			}
			return &unstructured.Unstructured{Object: content}
		}(), ks, declined},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs objectConditions
			gotHeld, decided := conditionsHeld(lay, tc.ks, &objs, tc.form, tc.observed)
			got := declined
			if decided {
				got = notHeld
				if gotHeld {
					got = held
				}
			}
			if got != tc.want {
				t.Fatalf("held %v, decided %v; want outcome %d", gotHeld, decided, tc.want)
			}
			if decided && gotHeld != generalHeld(t, tc.ks, tc.form, tc.observed) {
				t.Fatalf("held %v, the general check %v", gotHeld, !gotHeld)
			}
		})
	}

	// A check that compares what decides most reconciles (type and status)
	// and not the rest would pass a message another process changed within
	// the same second, with the entry unchanged; the table's general check
	// catches it.
	naive := func(form *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) bool {
		for _, c := range form.Status.Conditions {
			o := meta.FindStatusCondition(observed.Status.Conditions, *c.Type)
			if o == nil || o.Status != *c.Status {
				return false
			}
		}
		return true
	}
	form, changed := heldForm(ready()), heldObserved(observedCondition("Ready", "True", "Up", "one down", 3, heldBase))
	if !naive(form, changed) || generalHeld(t, ks, form, changed) {
		t.Fatal("the control: a check of type and status alone should hold a changed message, and the general check not")
	}
}

// TestConditionsSchemaByType resolves which schemas merge conditions field by
// field, by type.
func TestConditionsSchemaByType(t *testing.T) {
	const fields = `
    - name: type
      type: {scalar: string}
    - name: status
      type: {scalar: string}
    - name: observedGeneration
      type: {scalar: numeric}
    - name: lastTransitionTime
      type: {scalar: string}
    - name: reason
      type: {scalar: string}
    - name: message
      type: %s`
	doc := func(statusRel, keys, elemRel, message string) string {
		return `types:
- name: root
  map:
    fields:
    - name: status
      type: {namedType: status}
- name: status
  map:
    elementRelationship: ` + statusRel + `
    fields:
    - name: conditions
      type: {list: {elementType: {namedType: condition}, elementRelationship: associative, keys: ` + keys + `}}
- name: condition
  map:
    elementRelationship: ` + elemRel + `
    fields:` + fmt.Sprintf(fields, message) + "\n"
	}
	for _, tc := range []struct {
		name string
		doc  string
		want conditionsSchema
	}{
		{"merged by type, field by field", doc("separable", "[type]", "separable", "{scalar: string}"), conditionsSchema{metav1: true, byType: true}},
		{"keyed by type and status", doc("separable", "[type, status]", "separable", "{scalar: string}"), conditionsSchema{metav1: true}},
		{"an atomic status", doc("atomic", "[type]", "separable", "{scalar: string}"), conditionsSchema{metav1: true}},
		{"atomic conditions", doc("separable", "[type]", "atomic", "{scalar: string}"), conditionsSchema{metav1: true}},
		{"a message that is not a scalar", doc("separable", "[type]", "separable", "{map: {elementType: {scalar: string}}}"), conditionsSchema{metav1: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := typed.NewParser(typed.YAMLObject(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			tv, err := p.Type("root").FromUnstructured(map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			if got := conditionsSchemaOf(tv); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Objects of their own shapes.
type (
	pointerStatus struct {
		v1alpha1.Widget `json:",inline"`
		Status          *v1alpha1.WidgetStatus `json:"status,omitempty"`
	}
	untaggedStatus struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Status            v1alpha1.WidgetStatus
	}
	encodesItself struct{ v1alpha1.Widget }
)

func (o *pointerStatus) DeepCopyObject() runtime.Object  { return o }
func (o *untaggedStatus) DeepCopyObject() runtime.Object { return o }
func (o *encodesItself) DeepCopyObject() runtime.Object  { return o }
func (o *encodesItself) MarshalJSON() ([]byte, error)    { return json.Marshal(o.Widget) }

// TestObjectConditions finds the status conditions where JSON has them, and
// nowhere else.
func TestObjectConditions(t *testing.T) {
	cond := []metav1.Condition{observedCondition("Ready", "True", "Up", "all up", 3, heldBase)}
	var objs objectConditions
	for _, tc := range []struct {
		name   string
		obj    client.Object
		want   []metav1.Condition
		wantOK bool
	}{
		{"a typed object", heldObserved(cond...), cond, true},
		{"a status behind a pointer", &pointerStatus{Status: &v1alpha1.WidgetStatus{Conditions: cond}}, cond, true},
		{"no status behind the pointer", &pointerStatus{}, nil, true},
		{"a status field without a JSON name", &untaggedStatus{Status: v1alpha1.WidgetStatus{Conditions: cond}}, nil, false},
		{"an object that encodes itself", &encodesItself{Widget: *heldObserved(cond...)}, nil, false},
		{"unstructured", &unstructured.Unstructured{Object: map[string]any{}}, nil, false},
		{"a nil object", (*v1alpha1.Widget)(nil), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // found, then from the cache
				got, ok := objs.of(tc.obj)
				if ok != tc.wantOK || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
				}
			}
		})
	}
}

// The typed check knows every field a condition's apply configuration has:
// one added upstream would go unchecked.
func TestConditionsHeldKnowsEveryConditionField(t *testing.T) {
	if n := reflect.TypeFor[metav1ac.ConditionApplyConfiguration]().NumField(); n != 6 {
		t.Fatalf("ConditionApplyConfiguration has %d fields; conditionHeld compares 6", n)
	}
}

// TestOwnedStateMovesForConditions: a manager of conditions whose entry
// another manager's write left as it was keeps its state at the new
// resourceVersion without converting anything, and one whose values another
// process changed under the same entry reads them again.
func TestOwnedStateMovesForConditions(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	labels := h.a.metrics.of(&h.t)
	at := metav1.NewTime(heldBase)
	build := Build{
		Func: func(intent *unstructured.Unstructured, _ client.Object) error {
			return unstructured.SetNestedSlice(intent.Object, []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "Up", "message": "all up", "observedGeneration": int64(3),
				"lastTransitionTime": heldBase.Format(time.RFC3339),
			}}, "status", "conditions")
		},
		Typed: &TypedBuild{Type: reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration](), Mutate: func(ac any, _ client.Object) error {
			w, _ := ac.(*acv1alpha1.WidgetApplyConfiguration)
			w.WithStatus(acv1alpha1.WidgetStatus().WithConditions(heldCondition("Ready", "True", "Up", "all up", 3, at.Time)))
			return nil
		}},
	}
	if _, err := h.a.Apply(ctx, h.t, h.observe(t), build, &ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	key := ownedKey{uid: "u1", manager: "m", sub: MainResource}
	remembered := h.a.owned.get(key)
	if remembered == nil || remembered.last == nil {
		t.Fatal("nothing remembered of the apply")
	}

	other := acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("e"))
	if err := h.c.Apply(ctx, other, client.FieldOwner("other")); err != nil {
		t.Fatal(err)
	}
	moved := h.observe(t)
	st, _, err := h.a.ownedState(ctx, h.t, moved, labels, true)
	if err != nil || st == remembered || st.rv != moved.ResourceVersion || st.last != remembered.last || st.content != nil {
		t.Fatalf("state %+v, err %v; want the remembered form at resourceVersion %s", st, err, moved.ResourceVersion)
	}
	if n := len(h.a.entries.m); n != 0 {
		t.Fatalf("%d entries decoded: the typed check did not answer", n)
	}

	// The same entry with another message, within the same second.
	changed := moved.DeepCopy()
	changed.ResourceVersion += "0"
	changed.Status.Conditions[0].Message = "one down"
	st, _, err = h.a.ownedState(ctx, h.t, changed, labels, true)
	if err != nil || st.last != nil {
		t.Fatalf("state %+v, err %v; want the observed values read again", st, err)
	}
	conds, _, _ := unstructured.NestedSlice(st.content, "status", "conditions")
	if len(conds) != 1 || conds[0].(map[string]any)["message"] != "one down" {
		t.Fatalf("extracted %v, want the changed message", st.content)
	}
}

// FuzzConditionsHeld holds the typed value check to the general one: for a
// form (a Widget apply configuration) and an observed Widget, both as JSON,
// the typed check either declines or finds what the general check finds.
func FuzzConditionsHeld(f *testing.F) {
	const (
		ready  = `{"type":"Ready","status":"True","reason":"Up","message":"all up","observedGeneration":3,"lastTransitionTime":"2026-11-27T06:00:00Z"}`
		prefix = `{"apiVersion":"demo.statusapply.io/v1alpha1","kind":"Widget","metadata":{"name":"w1","namespace":"ns","uid":"u1"}`
	)
	for _, s := range [][2]string{
		{prefix + `,"status":{"conditions":[` + ready + `]}}`, `{"metadata":{"resourceVersion":"7"},"status":{"phase":"On","conditions":[` + ready + `]}}`},
		{prefix + `,"status":{"conditions":[` + ready + `]}}`, `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Up","message":"one down","observedGeneration":3,"lastTransitionTime":"2026-11-27T06:00:00Z"}]}}`},
		{prefix + `,"status":{"conditions":[{"type":"Ready","lastTransitionTime":"2026-11-27T06:00:00.9+01:00"}]}}`, `{"status":{"conditions":[{"type":"Ready","lastTransitionTime":"2026-11-27T05:00:00Z"}]}}`},
		{prefix + `,"status":{"conditions":[{"type":"A","observedGeneration":0}]}}`, `{"status":{"conditions":[{"type":"A"}]}}`},
		{prefix + `,"status":{"conditions":[{"type":"A"},{"type":"B","status":"False"}]}}`, `{"status":{"conditions":[{"type":"B","status":"True"},{"type":"A"},{"type":"B","status":"False"}]}}`},
		{`{"metadata":{"labels":{"a":"b"}},"status":{"conditions":[]}}`, `{}`},
		{`{"status":{}}`, `{"status":{"conditions":null}}`},
	} {
		f.Add(s[0], s[1])
	}
	ks := kindSchemaFor(f, v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	var layouts layouts
	lay := layouts.shared(reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]())
	var objs objectConditions
	f.Fuzz(func(t *testing.T, formJSON, observedJSON string) {
		form := &acv1alpha1.WidgetApplyConfiguration{}
		observed := &v1alpha1.Widget{}
		if json.Unmarshal([]byte(formJSON), form) != nil || json.Unmarshal([]byte(observedJSON), observed) != nil {
			return
		}
		held, decided := conditionsHeld(lay, ks, &objs, form, observed)
		if !decided {
			return
		}
		if general := generalHeld(t, ks, form, observed); held != general {
			t.Fatalf("typed check %v, general check %v\nform %s\nobserved %s", held, general, formJSON, observedJSON)
		}
	})
}
