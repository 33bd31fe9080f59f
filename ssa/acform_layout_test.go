package ssa

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// Apply configuration shapes the typed path must tell apart.
type (
	noMetaAC struct{ Name *string }
	// conditionsElsewhereAC embeds object metadata but keeps its conditions
	// in a promoted field, a non-pointer status, or a status of another type.
	promotedConditions struct {
		Conditions []metav1ac.ConditionApplyConfiguration
	}
	promotedStatus struct{ promotedConditions }
	promotedAC     struct {
		*metav1ac.ObjectMetaApplyConfiguration
		Status *promotedStatus
	}
	valueStatusAC struct {
		*metav1ac.ObjectMetaApplyConfiguration
		Status struct {
			Conditions []metav1ac.ConditionApplyConfiguration
		}
	}
	stringStatusAC struct {
		*metav1ac.ObjectMetaApplyConfiguration
		Status *string
	}
	namedMetaAC struct {
		Meta *metav1ac.ObjectMetaApplyConfiguration
	}
)

func TestLayouts(t *testing.T) {
	widgetType := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	metaField, _ := widgetType.Elem().FieldByName("ObjectMetaApplyConfiguration")
	statusField, _ := widgetType.Elem().FieldByName("Status")
	condField, _ := statusField.Type.Elem().FieldByName("Conditions")
	for _, tc := range []struct {
		name           string
		typ            reflect.Type
		ok             bool
		meta, conds    []int
		wantConditions bool
	}{
		{"a generated apply configuration", widgetType, true, metaField.Index, []int{statusField.Index[0], condField.Index[0]}, true},
		{"client-go's Pod: conditions of another type", reflect.TypeFor[*corev1ac.PodApplyConfiguration](), true, []int{1}, nil, false},
		{"conditions promoted from an embedded struct", reflect.TypeFor[*promotedAC](), true, []int{0}, nil, false},
		{"a status that is not a pointer", reflect.TypeFor[*valueStatusAC](), true, []int{0}, nil, false},
		{"a status that is not a struct", reflect.TypeFor[*stringStatusAC](), true, []int{0}, nil, false},
		{"not a pointer", widgetType.Elem(), false, nil, nil, false},
		{"a pointer to a string", reflect.TypeFor[*string](), false, nil, nil, false},
		{"no object metadata", reflect.TypeFor[*noMetaAC](), false, nil, nil, false},
		{"object metadata in a named field", reflect.TypeFor[*namedMetaAC](), false, nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l layouts
			for range 2 { // the second answer comes from the cache
				lay, ok := l.of(tc.typ)
				if ok != tc.ok || !reflect.DeepEqual(lay.meta, tc.meta) || !reflect.DeepEqual(lay.conditions, tc.conds) {
					t.Fatalf("of = %+v, %v; want meta %v, conditions %v, %v", lay, ok, tc.meta, tc.conds, tc.ok)
				}
			}
		})
	}
}

func TestLayoutAccessors(t *testing.T) {
	var l layouts
	lay, _ := l.of(reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]())
	ac := &acv1alpha1.WidgetApplyConfiguration{}
	if m := lay.objectMeta(ac, false); m != nil {
		t.Fatalf("objectMeta without create allocated %v", m)
	}
	lay.setUID(ac, "")
	if ac.ObjectMetaApplyConfiguration != nil {
		t.Fatal("an empty uid allocated object metadata")
	}
	lay.setUID(ac, "u1")
	if ac.ObjectMetaApplyConfiguration == nil || ac.UID == nil || *ac.UID != "u1" {
		t.Fatalf("setUID: metadata %+v", ac.ObjectMetaApplyConfiguration)
	}
	if m := lay.objectMeta(ac, false); m != ac.ObjectMetaApplyConfiguration {
		t.Fatal("objectMeta does not return the metadata in place")
	}
	if _, has := lay.statusConditions(ac); has {
		t.Fatal("conditions found without a status")
	}
	ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase("On"))
	if _, has := lay.statusConditions(ac); has {
		t.Fatal("conditions found in a status without conditions")
	}
	ac.Status.WithConditions(metav1ac.Condition().WithType("A"), metav1ac.Condition().WithType("B"))
	conds, has := lay.statusConditions(ac)
	if !has || len(conds) != 2 || *conds[1].Type != "B" {
		t.Fatalf("statusConditions = %v, %v", conds, has)
	}
	pod, _ := l.of(reflect.TypeFor[*corev1ac.PodApplyConfiguration]())
	podAC := corev1ac.Pod("p", "ns").WithStatus(corev1ac.PodStatus().WithConditions(corev1ac.PodCondition().WithType("Ready")))
	if _, has := pod.statusConditions(podAC); has {
		t.Fatal("Pod conditions taken for metav1 conditions")
	}
}

