package conflicts

import (
	"reflect"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/ownership"
)

func conflictAt(manager, path string) Conflict {
	return newConflict(Conflict{Manager: manager, Operation: "Apply", Subresource: "status"}, MustParsePath(path))
}

func paths(ps []fieldpath.Path) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestDecide(t *testing.T) {
	readyStatus := conflictAt("a", `.status.conditions[type="Ready"].status`)
	readyReason := conflictAt("a", `.status.conditions[type="Ready"].reason`)
	reachable := conflictAt("b", `.status.conditions[type="Reachable"].status`)
	endpoint := conflictAt("b", `.status.endpoint`)
	zone := conflictAt("b", `.status.attributes.zone`)
	all := []Conflict{readyStatus, readyReason, reachable, endpoint}

	declared := Declaration{
		ConditionTypes: []string{"Ready"},
		Paths:          []fieldpath.Path{MustParsePath(".status.endpoint"), MustParsePath(".status.attributes")},
	}
	tests := []struct {
		name      string
		policy    Policy
		conflicts []Conflict
		want      Decision
	}{
		{"no conflicts", TakeDeclared(declared), nil, Decision{Action: ActionNone}},
		{"zero policy fails", Policy{}, all, Decision{Action: ActionFail, Conflicts: all}},
		{"Fail", Fail(), all, Decision{Action: ActionFail, Conflicts: all}},
		{"Yield", Yield(), append(all, readyStatus), Decision{
			Action: ActionRetryWithout, Conflicts: append(all, readyStatus),
			Paths: []fieldpath.Path{readyStatus.Path, readyReason.Path, reachable.Path, endpoint.Path},
		}},
		{"TakeDeclared, all declared", TakeDeclared(declared), []Conflict{readyStatus, readyReason, endpoint, zone},
			Decision{Action: ActionForce, Conflicts: []Conflict{readyStatus, readyReason, endpoint, zone}}},
		{"TakeDeclared, some undeclared", TakeDeclared(declared), all,
			Decision{Action: ActionFail, Conflicts: []Conflict{reachable}}},
		{"TakeDeclared, nothing declared", TakeDeclared(Declaration{}), []Conflict{readyStatus},
			Decision{Action: ActionFail, Conflicts: []Conflict{readyStatus}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Decide(tt.conflicts)
			if got.Action != tt.want.Action {
				t.Fatalf("action %v, want %v", got.Action, tt.want.Action)
			}
			if !reflect.DeepEqual(flatten(got.Conflicts), flatten(tt.want.Conflicts)) {
				t.Fatalf("conflicts %+v, want %+v", flatten(got.Conflicts), flatten(tt.want.Conflicts))
			}
			if !reflect.DeepEqual(paths(got.Paths), paths(tt.want.Paths)) {
				t.Fatalf("paths %v, want %v", paths(got.Paths), paths(tt.want.Paths))
			}
		})
	}
}

func TestDeclarationCovers(t *testing.T) {
	d := Declaration{Paths: []fieldpath.Path{ownership.ConditionPath("Ready"), MustParsePath(".status.plan")}}
	for path, want := range map[string]bool{
		`.status.conditions[type="Ready"]`:         true,
		`.status.conditions[type="Ready"].status`:  true,
		`.status.conditions[type="Ready2"].status`: false,
		`.status.plan.steps`:                       true,
		`.status.planned`:                          false,
		`.status`:                                  false,
	} {
		if got := d.Covers(conflictAt("x", path)); got != want {
			t.Errorf("Covers(%s) = %v, want %v", path, got, want)
		}
	}
}

func TestPolicyAndActionStrings(t *testing.T) {
	for got, want := range map[string]string{
		Fail().String(): "Fail", Yield().String(): "Yield", TakeDeclared(Declaration{}).String(): "TakeDeclared",
		ActionNone.String(): "None", ActionFail.String(): "Fail", ActionRetryWithout.String(): "RetryWithout",
		ActionForce.String(): "Force",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
