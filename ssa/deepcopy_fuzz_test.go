package ssa

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// FuzzDeepCopyAC decodes arbitrary JSON as a Widget apply configuration and
// holds the copy each build edits (deepCopyAC, whose conditions go through
// conditionac.Copy) to what it stands in for:
//
//   - it encodes as the original does, and equals it as the comparison has it;
//   - it shares no pointer, slice or map with the original: a mutator writing
//     through the copy cannot reach what the Applier remembers;
//   - its conditions equal the general reflective copy of each condition.
func FuzzDeepCopyAC(f *testing.F) {
	for _, seed := range []string{
		`{"status":{"conditions":[{"type":"A","status":"True","reason":"R","message":"m","observedGeneration":3,"lastTransitionTime":"2026-01-02T03:04:05Z"}]}}`,
		`{"status":{"conditions":[{"type":"A"},{"status":"False"},{}],"phase":"On"}}`,
		`{"status":{"conditions":[]}}`,
		`{"metadata":{"name":"w","labels":{"a":"b"},"ownerReferences":[{"name":"o"}],"finalizers":["f"]},"spec":{"size":3}}`,
		`{"status":{"plan":{"id":"p1"},"attributes":{"a":"b"}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		in := &acv1alpha1.WidgetApplyConfiguration{}
		if json.Unmarshal([]byte(raw), in) != nil {
			return
		}
		want, err := json.Marshal(in)
		if err != nil {
			return
		}
		out, ok := deepCopyAC(in).(*acv1alpha1.WidgetApplyConfiguration)
		if !ok {
			t.Fatalf("deepCopyAC returned %T", deepCopyAC(in))
		}
		got, err := json.Marshal(out)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("the copy of %s encodes as %s (%v)", want, got, err)
		}
		if !equalAC(in, out) {
			t.Fatalf("the copy of %s differs from it", want)
		}
		if p := sharedReference(reflect.ValueOf(in), reflect.ValueOf(out), "ac"); p != "" {
			t.Fatalf("the copy of %s shares %s with it", want, p)
		}
		if in.Status == nil || in.Status.Conditions == nil {
			return
		}
		general := make([]metav1ac.ConditionApplyConfiguration, len(in.Status.Conditions))
		for i := range in.Status.Conditions {
			general[i] = deepCopyValue(reflect.ValueOf(in.Status.Conditions[i])).Interface().(metav1ac.ConditionApplyConfiguration)
		}
		if !reflect.DeepEqual(out.Status.Conditions, general) {
			t.Fatalf("conditionac.Copy(%s) = %+v, the reflective copy %+v", want, out.Status.Conditions, general)
		}
	})
}

// sharedReference returns the path of a non-nil pointer, slice or map that a
// and b, values of one type, have in common below at, or "". Unexported
// fields (a time's location) are not followed.
func sharedReference(a, b reflect.Value, at string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return at
		}
		return sharedReference(a.Elem(), b.Elem(), at)
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Pointer() == b.Pointer() {
			return at
		}
		for i := range min(a.Len(), b.Len()) {
			if p := sharedReference(a.Index(i), b.Index(i), at+"[]"); p != "" {
				return p
			}
		}
	case reflect.Map:
		if !a.IsNil() && !b.IsNil() && a.Pointer() == b.Pointer() {
			return at
		}
		iter := a.MapRange()
		for iter.Next() {
			if bv := b.MapIndex(iter.Key()); bv.IsValid() {
				if p := sharedReference(iter.Value(), bv, at+"{}"); p != "" {
					return p
				}
			}
		}
	case reflect.Interface:
		if !a.IsNil() && !b.IsNil() && a.Elem().Type() == b.Elem().Type() {
			return sharedReference(a.Elem(), b.Elem(), at)
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				if p := sharedReference(a.Field(i), b.Field(i), at+"."+a.Type().Field(i).Name); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// TestSharedReferenceSeesAShallowCopy is FuzzDeepCopyAC's control: a copy
// of the struct alone, as a build would edit without deepCopyAC, and a deep
// copy whose conditions are the original's list, as a copy without
// conditionac.Copy' own allocation might be, both share with the original, and
// sharedReference says where.
func TestSharedReferenceSeesAShallowCopy(t *testing.T) {
	in := acv1alpha1.Widget("w", "ns").WithStatus(acv1alpha1.WidgetStatus().
		WithConditions(metav1ac.Condition().WithType("A").WithStatus("True")))
	shallow := *in
	if p := sharedReference(reflect.ValueOf(in), reflect.ValueOf(&shallow), "ac"); p == "" {
		t.Fatal("a shallow copy shares nothing, as sharedReference has it")
	}
	out, _ := deepCopyAC(in).(*acv1alpha1.WidgetApplyConfiguration)
	if p := sharedReference(reflect.ValueOf(in), reflect.ValueOf(out), "ac"); p != "" {
		t.Fatalf("deepCopyAC shares %q", p)
	}
	out.Status.Conditions = in.Status.Conditions
	if p := sharedReference(reflect.ValueOf(in), reflect.ValueOf(out), "ac"); p != "ac.Status.Conditions" {
		t.Fatalf("a copy sharing the conditions shares %q, want ac.Status.Conditions", p)
	}
}
