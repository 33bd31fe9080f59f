package ssa

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// steady answers an apply that changes nothing from what the Applier
// remembers, without the machinery of a run: most reconciles change
// nothing, and for them that machinery cost more than deciding it. It takes
// the path a run's first attempt would take to the same answer: the typed
// build, on the typed form of the state remembered at observed's
// resourceVersion (never at another one: only there does the state need no
// check against observed, see owned.go). Wherever that path would go
// elsewhere (no such state, a guarded or yielding apply, a dry run, a
// declarative build, a Mutate that declines), ok is false and the run does
// all of it, as it would have. An intent that changed something is handed to
// the run as built, so that the mutators run once. It works on the copy of
// the form an earlier unchanged build left (see acForm.spare) and declines
// when there is none, as right after an apply: a reconcile that changes
// something pays for no look before its run.
//
// What the run checks and steady does not is checked by equality: an intent
// equal to the form names the form's object, which the run checked when it
// remembered it, and holds the conditions the API server accepted from it.
// Of the target, steady checks only what a remembered state does not vouch
// for: states are remembered only by runs that checked their targets, and
// the one found is under t's own manager and subresource, so those passed
// (Target.Validate); the kind and the name are checked here, as Validate
// checks them (objectError).
//
// answered is true when steady answered the apply: it changed nothing, or
// (with err) the build failed. Apply's Result is then the observed object,
// with nothing sent.
func (a *Applier) steady(ctx context.Context, t *Target, observed client.Object, b Build, opts *ApplyOptions) (answered bool, built *builtIntent, err error) {
	if prev := opts.built; prev != nil {
		opts.built = nil
		if prev.typed == b.Typed {
			// Unchanged looked already, with this build, and found a
			// change: the run sends what it built.
			return false, prev, nil
		}
	}
	if b.Typed == nil || b.Func == nil || opts.Guarded || opts.DryRun || opts.AsOwner || opts.Mode != Incremental ||
		objectError(t) != nil || isNil(observed) || a.policy(t.Manager, opts).Yields() {
		return false, nil, nil
	}
	uid, rv := observed.GetUID(), observed.GetResourceVersion()
	if uid == "" || rv == "" {
		return false, nil, nil
	}
	st := a.owned.get(ownedKey{uid: uid, manager: t.Manager, sub: t.Subresource})
	if st == nil || st.rv != rv {
		return false, nil, nil
	}
	st.mu.Lock()
	f := st.last
	st.mu.Unlock()
	if f == nil || f.typ != b.Typed.Type || f.lay == nil {
		return false, nil, nil
	}
	spare := f.spare.Swap(nil)
	if spare == nil {
		// No earlier build left a copy: this is the first build on the
		// form, usually right after it was applied, and most likely to
		// change something. The run copies it.
		return false, nil, nil
	}
	if err := b.Typed.Mutate(spare.ac, observed); err != nil {
		if errors.Is(err, ErrBuildUntyped) {
			return false, nil, nil // declined before deciding anything
		}
		return true, nil, &Error{Target: *t, Err: err}
	}
	if !f.lay.equalAC(spare.ac, f.ac) {
		return false, &builtIntent{form: f, spare: spare, typed: b.Typed}, nil
	}
	f.giveBack(spare)
	skippedApply(a.logger(ctx), t, st.seriesOf(a.metrics, t), false)
	return true, nil, nil
}

// Unchanged answers an apply that would change nothing, without Apply's run:
// it is the look Apply takes first (see steady), for a caller that makes many
// applies and answers most of them here, as a batch's Flush does. The
// arguments are Apply's; opts are this apply's own, not shared with another.
//
// When Unchanged reports true, the apply is done: nothing was sent, the skip
// was counted and logged as Apply counts and logs it, and Apply must not be
// called for it; Apply's Result would have been the observed object. An error
// (with true) is the build's, as Apply would have returned it. When it
// reports false, call Apply with the same arguments: if the look ran the
// mutators and found a change, opts carries what they built, and Apply sends
// that rather than running them again (an Apply with another build, that is
// another *TypedBuild, builds its own). Nil opts are the defaults, and keep
// nothing for Apply.
func (a *Applier) Unchanged(ctx context.Context, t Target, observed client.Object, b Build, opts *ApplyOptions) (bool, error) {
	if opts == nil {
		opts = &ApplyOptions{}
	}
	answered, built, err := a.steady(ctx, &t, observed, b, opts)
	opts.built = built
	return answered, err
}

// builtIntent is an intent built by editing spare, a copy of form's apply
// configuration.
type builtIntent struct {
	form  *acForm
	spare *spareAC
	// typed is the build whose mutators edited spare: an Apply with
	// another build builds its own intent.
	typed *TypedBuild
}
