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
		// Found by FuzzSetCondition (testdata/fuzz/FuzzSetCondition/d635277031fa8778):
		// JSON carries each byte that is not UTF-8 as U+FFFD, three bytes.
		{"message not UTF-8, too long once encoded", metav1.Condition{Type: "Reachable", Status: metav1.ConditionTrue, Reason: "Up",
			Message: strings.Repeat("\xc3", 10923)}, "message", ltNone, 0},
		{"message not UTF-8 that fits once encoded", metav1.Condition{Type: "Reachable", Status: metav1.ConditionTrue, Reason: "Up",
			Message: strings.Repeat("\xc3", 10922)}, "", ltNow, 4},
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
			got := GetCondition(conds, tc.cond.Type)
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

// TestSetConditionKeepsWhatItHolds: setting a condition the list already
// holds as it is keeps the entry (no new values are made), and any field that
// differs replaces it. The control is a shortcut that trusted the type alone:
// every case but the first would keep a stale field.
func TestSetConditionKeepsWhatItHolds(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	base := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "m", ObservedGeneration: 2, LastTransitionTime: at}
	for _, tc := range []struct {
		name   string
		change func(*metav1.Condition)
		kept   bool
	}{
		{"the same condition", func(*metav1.Condition) {}, true},
		{"the same time in another second fraction and zone", func(c *metav1.Condition) {
			c.LastTransitionTime = metav1.NewTime(at.Add(400 * time.Millisecond).In(time.FixedZone("x", 3600)))
		}, true},
		{"status", func(c *metav1.Condition) { c.Status = metav1.ConditionFalse }, false},
		{"reason", func(c *metav1.Condition) { c.Reason = "Down" }, false},
		{"message", func(c *metav1.Condition) { c.Message = "n" }, false},
		{"observedGeneration", func(c *metav1.Condition) { c.ObservedGeneration = 3 }, false},
		{"lastTransitionTime", func(c *metav1.Condition) { c.LastTransitionTime = metav1.NewTime(at.Add(time.Second)) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conds []metav1ac.ConditionApplyConfiguration
			if err := SetCondition(&conds, nil, 1, base); err != nil {
				t.Fatal(err)
			}
			before := conds[0].Reason
			next := base
			tc.change(&next)
			if err := SetCondition(&conds, nil, 1, next); err != nil {
				t.Fatal(err)
			}
			if kept := conds[0].Reason == before; kept != tc.kept {
				t.Fatalf("entry kept = %v, want %v", kept, tc.kept)
			}
			if len(conds) != 1 || *conds[0].Status != next.Status || *conds[0].Reason != next.Reason || *conds[0].Message != next.Message ||
				*conds[0].ObservedGeneration != next.ObservedGeneration || conds[0].LastTransitionTime.Unix() != next.LastTransitionTime.Unix() {
				t.Fatalf("conditions %+v, want exactly %+v", conds, next)
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
}

// SetCondition keeps lastTransitionTime from the observed condition of the
// same type and status, else sets now.
func TestSetConditionKeepsTransitionTime(t *testing.T) {
	t1 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t2 := metav1.NewTime(time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC))
	ready := func(st metav1.ConditionStatus, at metav1.Time) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: st, LastTransitionTime: at}
	}
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "R"}
	for _, tc := range []struct {
		name     string
		observed []metav1.Condition
		want     metav1.Time // zero: now
	}{
		{"none observed", nil, metav1.Time{}},
		{"same status", []metav1.Condition{ready(metav1.ConditionTrue, t1)}, t1},
		{"other status", []metav1.Condition{ready(metav1.ConditionFalse, t1)}, metav1.Time{}},
		{"no time observed", []metav1.Condition{ready(metav1.ConditionTrue, metav1.Time{})}, metav1.Time{}},
		{"the last of a repeated type", []metav1.Condition{ready(metav1.ConditionTrue, t1), ready(metav1.ConditionTrue, t2)}, t2},
		{"the last with the status", []metav1.Condition{ready(metav1.ConditionTrue, t1), ready(metav1.ConditionFalse, t2)}, t1},
		{"the last with a time", []metav1.Condition{ready(metav1.ConditionTrue, t1), ready(metav1.ConditionTrue, metav1.Time{})}, t1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notBefore := time.Now().Truncate(time.Second)
			var conds []metav1ac.ConditionApplyConfiguration
			if err := SetCondition(&conds, tc.observed, 1, cond); err != nil {
				t.Fatal(err)
			}
			got := *conds[0].LastTransitionTime
			if !tc.want.IsZero() {
				if !got.Equal(&tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				return
			}
			if got.Before(&metav1.Time{Time: notBefore}) || got.After(time.Now()) || got.Nanosecond() != 0 {
				t.Fatalf("got %v, want now in whole seconds", got)
			}
		})
	}
}