func TestCheckIdentity(t *testing.T) {
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	target := Target{GVK: gvk, Namespace: "ns", Name: "w1", Subresource: StatusSubresource, Manager: "m"}
	for _, tc := range []struct {
		name string
		ac   any
		want string // "" when it names the object
	}{
		{"the object", acv1alpha1.Widget("w1", "ns"), ""},
		{"another name", acv1alpha1.Widget("w2", "ns"), "names Widget ns/w2, not the object"},
		{"another namespace", acv1alpha1.Widget("w1", "other"), "names Widget other/w1, not the object"},
		{"another kind", acv1alpha1.Widget("w1", "ns").WithKind("Gadget"), "names Gadget ns/w1, not the object"},
		{"another version", acv1alpha1.Widget("w1", "ns").WithAPIVersion("demo.statusapply.io/v2"), "names Widget ns/w1, not the object"},
		{"an unparsable apiVersion", acv1alpha1.Widget("w1", "ns").WithAPIVersion("a/b/c"), "the apply configuration's apiVersion: unexpected GroupVersion string: a/b/c"},
		{"no identity at all", &noMetaAC{}, "*ssa.noMetaAC does not name its object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkIdentity(target, tc.ac)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidInput saying %q", err, tc.want)
			}
		})
	}
}

func TestWithIdentityAndNewACFrom(t *testing.T) {
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	md := map[string]any{"labels": map[string]any{"a": "b"}}
	content := map[string]any{"metadata": md, "status": map[string]any{"phase": "On"}}
	namespaced := withIdentity(Target{GVK: gvk, Namespace: "ns", Name: "w1"}, content)
	want := map[string]any{
		"apiVersion": gvk.GroupVersion().String(), "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "ns", "labels": map[string]any{"a": "b"}},
		"status":   map[string]any{"phase": "On"},
	}
	if !reflect.DeepEqual(namespaced, want) {
		t.Fatalf("withIdentity = %v, want %v", namespaced, want)
	}
	if len(content) != 2 || len(md) != 1 {
		t.Fatalf("withIdentity changed its input: %v", content)
	}
	cluster := withIdentity(Target{GVK: gvk, Name: "w1"}, nil)
	if _, has := cluster["metadata"].(map[string]any)["namespace"]; has || cluster["kind"] != "Widget" {
		t.Fatalf("a cluster-scoped identity: %v", cluster)
	}

	typ := reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]()
	ac, err := newACFrom(typ, nil, namespaced)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := ac.(*acv1alpha1.WidgetApplyConfiguration)
	if body, _ := json.Marshal(w); string(body) != `{"kind":"Widget","apiVersion":"demo.statusapply.io/v1alpha1","metadata":{"name":"w1","namespace":"ns","labels":{"a":"b"}},"status":{"phase":"On"}}` {
		t.Fatalf("newACFrom = %s", body)
	}
	_, err = newACFrom(typ, nil, map[string]any{"status": "not an object"})
	if err == nil || !strings.Contains(err.Error(), "converting to *v1alpha1.WidgetApplyConfiguration") {
		t.Fatalf("error %v, want one naming the type", err)
	}
}

