package ssa

import "github.com/statusapply/statusapply/conflicts"

// ApplyOption tunes an apply, of Applier.Apply or of a batcher contribution
// (batcher.Status, batcher.EditStatus, ...), with one spelling at both:
//
//	batcher.Status(b, w, "planner", createPlan, ssa.Guarded, ssa.OnConflict(conflicts.Yield))
type ApplyOption interface {
	// ApplyToApply sets the option on o.
	ApplyToApply(o *ApplyOptions)
}

// ApplyOptions are the options of one apply, the result of its ApplyOption
// values. The zero value is an incremental, unguarded apply under the
// manager's conflict policy.
type ApplyOptions struct {
	// Mode is Incremental unless set.
	Mode Mode
	// Guarded sends the observed resourceVersion with the apply and, when it is
	// stale, reads the object again and rebuilds the intent.
	Guarded bool
	// Policy decides what to do about a field-manager conflict. Nil means the
	// policy WithConflictPolicy set for the manager, or conflicts.Fail.
	Policy *conflicts.Policy
	// RemovedConditions are the status condition types the apply removes
	// (see RemovingConditions).
	RemovedConditions []string
	// DryRun sends the apply as a server-side dry run (DryRunAll): the API
	// server merges and checks it and answers with the object it would store,
	// but stores nothing. The Applier remembers nothing from it, and it counts
	// in no metric but apply latency and reads. batcher.Batch.DryRun dry-runs
	// a whole batch; a batch's contributions refuse it.
	DryRun bool
	// AsOwner, with DryRun, asks what the intent would make of the object if
	// the manager owned every field it states: a dry run meeting a
	// field-manager conflict is sent again, still dry, with ForceOwnership,
	// whatever the conflict policy, and Result.Taken lists the contested
	// fields (shadow mode compares such answers). Apply refuses AsOwner
	// without DryRun: statusapply forces a write only for TakeDeclared's
	// fields. A batch's contributions refuse it.
	AsOwner bool
	// RawResponse leaves the API server's response undecoded: Result.Object
	// is nil and Result.Response holds the object as JSON, for a caller that
	// decodes it only if something reads it. What the Applier remembers is
	// read from the response's metadata either way. A batch's contributions
	// refuse it.
	RawResponse bool
}

// ApplyOptions sets every option of opts on o, in order, and returns o.
func (o *ApplyOptions) ApplyOptions(opts []ApplyOption) *ApplyOptions {
	for _, opt := range opts {
		opt.ApplyToApply(o)
	}
	return o
}

// ApplyToApply sets on target the fields o sets, leaving the others (a guarded
// or declarative target stays so) and adding removed conditions to target's:
// how one batch entry's contributions combine.
func (o *ApplyOptions) ApplyToApply(target *ApplyOptions) {
	if o.Mode != Incremental {
		target.Mode = o.Mode
	}
	if o.Guarded {
		target.Guarded = true
	}
	if o.Policy != nil {
		target.Policy = o.Policy
	}
	if len(o.RemovedConditions) > 0 {
		removedConditions(o.RemovedConditions).ApplyToApply(target)
	}
	target.DryRun = target.DryRun || o.DryRun
	target.AsOwner = target.AsOwner || o.AsOwner
	target.RawResponse = target.RawResponse || o.RawResponse
}

// Mode says what an apply intent starts from. A Mode is an ApplyOption.
type Mode int

const (
	// Incremental starts from the fields the manager owns on the observed
	// object, so that what it applied last time is kept. It is the default.
	Incremental Mode = iota
	// Declarative starts from nothing: what the build does not state is
	// released. A batch entry is declarative if any contribution is.
	Declarative
)

// ApplyToApply sets the mode.
func (m Mode) ApplyToApply(o *ApplyOptions) { o.Mode = m }

// Guard is the type of Guarded.
type Guard bool

// Guarded makes the apply send the observed resourceVersion, for intents
// decided from observed state (such as creating a plan when none exists). On a
// stale resourceVersion the object is read again, the intent rebuilt (every
// mutator of a batch entry runs again) and the apply retried within
// WithGuardBackoff, then the error wraps ErrRetriesExhausted; so builds and
// mutators must be deterministic in the observed object, without side effects.
// A batch entry is guarded if any of its contributions is.
const Guarded Guard = true

// ApplyToApply sets Guarded when g is true.
func (g Guard) ApplyToApply(o *ApplyOptions) {
	if g {
		o.Guarded = true
	}
}

// OnConflict sets what the apply does on a field-manager conflict, instead of
// the manager's policy (WithConflictPolicy). In a batch entry the last
// contribution that sets one decides.
func OnConflict(p conflicts.Policy) ApplyOption { return conflictPolicy{p} }

type conflictPolicy struct{ p conflicts.Policy }

func (c conflictPolicy) ApplyToApply(o *ApplyOptions) {
	p := c.p
	o.Policy = &p
}

// Dry is the type of DryRun and DryRunAsOwner.
type Dry int

const (
	// DryRun sends the apply as a server-side dry run (DryRunAll): the API
	// server merges and checks it and answers with the object it would store,
	// but stores nothing. The Applier remembers nothing from it and takes
	// nothing back from before-first-apply, and it counts in no metric but
	// apply latency and reads. batcher.Batch.DryRun dry-runs a whole batch;
	// a batch's contributions refuse it.
	DryRun Dry = iota + 1
	// DryRunAsOwner is a DryRun that asks what the intent would make of the
	// object if the manager owned every field it states: a dry run meeting a
	// field-manager conflict is sent again, still dry, with ForceOwnership,
	// whatever the conflict policy, and Result.Taken lists the contested
	// fields (package shadow compares such answers). A write is never forced
	// this way: statusapply forces one only for TakeDeclared's fields.
	DryRunAsOwner
)

// ApplyToApply sets DryRun, and AsOwner for DryRunAsOwner.
func (d Dry) ApplyToApply(o *ApplyOptions) {
	o.DryRun = d == DryRun || d == DryRunAsOwner
	o.AsOwner = d == DryRunAsOwner
}
