package ssa

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoac "k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
)

const goodTime = "2026-01-02T03:04:05Z"

// condition is a valid condition in unstructured content, with fields
// replaced (or removed, for a nil value) by with.
func condition(condType string, with map[string]any) map[string]any {
	c := map[string]any{"type": condType, "status": "True", "reason": "Up", "message": "up",
		"lastTransitionTime": goodTime, "observedGeneration": int64(3)}
	for k, v := range with {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func TestValidateConditionItems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items any
		want  []string // substrings of the error; none for valid
	}{
		{"valid", []any{condition("Ready", nil), condition("example.com/Synced", nil)}, nil},
		{"no conditions", []any{}, nil},
		{"empty message", []any{condition("Ready", map[string]any{"message": ""})}, nil},
		{"no observedGeneration", []any{condition("Ready", map[string]any{"observedGeneration": nil})}, nil},
		{"integral float observedGeneration", []any{condition("Ready", map[string]any{"observedGeneration": 4.0})}, nil},
		{"fractional seconds", []any{condition("Ready", map[string]any{"lastTransitionTime": "2026-01-02T03:04:05.5+02:00"})}, nil},
		{"bad type", []any{condition("bad type!", nil)},
			[]string{`condition "bad type!"`, "status.conditions[bad type!].type: Invalid value"}},
		{"no type", []any{condition("Ready", map[string]any{"type": nil})},
			[]string{`condition ""`, "status.conditions[].type: Required value"}},
		{"bad reason", []any{condition("Ready", map[string]any{"reason": "bad reason!"})},
			[]string{`condition "Ready"`, "status.conditions[Ready].reason: Invalid value"}},
		{"no reason", []any{condition("Ready", map[string]any{"reason": nil})},
			[]string{"status.conditions[Ready].reason: Required value"}},
		{"status Maybe", []any{condition("Ready", map[string]any{"status": "Maybe"})},
			[]string{"status.conditions[Ready].status: Unsupported value: \"Maybe\""}},
		{"no lastTransitionTime", []any{condition("Ready", map[string]any{"lastTransitionTime": nil})},
			[]string{"status.conditions[Ready].lastTransitionTime: Required value"}},
		{"unparsable lastTransitionTime", []any{condition("Ready", map[string]any{"lastTransitionTime": "yesterday"})},
			[]string{"status.conditions[Ready].lastTransitionTime: Invalid value: \"yesterday\": must be an RFC 3339 time"}},
		// Found by FuzzConditionItems (testdata/fuzz/FuzzConditionItems/2fac2af7e174c2c7):
		// time.Parse takes a one-digit hour, the API server's date-time check does not.
		{"one-digit hour", []any{condition("Ready", map[string]any{"lastTransitionTime": "2026-01-02T3:04:05Z"})},
			[]string{"status.conditions[Ready].lastTransitionTime: Invalid value: \"2026-01-02T3:04:05Z\": must be an RFC 3339 time"}},
		{"lastTransitionTime of the wrong type", []any{condition("Ready", map[string]any{"lastTransitionTime": int64(5)})},
			[]string{"status.conditions[Ready].lastTransitionTime: Invalid value: 5: must be a string"}},
		{"negative observedGeneration", []any{condition("Ready", map[string]any{"observedGeneration": int64(-1)})},
			[]string{"status.conditions[Ready].observedGeneration: Invalid value: -1"}},
		{"fractional observedGeneration", []any{condition("Ready", map[string]any{"observedGeneration": 1.5})},
			[]string{"status.conditions[Ready].observedGeneration: Invalid value: 1.5: must be an integer"}},
		{"observedGeneration of the wrong type", []any{condition("Ready", map[string]any{"observedGeneration": "3"})},
			[]string{"status.conditions[Ready].observedGeneration", "must be an integer"}},
		{"reason of the wrong type", []any{condition("Ready", map[string]any{"reason": true})},
			[]string{"status.conditions[Ready].reason: Invalid value: true: must be a string"}},
		{"type of the wrong type", []any{condition("Ready", map[string]any{"type": int64(1)})},
			[]string{"status.conditions[].type: Invalid value: 1: must be a string"}},
		{"no message", []any{condition("Ready", map[string]any{"message": nil})},
			[]string{"status.conditions[Ready].message: Required value"}},
		{"message too long", []any{condition("Ready", map[string]any{"message": strings.Repeat("x", 32769)})},
			[]string{"status.conditions[Ready].message: Too long"}},
		// 10,923 bytes that are not UTF-8 are 32,769 once JSON carries them as U+FFFD.
		{"message not UTF-8, too long once encoded", []any{condition("Ready", map[string]any{"message": strings.Repeat("\xc3", 10923)})},
			[]string{"status.conditions[Ready].message: Too long"}},
		{"message not UTF-8 that fits once encoded", []any{condition("Ready", map[string]any{"message": strings.Repeat("\xc3", 10922)})}, nil},
		// Found with FuzzSetCondition's oracle: ValidateCondition allows a
		// 317-byte type (253-byte prefix, "/", 63-byte name), the schema of
		// metav1.Condition in a CRD 316 bytes.
		{"type of 316 bytes", []any{condition(strings.Repeat("a", 252)+"/"+strings.Repeat("b", 63), nil)}, nil},
		{"type of 317 bytes", []any{condition(strings.Repeat("a", 253)+"/"+strings.Repeat("b", 63), nil)},
			[]string{"type: Too long: may not be more than 316 bytes"}},
		{"duplicate type", []any{condition("Ready", nil), condition("Ready", map[string]any{"status": "False"})},
			[]string{"status.conditions[Ready]: Duplicate value"}},
		{"item not an object", []any{"Ready"}, []string{"status.conditions[0]: must be an object"}},
		{"not a list", map[string]any{"Ready": "True"}, []string{"status.conditions: must be a list"}},
		{"one bad among good ones", []any{condition("Ready", nil), condition("Synced", map[string]any{"status": "Maybe"})},
			[]string{`condition "Synced"`, "status.conditions[Synced].status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateConditionItems(tc.items, nil)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v, want ErrInvalidInput", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A field that could not be read is reported once, as what it is, and not
// also as missing.
func TestValidateConditionItemsReportsUnreadableFieldsOnce(t *testing.T) {
	err := validateConditionItems([]any{condition("Ready", map[string]any{"lastTransitionTime": "yesterday"})}, nil)
	if err == nil || strings.Contains(err.Error(), "Required") {
		t.Fatalf("error %v, want only the unparsable time", err)
	}
}

func widgetConverter(t testing.TB) managedfields.TypeConverter {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return TypeConverters(applyconfiguration.NewTypeConverter(s), clientgoac.NewTypeConverter(s))
}

// BenchmarkValidateConditionItems measures the check every Apply of a kind
// with metav1 conditions now pays.
func BenchmarkValidateConditionItems(b *testing.B) {
	for _, n := range []int{1, 20} {
		items := make([]any, n)
		for i := range items {
			items[i] = condition(fmt.Sprintf("Condition%d", i), nil)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := validateConditionItems(items, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A manager may own only part of a condition (another manager took the rest
// by force): re-stating that part as it is must not be refused, although on
// its own it is no valid condition; changing it is checked as usual.
func TestValidateConditionItemsLeavesOwnedPartsAlone(t *testing.T) {
	part := map[string]any{"type": "A", "observedGeneration": int64(3)}
	owned := []any{map[string]any{"type": "A", "observedGeneration": int64(3)}}
	if err := validateConditionItems([]any{part}, owned); err != nil {
		t.Fatalf("the owned part was refused: %v", err)
	}
	if err := validateConditionItems([]any{part}, nil); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a new partial condition: %v, want ErrInvalidInput", err)
	}
	changed := map[string]any{"type": "A", "observedGeneration": int64(4)}
	if err := validateConditionItems([]any{changed}, owned); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a changed partial condition: %v, want ErrInvalidInput", err)
	}
}

// TestPrintable: a time prints as RFC 3339, which the API server reads back,
// for the years 0000 to 9999 only; the zero time is left out of an apply.
func TestPrintable(t *testing.T) {
	at := func(year int) metav1.Time { return metav1.NewTime(time.Date(year, 6, 1, 0, 0, 0, 0, time.UTC)) }
	for _, tc := range []struct {
		when metav1.Time
		want bool
	}{
		{metav1.Time{}, true},
		{at(0), true},
		{at(2026), true},
		{at(9999), true},
		{at(-1), false},
		{at(10000), false},
	} {
		if got := printable(tc.when); got != tc.want {
			t.Errorf("printable(%v) = %v, want %v", tc.when, got, tc.want)
		}
	}
}
