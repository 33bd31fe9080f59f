package ssa

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func plainCondition() metav1.Condition {
	return metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "all good",
		ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
}

func TestPlainlyValid(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*metav1.Condition)
		plain bool
	}{
		{"the common case", func(*metav1.Condition) {}, true},
		{"digits", func(c *metav1.Condition) { c.Type, c.Reason = "Ready2", "Up2" }, true},
		{"longest plain type", func(c *metav1.Condition) { c.Type = strings.Repeat("a", 63) }, true},
		{"empty message", func(c *metav1.Condition) { c.Message = "" }, true},
		// Valid, but left to the full check.
		{"a prefixed type", func(c *metav1.Condition) { c.Type = "example.com/Ready" }, false},
		{"a type with a dash", func(c *metav1.Condition) { c.Type = "Is-Ready" }, false},
		{"a reason with an underscore", func(c *metav1.Condition) { c.Reason = "Up_Now" }, false},
		// Invalid.
		{"a type too long", func(c *metav1.Condition) { c.Type = strings.Repeat("a", 64) }, false},
		{"no type", func(c *metav1.Condition) { c.Type = "" }, false},
		{"no reason", func(c *metav1.Condition) { c.Reason = "" }, false},
		{"a reason starting with a digit", func(c *metav1.Condition) { c.Reason = "2Up" }, false},
		{"an unknown status", func(c *metav1.Condition) { c.Status = "Maybe" }, false},
		{"no status", func(c *metav1.Condition) { c.Status = "" }, false},
		{"no lastTransitionTime", func(c *metav1.Condition) { c.LastTransitionTime = metav1.Time{} }, false},
		{"a negative generation", func(c *metav1.Condition) { c.ObservedGeneration = -1 }, false},
		{"a message too long", func(c *metav1.Condition) { c.Message = strings.Repeat("m", 32*1024+1) }, false},
		{"a non-ASCII type", func(c *metav1.Condition) { c.Type = "Réady" }, false},
		{"a time past the year 9999", func(c *metav1.Condition) {
			c.LastTransitionTime = metav1.NewTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := plainCondition()
			tc.edit(&c)
			if got := plainlyValid(&c); got != tc.plain {
				t.Fatalf("plainlyValid = %v, want %v", got, tc.plain)
			}
			assertPlainImpliesValid(t, c)
		})
	}
}

// FuzzPlainlyValid holds the fast path to the API server's own rules: a
// condition it calls plainly valid is one ValidateCondition accepts.
func FuzzPlainlyValid(f *testing.F) {
	f.Add("Ready", "True", "Up", "m", int64(1), int64(1767323045))
	f.Add("a", "False", "A", "", int64(0), int64(1))
	f.Add("example.com/Ready", "Unknown", "Up_Now", "m", int64(0), int64(1))
	f.Add("R", "True", "9", "", int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, typ, status, reason, message string, generation, unix int64) {
		c := metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: message,
			ObservedGeneration: generation}
		if unix != 0 {
			c.LastTransitionTime = metav1.NewTime(time.Unix(unix, 0))
		}
		assertPlainImpliesValid(t, c)
	})
}

func assertPlainImpliesValid(t *testing.T, c metav1.Condition) {
	t.Helper()
	if !plainlyValid(&c) {
		return
	}
	if errs := metav1validation.ValidateCondition(c, field.NewPath("c")); len(errs) > 0 {
		t.Fatalf("plainlyValid accepted %+v, which the API server refuses: %v", c, errs)
	}
	if err := checkCondition(c, nil); err != nil {
		t.Fatalf("plainlyValid accepted %+v, which the full check refuses: %v", c, err)
	}
}
