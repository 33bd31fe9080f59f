package ssa

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
)

func TestOnlyBeforeFirstApply(t *testing.T) {
	lost := conflicts.Conflict{Manager: ownership.BeforeFirstApplyManager, Operation: metav1.ManagedFieldsOperationUpdate}
	other := conflicts.Conflict{Manager: "other", Operation: metav1.ManagedFieldsOperationApply}
	legacy := conflicts.Conflict{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate}
	// A writer that chose the name applies: it is a real manager.
	named := conflicts.Conflict{Manager: ownership.BeforeFirstApplyManager, Operation: metav1.ManagedFieldsOperationApply}
	for _, tc := range []struct {
		name string
		cs   []conflicts.Conflict
		want bool
	}{
		{"none", nil, false},
		{"before-first-apply", []conflicts.Conflict{lost}, true},
		{"before-first-apply on several fields", []conflicts.Conflict{lost, lost}, true},
		{"a real manager too", []conflicts.Conflict{lost, other}, false},
		{"a legacy manager too", []conflicts.Conflict{legacy, lost}, false},
		{"a real manager alone", []conflicts.Conflict{other}, false},
		{"an apply manager named before-first-apply", []conflicts.Conflict{named}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyBeforeFirstApply(tc.cs); got != tc.want {
				t.Errorf("onlyBeforeFirstApply(%v) = %v, want %v", tc.cs, got, tc.want)
			}
		})
	}
}
