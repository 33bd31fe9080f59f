package ssa

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

func TestConditionFromObservedGeneration(t *testing.T) {
	for _, tc := range []struct {
		value   any
		want    int64
		invalid bool
	}{
		{nil, 0, false}, // condition() leaves the field out
		{int64(7), 7, false},
		{int(8), 8, false},
		{int32(9), 9, false},
		{float64(1 << 62), 1 << 62, false},
		{-2.0, -2, false}, // an integer: ValidateCondition refuses it for its sign
		{2.5, 0, true},
		{float64(1 << 63), 0, true}, // one past MaxInt64: no int64 holds it
		{-1e19, 0, true},
		{float64(math.MinInt64), math.MinInt64, false},
		{"3", 0, true},
	} {
		t.Run(fmt.Sprintf("%T %v", tc.value, tc.value), func(t *testing.T) {
			cond, errs := conditionFrom(condition("Ready", map[string]any{"observedGeneration": tc.value}))
			if cond.ObservedGeneration != tc.want {
				t.Fatalf("observedGeneration %d, want %d", cond.ObservedGeneration, tc.want)
			}
			invalid := len(errs) == 1 && errs[0].Field == "status.conditions[Ready].observedGeneration" && strings.Contains(errs[0].Error(), "must be an integer")
			if invalid != tc.invalid || (!tc.invalid && len(errs) > 0) {
				t.Fatalf("errors %v, want invalid %v", errs, tc.invalid)
			}
		})
	}
}

func TestConditionFromAC(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	full := metav1ac.Condition().WithType("Ready").WithStatus(metav1.ConditionTrue).WithReason("Up").
		WithMessage("").WithLastTransitionTime(at).WithObservedGeneration(4)
	cond, errs := conditionFromAC(full)
	want := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: at, ObservedGeneration: 4}
	if len(errs) != 0 || cond != want {
		t.Fatalf("conditionFromAC = %+v, %v; want %+v", cond, errs, want)
	}
	cond, errs = conditionFromAC(metav1ac.Condition().WithType("Ready"))
	if !cond.LastTransitionTime.IsZero() || len(errs) != 1 || errs[0].Field != "status.conditions[Ready].message" {
		t.Fatalf("a condition without message or time: %+v, %v", cond, errs)
	}
}

func TestValidNamesKnowsOnlyWhatPassed(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	good := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: at, Message: strings.Repeat("m", maxConditionMessage)}
	var v validNames
	if v.known(good) {
		t.Fatal("known before any check")
	}
	if err := v.check(good, nil); err != nil {
		t.Fatal(err)
	}
	if !v.known(good) {
		t.Fatal("a condition that passed (generation 0, the longest message) is not known")
	}
	for name, change := range map[string]func(*metav1.Condition){
		"status Maybe":            func(c *metav1.Condition) { c.Status = "Maybe" },
		"no lastTransitionTime":   func(c *metav1.Condition) { c.LastTransitionTime = metav1.Time{} },
		"a negative generation":   func(c *metav1.Condition) { c.ObservedGeneration = -1 },
		"a message one too long":  func(c *metav1.Condition) { c.Message += "m" },
		"another type":            func(c *metav1.Condition) { c.Type = "Synced" },
		"another reason":          func(c *metav1.Condition) { c.Reason = "Down" },
		"status False, same rest": nil,
	} {
		c := good
		if change == nil {
			c.Status = metav1.ConditionFalse
			if !v.known(c) {
				t.Errorf("%s: not known", name)
			}
			continue
		}
		change(&c)
		if v.known(c) {
			t.Errorf("%s: known", name)
		}
	}
	if err := v.check(metav1.Condition{Type: "bad type!", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: at}, nil); err == nil {
		t.Fatal("a bad type passed")
	}
	if _, remembered := v.names["t:bad type!"]; remembered || len(v.names) != 2 {
		t.Fatalf("names after a failed check: %v", v.names)
	}
	var nilMemo *validNames
	if err := nilMemo.check(good, nil); err != nil {
		t.Fatalf("a nil memo: %v", err)
	}
}

func TestValidNamesIsBounded(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cond := func(i int) metav1.Condition {
		return metav1.Condition{Type: fmt.Sprintf("T%d", i), Status: metav1.ConditionTrue, Reason: fmt.Sprintf("R%d", i), LastTransitionTime: at}
	}
	var v validNames
	for i := 0; len(v.names) < maxValidNames-1; i++ {
		v.names = nilSafe(v.names)
		v.names[fmt.Sprintf("x:%d", i)] = struct{}{}
	}
	// One below the bound: a condition's two names would cross it.
	v.remember(cond(1))
	if len(v.names) != maxValidNames-1 || v.known(cond(1)) {
		t.Fatalf("%d names after remembering past the bound", len(v.names))
	}
	delete(v.names, "x:0")
	v.remember(cond(2))
	if len(v.names) != maxValidNames || !v.known(cond(2)) {
		t.Fatalf("%d names, known %v: the last two names within the bound were not remembered", len(v.names), v.known(cond(2)))
	}
}

func nilSafe(m map[string]struct{}) map[string]struct{} {
	if m == nil {
		return map[string]struct{}{}
	}
	return m
}
