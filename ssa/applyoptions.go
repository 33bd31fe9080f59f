package ssa

import "github.com/statusapply/statusapply/conflicts"

// ApplyOption tunes an apply. The same values tune Applier.Apply and a
// batcher contribution (batcher.Status, batcher.EditStatus, ...), so each
// option has one spelling at both levels, as controller-runtime's client
// options do:
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
	// DryRun sends the apply as a server-side dry run (DryRunAll): the API
	// server checks, merges and answers with the object it would store, and
	// stores nothing. The Applier remembers nothing from a dry run, neither
	// from its answer nor from the observation, and a dry run counts in no
	// metric but the request latency and the reads it makes.
	// batcher.Batch.DryRun sets it; there is no option value for it because a
	// batch entry is dry-run as a whole or not at all.
	DryRun bool
	// AsOwner, with DryRun, asks what the intent would make of the object if
	// the manager owned every field it states: a dry run that meets a
	// field-manager conflict is sent again, still as a dry run, with
	// ForceOwnership, whatever the conflict policy (which is not consulted,
	// and yields nothing), and Result.Taken lists the contested fields and
	// their owners instead of an error. Shadow mode (batcher.WithShadow)
	// compares that answer with the live object. Apply refuses AsOwner
	// without DryRun: statusapply forces a write only for a TakeDeclared
	// policy's declared fields.
	AsOwner bool
	// DeferDecode leaves decoding the API server's response to the caller:
	// an apply that is sent returns Result.Response with Result.Object nil,
	// and DecodeResponse makes the object when it is needed. Decoding a typed
	// object costs more client time than the rest of an apply, and a caller
	// that only needs to know the apply landed never reads it. What the
	// Applier remembers is read from the response's metadata either way.
	// batcher.Batch.Flush sets it and decodes a response only when a later
	// entry, a result hook or the next Flush needs the object.
	DeferDecode bool
}

// ApplyOptions sets every option of opts on o, in order, and returns o.
func (o *ApplyOptions) ApplyOptions(opts []ApplyOption) *ApplyOptions {
	for _, opt := range opts {
		opt.ApplyToApply(o)
	}
	return o
}

// ApplyToApply makes a whole ApplyOptions usable as an option: the fields it
// sets are set on target, the others left alone (a guarded or declarative
// target stays so). It is how the contributions of one batch entry combine.
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
	if o.DryRun {
		target.DryRun = true
	}
	if o.AsOwner {
		target.AsOwner = true
	}
	if o.DeferDecode {
		target.DeferDecode = true
	}
}

// Mode says what an apply intent starts from. A Mode is an ApplyOption.
type Mode int

const (
	// Incremental starts from the fields the manager already owns on the
	// observed object, so a reconcile that only touches condition A keeps the
	// condition B the same manager applied last time. It is the default.
	Incremental Mode = iota
	// Declarative starts from nothing: whatever the build does not state is
	// released, as with a hand-written apply configuration. A batch entry is
	// declarative if any of its contributions is.
	Declarative
)

// ApplyToApply sets the mode.
func (m Mode) ApplyToApply(o *ApplyOptions) { o.Mode = m }

// Guard is the type of Guarded.
type Guard bool

// Guarded makes the apply send the observed resourceVersion, for intents
// decided from observed state (such as creating a plan when none exists). On
// a stale resourceVersion the object is read again, the intent is built again
// from it (every mutator of a batch entry runs again) and the apply is retried,
// a bounded number of times (WithGuardBackoff); then the error wraps
// ErrRetriesExhausted. Builds and mutators must therefore be deterministic
// functions of the observed object, free of side effects. A batch entry is
// guarded if any of its contributions is.
const Guarded Guard = true

// ApplyToApply sets Guarded when g is true.
func (g Guard) ApplyToApply(o *ApplyOptions) {
	if g {
		o.Guarded = true
	}
}

// OnConflict sets what the apply does when it meets a field-manager conflict
// (see the conflicts package), instead of the policy the Applier has for the
// manager (WithConflictPolicy). In a batch entry the last contribution that
// sets one decides.
func OnConflict(p conflicts.Policy) ApplyOption { return conflictPolicy{p} }

type conflictPolicy struct{ p conflicts.Policy }

func (c conflictPolicy) ApplyToApply(o *ApplyOptions) {
	p := c.p
	o.Policy = &p
}
