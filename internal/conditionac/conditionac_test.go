package conditionac

import (
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// Copy copies the fields it knows; a field client-go adds to
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
		t.Fatalf("ConditionApplyConfiguration has fields %v; Copy, Equal and View know %v: update them", names, want)
	}
}

func TestCopyConditions(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	full := *metav1ac.Condition().WithType("A").WithStatus("True").WithReason("Up").WithMessage("m").
		WithLastTransitionTime(at).WithObservedGeneration(2)
	partial := *metav1ac.Condition().WithType("B").WithStatus("False") // what a forced takeover can leave owned
	in := []metav1ac.ConditionApplyConfiguration{full, partial}

	out := Copy(in)
	if !EqualAll(out, in) {
		t.Fatalf("copy %v differs from %v", out, in)
	}
	if out[1].Reason != nil || out[1].LastTransitionTime != nil {
		t.Fatalf("unset fields must stay unset: %+v", out[1])
	}
	if Copy(nil) != nil {
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
			if got := EqualAll(base(), tt.other); got != tt.want {
				t.Errorf("EqualAll = %v, want %v", got, tt.want)
			}
		})
	}
	if !EqualAll(nil, nil) || EqualAll(nil, []metav1ac.ConditionApplyConfiguration{}) {
		t.Error("nil lists: absent equals absent, and not an empty list")
	}
}

// Index compares types as strings, its shortcuts aside.
func TestIndexComparesTypes(t *testing.T) {
	for _, c := range [][2]string{
		{"", ""}, {"", "A"}, {"A", "A"}, {"A", "B"}, {"Ready", "Ready"}, {"Ready", "Available"},
		{"C01", "C02"}, {"C01", "D01"}, {"NodeReady", "DiskReady"}, {"NodeReady", "NodeReady"}, {"ab", "ba"},
	} {
		conds := []metav1ac.ConditionApplyConfiguration{{}, {Type: &c[0]}}
		if got, want := Index(conds, c[1]) == 1, c[0] == c[1]; got != want {
			t.Errorf("Index([%q], %q) found: %v, want %v", c[0], c[1], got, want)
		}
	}
}

// View, and so Of, Holds and Same, state a condition as metav1.Condition
// encodes: observedGeneration 0 is left out. The control, a 0 stated, is what
// an Edit's typed build would then claim and the editor, which reads the
// object's JSON, would not (FuzzTypedEditsAgreeWithTheEditor in batcher fails
// with it).
func TestConditionAsItEncodes(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cond := func(gen int64) metav1.Condition {
		return metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "Up", ObservedGeneration: gen, LastTransitionTime: at}
	}
	stated := func(gen int64) *metav1ac.ConditionApplyConfiguration {
		return metav1ac.Condition().WithType("A").WithStatus(metav1.ConditionTrue).WithReason("Up").WithMessage("").
			WithObservedGeneration(gen).WithLastTransitionTime(at)
	}
	omitted := stated(0)
	omitted.ObservedGeneration = nil
	for name, tc := range map[string]struct {
		cond metav1.Condition
		ac   *metav1ac.ConditionApplyConfiguration
		want bool
	}{
		"a generation":                             {cond(2), stated(2), true},
		"another generation":                       {cond(2), stated(3), false},
		"generation 0, left out":                   {cond(0), omitted, true},
		"control: generation 0 stated":             {cond(0), stated(0), false},
		"a generation, not left out":               {cond(2), omitted, false},
		"the same second":                          {cond(2), stated(2).WithLastTransitionTime(metav1.NewTime(at.Add(999 * time.Millisecond))), true},
		"another second":                           {cond(2), stated(2).WithLastTransitionTime(metav1.NewTime(at.Add(time.Second))), false},
		"an empty message is stated, not left out": {cond(2), func() *metav1ac.ConditionApplyConfiguration { c := stated(2); c.Message = nil; return c }(), false},
		"no type stated":                           {cond(2), func() *metav1ac.ConditionApplyConfiguration { c := stated(2); c.Type = nil; return c }(), false},
		"no status stated":                         {cond(2), func() *metav1ac.ConditionApplyConfiguration { c := stated(2); c.Status = nil; return c }(), false},
		"no reason stated":                         {cond(2), func() *metav1ac.ConditionApplyConfiguration { c := stated(2); c.Reason = nil; return c }(), false},
		"no time stated":                           {cond(2), func() *metav1ac.ConditionApplyConfiguration { c := stated(2); c.LastTransitionTime = nil; return c }(), false},
		"another reason":                           {cond(2), stated(2).WithReason("Down"), false},
		"another status":                           {cond(2), stated(2).WithStatus(metav1.ConditionFalse), false},
		"another message":                          {cond(2), stated(2).WithMessage("m"), false},
	} {
		t.Run(name, func(t *testing.T) {
			c := tc.cond
			if got := Holds(tc.ac, &c); got != tc.want {
				t.Errorf("Holds = %v, want %v", got, tc.want)
			}
			of := Of(c)
			if got := Equal(&of, tc.ac); got != tc.want {
				t.Errorf("Equal(Of(cond), ac) = %v, want %v", got, tc.want)
			}
		})
	}
	// Same compares two conditions by the same rule.
	a, b := cond(0), cond(0)
	b.LastTransitionTime = metav1.NewTime(at.Add(500 * time.Millisecond))
	if !Same(&a, &b) {
		t.Error("Same: conditions a fraction of a second apart encode alike")
	}
	var zero metav1.Condition
	if Same(&zero, &metav1.Condition{LastTransitionTime: metav1.NewTime(time.Unix(0, 0))}) || !Same(&zero, &metav1.Condition{}) {
		t.Error("Same: a zero time (null) equals only a zero time")
	}
}

// Of copies a condition in one allocation, and Holds compares without one.
func TestOfAndHoldsAllocations(t *testing.T) {
	c := metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "Up", ObservedGeneration: 1, LastTransitionTime: metav1.Now()}
	var ac metav1ac.ConditionApplyConfiguration
	if n := testing.AllocsPerRun(100, func() { ac = Of(c) }); n != 1 {
		t.Errorf("Of: %v allocations, want 1", n)
	}
	*ac.Reason = "Down"
	if c.Reason != "Up" {
		t.Fatal("Of shares its values with the condition")
	}
	if n := testing.AllocsPerRun(100, func() { _ = Holds(&ac, &c) }); n != 0 {
		t.Errorf("Holds: %v allocations, want 0", n)
	}
}
