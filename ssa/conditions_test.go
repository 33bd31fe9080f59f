package ssa

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

func TestSetCondition(t *testing.T) {
	earlier := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	given := metav1.NewTime(time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC))
	observed := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: earlier}}
	// What lastTransitionTime the condition must carry.
	const (
		ltKept  = "kept"  // the observed condition's
		ltNow   = "now"   // the time of the call, in whole seconds
		ltGiven = "given" // the one cond gives
		ltNone  = ""      // refused: no condition
	)
	for _, tc := range []struct {
		name    string
		cond    metav1.Condition
		wantErr string
		wantLTT string
		wantGen int64
	}{
		{"same status keeps lastTransitionTime", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "StillUp"}, "", ltKept, 4},
		{"changed status moves it", metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Down"}, "", ltNow, 4},
		{"new type sets it", metav1.Condition{Type: "Reachable", Status: metav1.ConditionTrue, Reason: "Routed"}, "", ltNow, 4},
		{"given lastTransitionTime wins", metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Down", LastTransitionTime: given}, "", ltGiven, 4},
		{"given observedGeneration wins", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", ObservedGeneration: 2}, "", ltKept, 2},
		{"empty type", metav1.Condition{Status: metav1.ConditionTrue, Reason: "Up"}, "type", ltNone, 0},
		{"bad type", metav1.Condition{Type: "not ok!", Status: metav1.ConditionTrue, Reason: "Up"}, "type", ltNone, 0},
		{"unknown status", metav1.Condition{Type: "Ready", Status: "Maybe", Reason: "Up"}, "status", ltNone, 0},
		{"empty reason", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue}, "reason", ltNone, 0},
		{"bad reason", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "has spaces"}, "reason", ltNone, 0},
		// Found with FuzzSetCondition's oracle: metav1.Time prints a year
		// past 9999 with five digits, which the API server refuses.
		{"lastTransitionTime past year 9999", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up",
			LastTransitionTime: metav1.NewTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}, "lastTransitionTime", ltNone, 0},
		{"message too long", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: strings.Repeat("x", 32769)}, "message", ltNone, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds := []metav1ac.ConditionApplyConfiguration{*metav1ac.Condition().WithType("Other").WithStatus(metav1.ConditionTrue)}
			// lastTransitionTime has a resolution of one second: "now" is
			// a whole second from the one the call began in to the one it
			// ended in.
			notBefore := time.Now().Truncate(time.Second)
			err := SetCondition(&conds, observed, 4, tc.cond)
			notAfter := time.Now()
			if tc.wantErr != "" {
				if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want ErrInvalidInput about %s", err, tc.wantErr)
				}
				if len(conds) != 1 {
					t.Fatalf("a refused condition was added: %v", conds)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := FindCondition(conds, tc.cond.Type)
			if got == nil || len(conds) != 2 {
				t.Fatalf("conditions %v, want Other and %s", conds, tc.cond.Type)
			}
			if got.LastTransitionTime == nil {
				t.Fatal("no lastTransitionTime")
			}
			ltt := got.LastTransitionTime.Time
			switch tc.wantLTT {
			case ltKept:
				if !ltt.Equal(earlier.Time) {
					t.Fatalf("lastTransitionTime %v, want the observed %v", ltt, earlier)
				}
			case ltGiven:
				if !ltt.Equal(given.Time) {
					t.Fatalf("lastTransitionTime %v, want the given %v", ltt, given)
				}
			case ltNow:
				if ltt.Before(notBefore) || ltt.After(notAfter) || !ltt.Equal(ltt.Truncate(time.Second)) {
					t.Fatalf("lastTransitionTime %v, want a whole second from %v to %v", ltt, notBefore, notAfter)
				}
			default:
				t.Fatalf("bad case: wantLTT %q", tc.wantLTT)
			}
			if *got.ObservedGeneration != tc.wantGen {
				t.Fatalf("observedGeneration %d, want %d", *got.ObservedGeneration, tc.wantGen)
			}
		})
	}
}

func TestSetConditionReplacesByType(t *testing.T) {
	var conds []metav1ac.ConditionApplyConfiguration
	for _, st := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionTrue} {
		if err := SetCondition(&conds, nil, 1, metav1.Condition{Type: "Ready", Status: st, Reason: "R"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(conds) != 1 || *conds[0].Status != metav1.ConditionTrue {
		t.Fatalf("conditions %v, want one Ready=True", conds)
	}
	if !RemoveCondition(&conds, "Ready") || len(conds) != 0 || RemoveCondition(&conds, "Ready") {
		t.Fatalf("RemoveCondition did not remove exactly once: %v", conds)
	}
}
