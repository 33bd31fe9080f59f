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
