package ownership

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

func TestCheckPlan(t *testing.T) {
	legacy := widget(entry("legacy", update, "status", legacyAB))
	migrated := widget(entry("legacy", update, "status", `{"f:status":{"f:phase":{}}}`), entry("readiness", apply, "status", applyR))
	untracked := &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Status:     v1alpha1.WidgetStatus{Conditions: []metav1.Condition{{Type: "U"}}},
	}
	networking := widget(entry("networking", apply, "status", applyB))
	tests := []struct {
		name string
		plan Plan
		objs []*v1alpha1.Widget
		// want lists the substrings the error must hold; none means no error.
		want []string
	}{
		{name: "a legacy source", plan: Plan{Managers: map[string]string{"legacy": "summary"}}, objs: []*v1alpha1.Widget{legacy}},
		{name: "a legacy source on one object of two", plan: Plan{Managers: map[string]string{"legacy": "summary"}},
			objs: []*v1alpha1.Widget{networking, legacy}},
		{name: "upgraded to its own name", plan: Plan{Managers: map[string]string{"legacy": "legacy"}}, objs: []*v1alpha1.Widget{legacy}},
		{name: "before-first-apply of an untracked object", plan: Plan{Managers: map[string]string{BeforeFirstApplyManager: "summary"}},
			objs: []*v1alpha1.Widget{untracked}},
		{name: "a condition of an untracked object", plan: Plan{Conditions: map[string]string{"U": "readiness"}},
			objs: []*v1alpha1.Widget{untracked}},
		{name: "a condition a legacy writer holds", plan: Plan{Conditions: map[string]string{"A": "readiness"}},
			objs: []*v1alpha1.Widget{legacy}},
		{name: "a condition already moved to its destination (a second run)", plan: Plan{Conditions: map[string]string{"R": "readiness"}},
			objs: []*v1alpha1.Widget{migrated}},
		{name: "a source gone to its destination (a second run)", plan: Plan{Managers: map[string]string{"gone": "readiness"}},
			objs: []*v1alpha1.Widget{migrated}},
		{name: "release only", plan: Plan{ReleaseShared: true}, objs: []*v1alpha1.Widget{networking}},
		{name: "no objects", plan: Plan{Managers: map[string]string{"nosuch": "x"}}},

		{name: "a source nobody has", plan: Plan{Managers: map[string]string{"nosuch": "x"}}, objs: []*v1alpha1.Widget{legacy, networking},
			want: []string{"--from nosuch: no manager of that name on any of the 2 objects"}},
		{name: "a source that is an apply manager", plan: Plan{Managers: map[string]string{"networking": "x"}},
			objs: []*v1alpha1.Widget{networking}, want: []string{"--from networking: not a legacy writer", "Apply manager on 1"}},
		{name: "a destination that is a legacy writer", plan: Plan{Conditions: map[string]string{"A": "legacy"}},
			objs: []*v1alpha1.Widget{legacy}, want: []string{"[--condition A=legacy]: legacy is a legacy writer (Update) on 1 of the 1 objects"}},
		{name: "a condition type nobody holds", plan: Plan{Conditions: map[string]string{"Redy": "readiness"}},
			objs: []*v1alpha1.Widget{legacy}, want: []string{"--condition Redy: no manager holds that condition type"}},
		{name: "a condition only another apply manager holds", plan: Plan{Conditions: map[string]string{"B": "readiness"}},
			objs: []*v1alpha1.Widget{networking}, want: []string{"--condition B: no legacy writer holds it", "[networking]"}},
		{name: "every problem at once", plan: Plan{Managers: map[string]string{"nosuch": "legacy"}, Conditions: map[string]string{"Z": "z"}},
			objs: []*v1alpha1.Widget{legacy}, want: []string{"--from nosuch", "--condition Z", "[--from nosuch=legacy]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPlan(tt.plan, tt.objs)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("CheckPlan: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrPlanMismatch) || !errors.Is(err, ErrInvalidPlan) {
				t.Fatalf("err = %v, want ErrPlanMismatch wrapping ErrInvalidPlan", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestCheckPlanValidatesFirst(t *testing.T) {
	err := CheckPlan(Plan{}, []*v1alpha1.Widget{widget()})
	if !errors.Is(err, ErrInvalidPlan) || errors.Is(err, ErrPlanMismatch) {
		t.Errorf("err = %v, want ErrInvalidPlan from Validate", err)
	}
}