// scalars has a field of every kind equalValue compares by value.
type scalars struct {
	B      bool
	I      int32
	U      uint16
	F      float64
	S      string
	P      *int
	L      []int
	M      map[string]int
	X      any
	hidden int
}

func TestEqualValueByKind(t *testing.T) {
	one := 1
	base := func() scalars {
		return scalars{B: true, I: -3, U: 7, F: 1.5, S: "s", P: &one, L: []int{1, 2}, M: map[string]int{"a": 1}, X: "x"}
	}
	for _, tc := range []struct {
		name   string
		change func(*scalars)
		want   bool
	}{
		{"the same values", func(*scalars) {}, true},
		{"an equal pointee at another address", func(s *scalars) { two := 1; s.P = &two }, true},
		{"a bool", func(s *scalars) { s.B = false }, false},
		{"an int", func(s *scalars) { s.I = 3 }, false},
		{"a uint", func(s *scalars) { s.U = 8 }, false},
		{"a float", func(s *scalars) { s.F = 1.25 }, false},
		{"a string", func(s *scalars) { s.S = "t" }, false},
		{"a nil pointer", func(s *scalars) { s.P = nil }, false},
		{"a slice item", func(s *scalars) { s.L[1] = 3 }, false},
		{"a shorter slice", func(s *scalars) { s.L = s.L[:1] }, false},
		{"a nil slice", func(s *scalars) { s.L = nil }, false},
		{"a map value", func(s *scalars) { s.M["a"] = 2 }, false},
		{"another map key", func(s *scalars) { s.M = map[string]int{"b": 1} }, false},
		{"a nil map", func(s *scalars) { s.M = nil }, false},
		{"an interface of another type", func(s *scalars) { s.X = 1 }, false},
		{"an interface of the same type, another value", func(s *scalars) { s.X = "y" }, false},
		{"a nil interface", func(s *scalars) { s.X = nil }, false},
		{"an unexported field", func(s *scalars) { s.hidden = 1 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.change(&b)
			if got := equalAC(&a, &b); got != tc.want {
				t.Fatalf("equalAC = %v, want %v", got, tc.want)
			}
			if got := equalAC(&b, &a); got != tc.want {
				t.Fatalf("equalAC the other way round = %v, want %v", got, tc.want)
			}
		})
	}
	if equalAC(&scalars{}, &noMetaAC{}) {
		t.Fatal("values of two types compared equal")
	}
	if !equalAC(&scalars{}, &scalars{}) {
		t.Fatal("two zero values differ")
	}
}

func TestDeepCopyValueByKind(t *testing.T) {
	one := 1
	orig := &scalars{B: true, P: &one, L: []int{1}, M: map[string]int{"a": 1}, X: map[string]int{"k": 1}, hidden: 4}
	cp, ok := deepCopyAC(orig).(*scalars)
	if !ok || !reflect.DeepEqual(cp, orig) {
		t.Fatalf("copy %+v differs from %+v", cp, orig)
	}
	*cp.P, cp.L[0], cp.M["a"] = 2, 2, 2
	cp.X.(map[string]int)["k"] = 2
	if *orig.P != 1 || orig.L[0] != 1 || orig.M["a"] != 1 || orig.X.(map[string]int)["k"] != 1 {
		t.Fatalf("changing the copy changed the original: %+v", orig)
	}
	empty, _ := deepCopyAC(&scalars{}).(*scalars)
	if empty.P != nil || empty.L != nil || empty.M != nil || empty.X != nil {
		t.Fatalf("nil values copied as %+v", empty)
	}
	var nilAC *scalars
	if got, _ := deepCopyAC(nilAC).(*scalars); got != nil {
		t.Fatal("a nil pointer copied as non-nil")
	}
}
