package ssa

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/internal/batching"
	"github.com/statusapply/statusapply/internal/objects"
)

// lookRemembered answers, before a run's costlier set-up, an apply that
// changes nothing from the state remembered at exactly observed's
// resourceVersion: most reconciles change nothing. It is the first attempt's
// typed build taken early, on a state needing no check against observed (see
// owned.go); any other case is left to the run, which gets a changed intent
// as built so the mutators run once. Only the object t names is checked: only
// a run that checked t remembered the state.
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

// edit runs tb's mutators on the build's own copy of f's apply configuration
// and reports whether the result still equals f's.
func (f *acForm) edit(tb *batching.TypedBuild, observed client.Object) (ac any, same bool, err error) {
	ac = deepCopyAC(f.ac)
	if err := tb.Mutate(ac, observed); err != nil {
		return nil, false, err
	}
	return ac, f.lay.equalAC(ac, f.ac), nil
}
