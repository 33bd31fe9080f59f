package fleet

import (
	"errors"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

func TestCheckPlan(t *testing.T) {
	legacy := ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB))
	migrated := ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", `{"f:status":{"f:phase":{}}}`), ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR))
	untracked := &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Status:     v1alpha1.WidgetStatus{Conditions: []metav1.Condition{{Type: "U"}}},
	}
	networking := ownershiptest.Widget(ownershiptest.Entry("networking", ownershiptest.Apply, "status", ownershiptest.ApplyB))
	// finished holds, besides apply managers, only a creator's Update of
	// the main resource: no legacy writer holds a status field.
	finished := ownershiptest.Widget(ownershiptest.Entry("creator", ownershiptest.Update, "", `{"f:spec":{".":{},"f:size":{}}}`), ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR))
	tests := []struct {
		name string
		plan Plan
		opts []CheckOption
		objs []*v1alpha1.Widget
		// want lists the substrings the error must hold; none means no error.
		want []string
	}{
		{name: "a legacy source", plan: Plan{Managers: map[string]string{"legacy": "summary"}}, objs: []*v1alpha1.Widget{legacy}},
		{name: "a legacy source on one object of two", plan: Plan{Managers: map[string]string{"legacy": "summary"}},
			objs: []*v1alpha1.Widget{networking, legacy}},
		{name: "upgraded to its own name", plan: Plan{Managers: map[string]string{"legacy": "legacy"}}, objs: []*v1alpha1.Widget{legacy}},
		{name: "before-first-apply of an untracked object", plan: Plan{Managers: map[string]string{ownership.BeforeFirstApplyManager: "summary"}},
			objs: []*v1alpha1.Widget{untracked}},
		{name: "a condition of an untracked object", plan: Plan{Conditions: map[string]string{"U": "readiness"}},
			objs: []*v1alpha1.Widget{untracked}},
		{name: "a condition a legacy writer holds", plan: Plan{Conditions: map[string]string{"A": "readiness"}},
			objs: []*v1alpha1.Widget{legacy}},
		{name: "a condition already moved to its destination (a second run)", plan: Plan{Conditions: map[string]string{"R": "readiness"}},
			objs: []*v1alpha1.Widget{migrated}},
		{name: "a source gone to its destination (a second run)", plan: Plan{Managers: map[string]string{"gone": "readiness"}},
			objs: []*v1alpha1.Widget{finished}},
		{name: "a source gone, no legacy writer left, a destination nobody applies", plan: Plan{Managers: map[string]string{"gone": "x"}},
			objs: []*v1alpha1.Widget{finished}},
		{name: "upgraded to its own name by an earlier run", plan: Plan{Managers: map[string]string{"readiness": "readiness"}},
			objs: []*v1alpha1.Widget{finished}},
		{name: "a missing source allowed while legacy writers are left", plan: Plan{Managers: map[string]string{"typo": "readiness"}},
			opts: []CheckOption{AllowMissingSources()}, objs: []*v1alpha1.Widget{migrated, legacy}},
		{name: "a condition nobody holds, allowed", plan: Plan{Conditions: map[string]string{"Redy": "readiness"}},
			opts: []CheckOption{AllowMissingSources()}, objs: []*v1alpha1.Widget{legacy}},
		{name: "release only", plan: Plan{ReleaseShared: true}, objs: []*v1alpha1.Widget{networking}},
		{name: "no objects", plan: Plan{Managers: map[string]string{"nosuch": "x"}}},

		{name: "a source nobody has", plan: Plan{Managers: map[string]string{"nosuch": "x"}}, objs: []*v1alpha1.Widget{legacy, networking},
			want: []string{"--from nosuch: no manager of that name on any of the 2 objects", "legacy (1 object)", "--allow-missing-source"}},
		{name: "a source nobody has while its destination applies and a legacy writer is left (the false green)",
			plan: Plan{Managers: map[string]string{"typo": "readiness"}}, objs: []*v1alpha1.Widget{migrated, legacy},
			want: []string{"--from typo: no manager of that name on any of the 2 objects", "legacy writers still hold status fields on them: legacy (2 objects)"}},
		{name: "before-first-apply of an untracked object is a legacy writer left", plan: Plan{Managers: map[string]string{"typo": "x"}},
			objs: []*v1alpha1.Widget{untracked}, want: []string{"before-first-apply (1 object)"}},
		{name: "upgraded to its own name while a legacy writer is left", plan: Plan{Managers: map[string]string{"readiness": "readiness"}},
			objs: []*v1alpha1.Widget{migrated}, want: []string{"--from readiness=readiness: readiness is an Apply manager on 1 of the 1 objects", "legacy (1 object)"}},
		{name: "a source that is an apply manager, even allowed", plan: Plan{Managers: map[string]string{"networking": "x"}},
			opts: []CheckOption{AllowMissingSources()}, objs: []*v1alpha1.Widget{networking}, want: []string{"--from networking: not a legacy writer"}},
		{name: "a source that is an apply manager", plan: Plan{Managers: map[string]string{"networking": "x"}},
			objs: []*v1alpha1.Widget{networking}, want: []string{"--from networking: not a legacy writer", "Apply manager on 1"}},
		{name: "a destination that is a legacy writer", plan: Plan{Conditions: map[string]string{"A": "legacy"}},
			objs: []*v1alpha1.Widget{legacy}, want: []string{"[--condition A=legacy]: legacy is a legacy writer (Update) on 1 of the 1 objects"}},
		{name: "a condition type nobody holds", plan: Plan{Conditions: map[string]string{"Redy": "readiness"}},
			objs: []*v1alpha1.Widget{legacy}, want: []string{"--condition Redy: no manager holds that condition type", "legacy writers hold A, B"}},
		{name: "a condition only another apply manager holds", plan: Plan{Conditions: map[string]string{"B": "readiness"}},
			objs: []*v1alpha1.Widget{networking}, want: []string{"--condition B: no legacy writer holds it", "[networking]"}},
		{name: "every problem at once", plan: Plan{Managers: map[string]string{"nosuch": "legacy"}, Conditions: map[string]string{"Z": "z"}},
			objs: []*v1alpha1.Widget{legacy}, want: []string{"--from nosuch", "--condition Z", "[--from nosuch=legacy]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPlan(tt.plan, tt.objs, tt.opts...)
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

func TestNewDestinations(t *testing.T) {
	objs := []*v1alpha1.Widget{
		ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)),
		ownershiptest.Widget(ownershiptest.Entry("readiness", ownershiptest.Apply, "status", ownershiptest.ApplyR)),
	}
	plan := Plan{
		Managers:   map[string]string{"legacy": "sumry", "legacy2": "legacy2", "gone": "readiness"},
		Conditions: map[string]string{"A": "readiness", "B": "networking"},
	}
	got := NewDestinations(plan, objs)
	if want := []string{"networking", "sumry"}; !slices.Equal(got, want) {
		t.Errorf("NewDestinations = %v, want %v (an applier is not new, nor a manager handed to itself)", got, want)
	}
	if got := NewDestinations(plan, []*v1alpha1.Widget{}); got != nil {
		t.Errorf("no objects: %v, want nil", got)
	}
}

func TestCheckPlanValidatesFirst(t *testing.T) {
	err := CheckPlan(Plan{}, []*v1alpha1.Widget{ownershiptest.Widget()})
	if !errors.Is(err, ErrInvalidPlan) || errors.Is(err, ErrPlanMismatch) {
		t.Errorf("err = %v, want ErrInvalidPlan from Validate", err)
	}
}
