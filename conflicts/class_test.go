package conflicts

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var widgets = schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}

func invalidErr() error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "demo.statusapply.io", Kind: "Widget"}, "w1", field.ErrorList{
		field.Required(field.NewPath("status", "conditions").Index(0).Child("reason"), ""),
	})
}

func TestClassify(t *testing.T) {
	fieldConflict := recordedUpdateOwner()
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, ClassNone},
		{"plain", errors.New("connection refused"), ClassOther},
		{"context", context.DeadlineExceeded, ClassOther},
		{"field conflict", fieldConflict, ClassFieldManagerConflict},
		{"field conflict by message only", conflictStatus(msgUpdateOwner), ClassFieldManagerConflict},
		{"field conflict wrapped", fmt.Errorf("apply: %w", fieldConflict), ClassFieldManagerConflict},
		{"field conflict in *Error", &Error{Manager: "m", Err: fieldConflict}, ClassFieldManagerConflict},
		{"stale", recordedStale(), ClassStale},
		{"stale from NewConflict", apierrors.NewConflict(widgets, "w1", errors.New("the object has been modified")), ClassStale},
		{"stale wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", recordedStale())), ClassStale},
		{"not found", apierrors.NewNotFound(widgets, "w1"), ClassNotFound},
		{"invalid", invalidErr(), ClassInvalid},
		{"forbidden", apierrors.NewForbidden(widgets, "w1", errors.New("no")), ClassForbidden},
		{"already exists", apierrors.NewAlreadyExists(widgets, "w1"), ClassOther},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), ClassOther},
		{"code only 409", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 409}}, ClassStale},
		{"code only 404", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 404}}, ClassNotFound},
		{"joined: stale and field conflict", errors.Join(recordedStale(), fieldConflict), ClassFieldManagerConflict},
		{"joined: not found and stale", errors.Join(apierrors.NewNotFound(widgets, "w1"), recordedStale()), ClassStale},
		{"joined: forbidden wins", errors.Join(fieldConflict, apierrors.NewForbidden(widgets, "w1", errors.New("no"))), ClassForbidden},
		{"joined inside wrapped", fmt.Errorf("flush: %w", errors.Join(errors.New("x"), invalidErr())), ClassInvalid},
		{"joined plain", errors.Join(errors.New("a"), errors.New("b")), ClassOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Fatalf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestClassString(t *testing.T) {
	want := map[Class]string{
		ClassNone: "None", ClassOther: "Other", ClassNotFound: "NotFound", ClassStale: "Stale",
		ClassFieldManagerConflict: "FieldManagerConflict", ClassInvalid: "Invalid", ClassForbidden: "Forbidden",
		Class(42): "Class(42)",
	}
	for c, s := range want {
		if c.String() != s {
			t.Errorf("%d.String() = %q, want %q", int(c), c.String(), s)
		}
	}
}

func TestRequeueAfter(t *testing.T) {
	tests := []struct {
		err  error
		want time.Duration
		ok   bool
	}{
		{nil, 0, false},
		{errors.New("x"), 0, false},
		{fmt.Errorf("w: %w", recordedStale()), StaleRetryAfter, true},
		{recordedSeveral(), ConflictRetryAfter, true},
		{apierrors.NewNotFound(widgets, "w1"), 0, false},
	}
	for _, tt := range tests {
		d, ok := RequeueAfter(tt.err)
		if d != tt.want || ok != tt.ok {
			t.Errorf("RequeueAfter(%v) = %v, %v; want %v, %v", tt.err, d, ok, tt.want, tt.ok)
		}
	}
	if StaleRetryAfter >= ConflictRetryAfter {
		t.Fatal("a stale retry must come sooner than a conflict retry")
	}
}
