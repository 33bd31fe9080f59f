package ssa

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/internal/batching"
	"github.com/statusapply/statusapply/internal/objects"
)

// lookRemembered answers an apply that changes nothing from what the
// Applier remembers at exactly observed's resourceVersion, before the rest
// of a run: most reconciles change nothing, and for them a run's set-up cost
// more than the build and the comparison (see docs/benchmarks.md). It is the
// first attempt's own build, taken early: the typed path (typedPath), on the
// state remembered at observed's resourceVersion, which needs no check
// against observed (see owned.go), in a copy of its own. Wherever the run
// would go another way (no such state, a guarded, declarative or yielding
// apply, a dry run, a Mutate that declines) it leaves the apply to the run.
// An intent that changed something is handed to the run as built, so that
// the mutators run once.
//
// A state is remembered only by a run that checked its target, under the
// target's own manager and subresource, so of the target only the object it
// names is checked here, as Validate checks it.
func (a *Applier) lookRemembered(ctx context.Context, t *Target, observed client.Object, b Build, x batching.Extras, opts *ApplyOptions) (answered bool, built *builtIntent, err error) {
	if x.DryRun || x.AsOwner || opts.Mode != Incremental || !a.typedPath(b.typed, opts, a.policy(t.Manager, opts)) ||
		b.Func == nil || objectError(t) != nil || isNil(observed) {
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
	f := st.lastForm()
	if f == nil || f.typ != b.typed.Type || f.lay == nil {
		return false, nil, nil
	}
	ac, same, err := f.edit(b.typed, observed)
	if err != nil {
		if errors.Is(err, batching.ErrBuildUntyped) || errors.Is(err, objects.ErrNeedsManagedFields) {
			return false, nil, nil // the run builds it, reading the object first when it must
		}
		return true, nil, &Error{Target: *t, Err: err}
	}
	if !same {
		return false, &builtIntent{form: f, ac: ac, typed: b.typed}, nil
	}
	skippedApply(a.logger(ctx), t, a.metrics.of(t), false)
	return true, nil, nil
}

// builtIntent is an intent lookRemembered built by editing ac, a copy of
// form's apply configuration, with typed's mutators.
type builtIntent struct {
	form  *acForm
	ac    any
	typed *batching.TypedBuild
}

// edit runs tb's mutators on a copy of f's apply configuration that is the
// build's own, and reports whether the result still equals f's: the one
// incremental typed build, for lookRemembered and for a run.
func (f *acForm) edit(tb *batching.TypedBuild, observed client.Object) (ac any, same bool, err error) {
	ac = deepCopyAC(f.ac)
	if err := tb.Mutate(ac, observed); err != nil {
		return nil, false, err
	}
	return ac, f.lay.equalAC(ac, f.ac), nil
}
