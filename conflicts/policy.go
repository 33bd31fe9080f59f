package conflicts

import (
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Declaration is what a writer owns exclusively: fields no other manager
// should ever hold, which TakeDeclared may force. Declare narrowly; a forced
// apply silently takes a field from whoever had it.
type Declaration struct {
	// ConditionTypes are status condition types (.status.conditions[type=X])
	// the writer owns, with every field in them.
	ConditionTypes []string
	// Paths are field paths the writer owns, with everything under them.
	Paths []fieldpath.Path
}

// Covers reports whether c's field is declared: its condition type is listed,
// or its path equals or lies under a declared path.
func (d Declaration) Covers(c Conflict) bool {
	if c.ConditionType != "" && slices.Contains(d.ConditionTypes, c.ConditionType) {
		return true
	}
	for _, p := range d.Paths {
		if len(p) <= len(c.Path) && c.Path[:len(p)].Equals(p) {
			return true
		}
	}
	return false
}

// policyMode is the kind of Policy; the zero value is Fail.
type policyMode int

const (
	modeFail policyMode = iota
	modeYield
	modeTakeDeclared
)

// Policy is what a writer does when its apply meets a field-manager conflict.
// The zero value is Fail. Policies are values: build one per writer with Fail,
// Yield or TakeDeclared and share it freely.
type Policy struct {
	mode     policyMode
	declared Declaration
}

// Fail returns the conflict to the caller as an *Error. It is the default:
// a contested field usually means two writers disagree about who owns it, and
// a person should decide.
func Fail() Policy { return Policy{mode: modeFail} }

// Yield re-sends the apply without the contested fields and reports what was
// given up: the writer's other fields still land, and the current owners keep
// theirs. In a list element the writer owns (a condition it applied before)
// only the contested fields are left out, and the element's key stays, so the
// element stays on the object with its new owner's values; an element the
// writer does not own is left out whole (see RemoveFields). Use it for
// writers whose contribution is advisory.
func Yield() Policy { return Policy{mode: modeYield} }

// TakeDeclared forces the apply when every contested field is declared in d,
// and fails naming the undeclared fields otherwise. Undeclared fields are
// never forced, nor left out: the apply is not sent again.
func TakeDeclared(d Declaration) Policy { return Policy{mode: modeTakeDeclared, declared: d} }

// Yields reports whether the policy gives contested fields up. A writer that
// yields can leave out the fields it predicts to be contested before sending,
// and save the request the API server would refuse.
func (p Policy) Yields() bool { return p.mode == modeYield }

// String names the policy for logs.
func (p Policy) String() string {
	switch p.mode {
	case modeYield:
		return "Yield"
	case modeTakeDeclared:
		return "TakeDeclared"
	}
	return "Fail"
}

// Action is what the caller must do next.
type Action int

const (
	// ActionNone means there was nothing to resolve: no conflicts.
	ActionNone Action = iota
	// ActionFail means return an *Error naming Decision.Conflicts.
	ActionFail
	// ActionRetryWithout means remove Decision.Paths from the apply intent
	// (RemoveFields, with the fields the writer's manager owns) and apply
	// again, without force.
	ActionRetryWithout
	// ActionForce means apply the same intent again with force
	// (client.ForceOwnership): every contested field is declared.
	ActionForce
)

// String names the action for logs.
func (a Action) String() string {
	switch a {
	case ActionNone:
		return "None"
	case ActionFail:
		return "Fail"
	case ActionRetryWithout:
		return "RetryWithout"
	case ActionForce:
		return "Force"
	}
	return "Action(?)"
}

// Decision is a Policy's verdict on one conflicted apply.
type Decision struct {
	// Action is what to do next.
	Action Action
	// Conflicts are the conflicts the action is about: the blocking ones for
	// ActionFail (for TakeDeclared, only the undeclared ones), the yielded ones
	// for ActionRetryWithout, the taken ones for ActionForce.
	Conflicts []Conflict
	// Paths are the contested paths to remove for ActionRetryWithout, without
	// duplicates, in the order of Conflicts.
	Paths []fieldpath.Path
}

// Decide applies the policy to the conflicts of one apply, as returned by
// Parse, FromError or Predict. It is pure; the caller acts on the Decision.
// A caller that retries must decide again on the retry's conflicts: other
// writers may have moved in between.
func (p Policy) Decide(conflicts []Conflict) Decision {
	if len(conflicts) == 0 {
		return Decision{Action: ActionNone}
	}
	switch p.mode {
	case modeYield:
		return Decision{Action: ActionRetryWithout, Conflicts: conflicts, Paths: uniquePaths(conflicts)}
	case modeTakeDeclared:
		var undeclared []Conflict
		for _, c := range conflicts {
			if !p.declared.Covers(c) {
				undeclared = append(undeclared, c)
			}
		}
		if len(undeclared) > 0 {
			return Decision{Action: ActionFail, Conflicts: undeclared}
		}
		return Decision{Action: ActionForce, Conflicts: conflicts}
	}
	return Decision{Action: ActionFail, Conflicts: conflicts}
}

// uniquePaths lists the conflicts' paths once each, in order.
func uniquePaths(conflicts []Conflict) []fieldpath.Path {
	seen := fieldpath.NewSet()
	var out []fieldpath.Path
	for _, c := range conflicts {
		if seen.Has(c.Path) {
			continue
		}
		seen.Insert(c.Path)
		out = append(out, c.Path)
	}
	return out
}
