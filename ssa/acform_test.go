package ssa

import (
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

func sampleAC(at time.Time) *acv1alpha1.WidgetApplyConfiguration {
	return acv1alpha1.Widget("w", "ns").WithUID("u1").WithLabels(map[string]string{"app": "x"}).
		WithStatus(acv1alpha1.WidgetStatus().WithPhase("Running").WithConditions(
			metav1ac.Condition().WithType("A").WithStatus("True").WithReason("Up").WithMessage("m").
				WithLastTransitionTime(metav1.NewTime(at)).WithObservedGeneration(2)))
}

func TestDeepCopyACIsIndependent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	orig := sampleAC(at)
	cp, ok := deepCopyAC(orig).(*acv1alpha1.WidgetApplyConfiguration)
	if !ok || !equalAC(cp, orig) {
		t.Fatalf("the copy differs from the original")
	}
	*cp.Status.Conditions[0].Status = "False"
	cp.Labels["app"] = "y"
	*cp.Status.Phase = "Done"
	*cp.Name = "other" // in the embedded *ObjectMetaApplyConfiguration
	*cp.Kind = "Other" // in the embedded TypeMetaApplyConfiguration value
	if *orig.Status.Conditions[0].Status != "True" || orig.Labels["app"] != "x" || *orig.Status.Phase != "Running" ||
		*orig.Name != "w" || *orig.Kind != "Widget" {
		t.Fatal("changing the copy changed the original")
	}
}

func TestEqualAC(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	base := sampleAC(at)
	tests := []struct {
		name  string
		other *acv1alpha1.WidgetApplyConfiguration
		want  bool
	}{
		{"the same values", sampleAC(at), true},
		{"a time in the same second, in another zone (it encodes the same)", sampleAC(at.Add(300 * time.Millisecond).In(time.FixedZone("x", 3600))), true},
		{"a time a second later", sampleAC(at.Add(time.Second)), false},
		{"a condition's status", func() *acv1alpha1.WidgetApplyConfiguration {
			ac := sampleAC(at)
			*ac.Status.Conditions[0].Status = "False"
			return ac
		}(), false},
		{"a label", sampleAC(at).WithLabels(map[string]string{"app": "y"}), false},
		{"an extra condition", func() *acv1alpha1.WidgetApplyConfiguration {
			ac := sampleAC(at)
			ac.Status.WithConditions(metav1ac.Condition().WithType("B"))
			return ac
		}(), false},
		{"no status", acv1alpha1.Widget("w", "ns").WithUID("u1").WithLabels(map[string]string{"app": "x"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := equalAC(base, tt.other); got != tt.want {
				t.Errorf("equalAC = %v, want %v", got, tt.want)
			}
		})
	}
}

// copyConditions copies the fields it knows; a field client-go adds to
// ConditionApplyConfiguration would be dropped from every copy, so the set
// of fields is pinned here.
func TestCopyConditionsKnowsEveryField(t *testing.T) {
	var names []string
	typ := reflect.TypeFor[metav1ac.ConditionApplyConfiguration]()
	for i := range typ.NumField() {
		names = append(names, typ.Field(i).Name)
	}
	want := []string{"Type", "Status", "ObservedGeneration", "LastTransitionTime", "Reason", "Message"}
	if !slices.Equal(names, want) {
		t.Fatalf("ConditionApplyConfiguration has fields %v; copyConditions, equalConditions and conditionAC know %v: update them", names, want)
	}
}

func TestCopyConditions(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	full := *metav1ac.Condition().WithType("A").WithStatus("True").WithReason("Up").WithMessage("m").
		WithLastTransitionTime(at).WithObservedGeneration(2)
	partial := *metav1ac.Condition().WithType("B").WithStatus("False") // what a forced takeover can leave owned
	in := []metav1ac.ConditionApplyConfiguration{full, partial}

	out := copyConditions(in)
	if !equalAC(&out, &in) {
		t.Fatalf("copy %v differs from %v", out, in)
	}
	if out[1].Reason != nil || out[1].LastTransitionTime != nil {
		t.Fatalf("unset fields must stay unset: %+v", out[1])
	}
	if copyConditions(nil) != nil {
		t.Fatal("a nil list must stay nil (it encodes as absent, not [])")
	}
	// Writing through every pointer of the copy leaves the original alone.
	*out[0].Type, *out[0].Status, *out[0].Reason, *out[0].Message = "X", "False", "Down", "n"
	*out[0].ObservedGeneration, *out[0].LastTransitionTime = 3, metav1.Now()
	if *in[0].Type != "A" || *in[0].Status != "True" || *in[0].Reason != "Up" || *in[0].Message != "m" ||
		*in[0].ObservedGeneration != 2 || !in[0].LastTransitionTime.Equal(&at) {
		t.Fatalf("writing through the copy changed the original: %+v", in[0])
	}

	// The control: a copy that shares the pointers (the slice copied, not
	// what it points to) lets a mutator change the remembered original.
	shallow := slices.Clone(in)
	*shallow[1].Status = "True"
	if *in[1].Status != "True" {
		t.Fatal("the control should have changed the original")
	}
}

func TestEqualConditions(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	base := func() []metav1ac.ConditionApplyConfiguration {
		return []metav1ac.ConditionApplyConfiguration{*metav1ac.Condition().WithType("A").WithStatus("True").
			WithReason("Up").WithMessage("m").WithLastTransitionTime(at).WithObservedGeneration(2)}
	}
	edit := func(f func(c *metav1ac.ConditionApplyConfiguration)) []metav1ac.ConditionApplyConfiguration {
		c := base()
		f(&c[0])
		return c
	}
	tests := []struct {
		name  string
		other []metav1ac.ConditionApplyConfiguration
		want  bool
	}{
		{"equal", base(), true},
		{"the same second", edit(func(c *metav1ac.ConditionApplyConfiguration) {
			c.WithLastTransitionTime(metav1.NewTime(at.Add(999 * time.Millisecond)))
		}), true},
		{"type", edit(func(c *metav1ac.ConditionApplyConfiguration) { c.WithType("B") }), false},
		{"status", edit(func(c *metav1ac.ConditionApplyConfiguration) { c.WithStatus("False") }), false},
		{"reason", edit(func(c *metav1ac.ConditionApplyConfiguration) { c.WithReason("Down") }), false},
		{"message", edit(func(c *metav1ac.ConditionApplyConfiguration) { c.WithMessage("n") }), false},
		{"observedGeneration", edit(func(c *metav1ac.ConditionApplyConfiguration) { c.WithObservedGeneration(3) }), false},
		{"lastTransitionTime", edit(func(c *metav1ac.ConditionApplyConfiguration) {
			c.WithLastTransitionTime(metav1.NewTime(at.Add(time.Second)))
		}), false},
		{"a field left out", edit(func(c *metav1ac.ConditionApplyConfiguration) { c.Message = nil }), false},
		{"no time", edit(func(c *metav1ac.ConditionApplyConfiguration) { c.LastTransitionTime = nil }), false},
		{"another length", append(base(), base()...), false},
		{"empty, not absent", []metav1ac.ConditionApplyConfiguration{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := equalConditions(base(), tt.other); got != tt.want {
				t.Errorf("equalConditions = %v, want %v", got, tt.want)
			}
		})
	}
	if !equalConditions(nil, nil) || equalConditions(nil, []metav1ac.ConditionApplyConfiguration{}) {
		t.Error("nil lists: absent equals absent, and not an empty list")
	}
}
