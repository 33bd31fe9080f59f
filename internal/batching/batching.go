// Package batching holds what package batcher passes to and records through
// an ssa.Applier beyond the Applier's public API: the typed build of an
// entry, the flags of dry runs and deferred decoding, and the Flush-level
// metrics' inputs.
package batching

import (
	"errors"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Extras is how one Apply of a batch's entry runs beyond its ApplyOptions.
type Extras struct {
	// DryRun sends the apply as a server-side dry run (DryRunAll): the API
	// server stores nothing, the Applier remembers nothing from it, and it
	// counts in no metric but request latency and reads.
	DryRun bool
	// AsOwner, with DryRun, asks what the intent would make of the object if
	// the manager owned every field it states: a dry run meeting a
	// field-manager conflict is sent again, still dry, with ForceOwnership,
	// whatever the conflict policy, and Result.Taken lists the contested
	// fields. Apply refuses AsOwner without DryRun: statusapply forces a write
	// only for TakeDeclared's fields.
	AsOwner bool
	// DeferDecode leaves the response undecoded (Result.Object nil, see
	// objects.Decode): a batch decodes it only when something reads it. What
	// the Applier remembers comes from the response's metadata either way.
	DeferDecode bool
}

// TypedBuild builds an intent in its own apply configuration type.
type TypedBuild struct {
	// Type is the apply configuration type, a pointer to a generated struct.
	Type reflect.Type
	// Mutate edits ac, of Type, which already names the object and, in
	// incremental mode, holds what the manager owns; ac is this build's
	// own. An error wrapping ErrBuildUntyped, returned before anything else
	// was decided, hands the intent to the unstructured build.
	Mutate func(ac any, observed client.Object) error
}

// ErrBuildUntyped is wrapped by a TypedBuild's Mutate that cannot build the
// intent in its type; it never reaches Apply's caller.
var ErrBuildUntyped = errors.New("the intent needs the unstructured build")

// HeldBeforeFirstApply is the error of a build that removes fields which,
// besides the manager itself, only before-first-apply holds (the API server's
// owner of fields whose managedFields were lost): the Applier gives the
// manager those fields and builds again. Err is the refusal that stands when
// it does not (a dry run, a manager without the right to patch the object).
type HeldBeforeFirstApply struct {
	// Fields are the removed paths: everything before-first-apply holds at
	// or below them is the manager's to take back.
	Fields *fieldpath.Set
	Err    error
}

func (e *HeldBeforeFirstApply) Error() string { return e.Err.Error() }

// Unwrap returns the refusal.
func (e *HeldBeforeFirstApply) Unwrap() error { return e.Err }

// Series names one metrics series: a field manager and a kind.
type Series struct{ Manager, Group, Kind string }

// PendingTally counts, per series, the entries one Flush left queued.
type PendingTally struct {
	first [4]pending // most Flushes touch a series or three: no allocation
	n     int
	more  []pending
}

type pending struct {
	series Series
	left   int
}

// Add counts one entry of s, left queued or not.
func (p *PendingTally) Add(s Series, queued bool) {
	c := p.find(s)
	if c == nil {
		if p.n < len(p.first) {
			p.first[p.n] = pending{series: s}
			c = &p.first[p.n]
			p.n++
		} else {
			p.more = append(p.more, pending{series: s})
			c = &p.more[len(p.more)-1]
		}
	}
	if queued {
		c.left++
	}
}

func (p *PendingTally) find(s Series) *pending {
	for i := range p.n {
		if p.first[i].series == s {
			return &p.first[i]
		}
	}
	for i := range p.more {
		if p.more[i].series == s {
			return &p.more[i]
		}
	}
	return nil
}

// Each calls fn with every series counted and its entries left queued.
func (p *PendingTally) Each(fn func(s Series, left int)) {
	for i := range p.n {
		fn(p.first[i].series, p.first[i].left)
	}
	for _, c := range p.more {
		fn(c.series, c.left)
	}
}
