package ssa

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/fieldsets"
	"github.com/statusapply/statusapply/ownership"
)

// ReasonFieldsRecovered is the reason of the Normal Event an Applier records
// when a field manager takes back from before-first-apply the fields of its
// intent (see Applier.Apply).
const ReasonFieldsRecovered = "StatusFieldsRecovered"

// When an object's managedFields are lost (cleared by a person or a tool), the
// next apply makes the API server attribute every field to before-first-apply,
// an Update owner: an apply then only shares its fields with it, so omitting
// one no longer deletes it, and an Edit may not remove what it holds. A manager
// that finds before-first-apply holding fields of its intent takes exactly
// those back, in one managedFields rewrite guarded by resourceVersion that
// moves them from before-first-apply's entry to its own: no field is ever
// without an owner, and no other manager gives anything up.

// holdsBeforeFirstApply reports whether obj's managedFields have a
// before-first-apply entry, decoding no field set: asked once per owned state.
func holdsBeforeFirstApply(obj client.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return ownership.HoldsBeforeFirstApply(obj.GetManagedFields())
	}
	for e := range entryHeaders(u) {
		if e.BeforeFirstApply() {
			return true
		}
	}
	return false
}

// intentFields is what t's manager claims with in, or owns when in changes
// nothing, and what it owns now (st), within what an apply to t writes.
func (a *Applier) intentFields(t Target, st *ownedState, in *prepared) (*fieldpath.Set, error) {
	set := fieldpath.NewSet()
	if len(st.entry) > 0 {
		owned, err := decodeFieldSet(st.entry)
		if err != nil {
			return nil, fmt.Errorf("extracting what %q owns: %w", t.Manager, err)
		}
		set = owned
	}
	if !in.unchanged {
		content := in.content
		if content == nil {
			if err := json.Unmarshal(in.body, &content); err != nil {
				return nil, fmt.Errorf("decoding the intent: %w", err)
			}
		}
		u := &unstructured.Unstructured{Object: content}
		u.SetGroupVersionKind(t.GVK)
		tv, err := a.tc.ObjectToTyped(u, typed.AllowDuplicates)
		if err != nil {
			return nil, intentSchemaError(t, err)
		}
		claimed, err := tv.ToFieldSet()
		if err != nil {
			return nil, fmt.Errorf("%w: the fields of the intent: %w", ErrInvalidInput, err)
		}
		set = set.Union(claimed)
	}
	if t.Subresource == StatusSubresource {
		set = fieldsets.Subtree(set, ownership.StatusPath())
	}
	return set, nil
}

// takeBack moves to t's manager what before-first-apply holds on obs among
// exact, and at or below the paths of below, with one managedFields patch
// guarded by obs's resourceVersion, and reports it. It returns the object as
// patched, or nil when there was nothing to take; a 409 is returned as is.
func (r *applyRun) takeBack(ctx context.Context, obs client.Object, exact, below *fieldpath.Set) (*unstructured.Unstructured, error) {
	mfs := obs.GetManagedFields()
	if len(mfs) == 0 {
		return nil, nil // unreadable entries: nothing is moved on a guess
	}
	out, taken, err := ownership.HandBack(mfs, r.t.Manager, string(r.t.Subresource), r.t.GVK.GroupVersion().String(),
		exact, below, time.Now())
	if err != nil {
		return nil, fmt.Errorf("taking fields back from %s: %w", ownership.BeforeFirstApplyManager, err)
	}
	if taken.Empty() {
		return nil, nil
	}
	patch, err := ownership.ManagedFieldsPatch(out, obs.GetResourceVersion())
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.t.GVK)
	u.SetNamespace(r.t.Namespace)
	u.SetName(r.t.Name)
	release, err := r.lanes.acquire(ctx, r.t.Object())
	if err != nil {
		return nil, err
	}
	if err := ended(ctx); err != nil {
		release()
		return nil, err
	}
	// managedFields are written through the main resource only.
	err = r.client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(r.t.Manager))
	release()
	if err != nil {
		return nil, outcomeUnknown(ctx, err)
	}
	r.recovered(obs, taken)
	return u, nil
}

// recovered counts, logs and records as an Event fields taken back.
func (r *applyRun) recovered(obs client.Object, taken *fieldpath.Set) {
	r.series.recoveries.get().Inc()
	var paths []string
	taken.Leaves().Iterate(func(p fieldpath.Path) { paths = append(paths, p.String()) })
	r.logger.Info("took back from "+ownership.BeforeFirstApplyManager+" the fields of the intent",
		"target", r.t.String(), "fields", paths)
	if rec := r.cfg.recorder; rec != nil {
		note := fmt.Sprintf("manager %s took back from %s, which held them since managedFields were lost: %s",
			r.t.Manager, ownership.BeforeFirstApplyManager, strings.Join(paths, ", "))
		if len(note) > 1000 {
			note = strings.ToValidUTF8(note[:997], "") + "..."
		}
		rec.Eventf(obs, nil, corev1.EventTypeNormal, ReasonFieldsRecovered, "TakeBack", "%s", note)
	}
}

// recover takes back fields before-first-apply holds (see takeBack) before an
// apply; again asks for a rebuild on the object left in r.res.Object. took is
// false when nothing was taken: the apply goes on as it was. A stale
// resourceVersion reads the object again and retries within the guard
// backoff, guarded or not, since the rewrite itself always is; a manager that
// may not patch the object goes on without, once logged.
func (r *applyRun) recover(ctx context.Context, obs client.Object, exact, below *fieldpath.Set) (again, took bool, err error) {
	if r.opts.DryRun || r.noTakeBack {
		return false, false, nil
	}
	fresh, err := r.takeBack(ctx, obs, exact, below)
	switch {
	case err == nil && fresh == nil:
		return false, false, nil
	case err == nil:
		r.res.Object = fresh
		return true, true, nil
	case apierrors.IsConflict(err) && ended(ctx) == nil:
		again, err = r.staleRetry(ctx, obs, err, true)
		return again, true, err
	case apierrors.IsForbidden(err):
		r.noTakeBack = true
		r.logger.Info("cannot take back fields "+ownership.BeforeFirstApplyManager+" holds: patching the object is forbidden",
			"target", r.t.String(), "error", err.Error())
		return false, false, nil
	}
	return false, false, err
}

// recoverBefore is recover for what the intent claims and the manager owns,
// called when obs shows before-first-apply at all (st.beforeFirstApply).
func (r *applyRun) recoverBefore(ctx context.Context, st *ownedState, obs client.Object, in *prepared) (again, took bool, err error) {
	want, err := r.intentFields(r.t, st, in)
	if err != nil {
		return false, false, err
	}
	return r.recover(ctx, obs, want, nil)
}

// recoverRemoved is recover for a removal of fields, held, that besides the
// manager only before-first-apply holds; err is the refusal that stands
// otherwise, returned as is when held is nil.
func (r *applyRun) recoverRemoved(ctx context.Context, obs client.Object, held *fieldpath.Set, err error) (again bool, _ error) {
	if held == nil {
		return false, err
	}
	again, took, rerr := r.recover(ctx, obs, nil, held)
	switch {
	case rerr != nil:
		return false, rerr
	case !took:
		return false, err
	}
	return again, nil
}

// recoverAfter takes back, after an apply, what before-first-apply holds of
// what the manager now owns: the apply to an object without managedFields
// made the API server attribute every field to it. A race only postpones it
// to the next apply, which finds before-first-apply before sending.
func (r *applyRun) recoverAfter(ctx context.Context, resp *answer) {
	if r.opts.DryRun || r.noTakeBack || !resp.holdsBeforeFirstApply() {
		return
	}
	obj, err := resp.object()
	if err != nil {
		return
	}
	raw, found, err := appliedEntry(obj, r.t.Manager, r.t.Subresource)
	if err != nil || !found {
		return
	}
	owned, err := decodeFieldSet(raw)
	if err != nil {
		return
	}
	if r.t.Subresource == StatusSubresource {
		owned = fieldsets.Subtree(owned, ownership.StatusPath())
	}
	fresh, err := r.takeBack(ctx, obj, owned, nil)
	switch {
	case apierrors.IsForbidden(err):
		r.noTakeBack = true
		r.logger.Info("cannot take back fields "+ownership.BeforeFirstApplyManager+" holds: patching the object is forbidden",
			"target", r.t.String(), "error", err.Error())
		return
	case err != nil:
		r.debug("taking back fields from "+ownership.BeforeFirstApplyManager+" after the apply failed; the next apply does",
			"error", err.Error())
		return
	case fresh == nil:
		return
	}
	ans, err := answerFromUnstructured(fresh, r.like, r.t)
	if err != nil {
		return
	}
	if ans.raw, err = fresh.MarshalJSON(); err != nil {
		ans.raw = nil
	}
	r.res.answered(ans)
}

// takesBack reports whether this run may still take fields back from
// before-first-apply: not in a dry run, nor once the rewrite was refused.
func (r *applyRun) takesBack() bool { return !r.opts.DryRun && !r.noTakeBack }

// ownedBeforeFirstApply reports whether c's owner is before-first-apply, the
// API server's attribution of fields whose managedFields were lost, no writer.
func ownedBeforeFirstApply(c conflicts.Conflict) bool {
	return ownership.Entry{Manager: c.Manager, Operation: c.Operation}.BeforeFirstApply()
}

// onlyBeforeFirstApply reports whether the conflicts are some, all with
// before-first-apply.
func onlyBeforeFirstApply(cs []conflicts.Conflict) bool {
	return len(cs) > 0 && !slices.ContainsFunc(cs, func(c conflicts.Conflict) bool { return !ownedBeforeFirstApply(c) })
}

// recoverConflict meets a field-manager conflict that names before-first-apply
// alone. An apply to an object without managedFields makes the API server
// attribute every field to before-first-apply first, so an apply that changes
// a value conflicts with that attribution, which, refused, is not stored:
// there was nothing to take back before sending. recoverConflict reads the
// object again; when it still has no managedFields, an apply claiming nothing,
// guarded by the uid and resourceVersion read, has the API server store the
// attribution (the manager owned nothing, so it releases nothing). The attempt
// that follows takes back the fields of the intent (recoverBefore) and sends
// it again: once per Apply. took is false when the conflict is not for it (a
// real manager named, a dry run, a manager refused the rewrite): the conflict
// policy decides.
func (r *applyRun) recoverConflict(ctx context.Context, obs client.Object, sendErr error) (again, took bool, err error) {
	if !r.takesBack() || r.conflictRecovered {
		return false, false, nil
	}
	cerr, ok := conflicts.FromError(sendErr, r.t.Manager, r.t.Object())
	if !ok || !onlyBeforeFirstApply(cerr.Conflicts) {
		return false, false, nil
	}
	r.conflictRecovered = true
	fresh, err := r.read(ctx, r.t, r.series)
	if err != nil {
		return false, true, err
	}
	if fresh.GetUID() != obs.GetUID() {
		return false, true, fmt.Errorf("the observed object (uid %s) was deleted: %w", obs.GetUID(),
			apierrors.NewNotFound(r.groupResource(r.t.GVK), r.t.Name))
	}
	r.res.Object = fresh
	if ownership.HasManagedFields(fresh) {
		return true, true, nil // before-first-apply, or a change since: built again on it
	}
	again, err = r.seedThenRebuild(ctx, fresh, &r.conflictRecovered)
	return again, true, err
}

// seedsRemoval reports whether a removal on obs, read from the API server
// without any managedFields, may have the attribution stored first: not in a
// dry run, nor once the managedFields rewrite was refused or the attribution
// seeded, and only while the manager owns nothing (st), which an apply
// claiming nothing then releases.
func (r *applyRun) seedsRemoval(st *ownedState, obs client.Object) bool {
	return r.takesBack() && !r.removalSeeded && r.reread && len(st.entry) == 0 && !ownership.HasManagedFields(obs)
}

// seedRemoval meets a removal whose owners are unknown because obs, read
// again, has no managedFields at all: it has the API server store the
// attribution to before-first-apply (seed), and again asks for a rebuild on
// the object it left, where the fields before-first-apply alone holds are
// taken back (recoverRemoved) and the removal goes ahead; a real manager's
// field refuses it as on any object. refusal is returned as is when the
// removal may not seed (see seedsRemoval). A stale resourceVersion reads the
// object again and retries within the guard backoff.
func (r *applyRun) seedRemoval(ctx context.Context, st *ownedState, obs client.Object, refusal error) (again bool, err error) {
	if !r.seedsRemoval(st, obs) {
		return false, refusal
	}
	return r.seedThenRebuild(ctx, obs, &r.removalSeeded)
}

// seedThenRebuild has the attribution stored on obs (seed) and asks for a
// rebuild on the object it left. once is the run's flag that lets a recovery
// seed once per Apply: a write in between clears it, reads the object again
// and retries within the guard backoff, to meet the conflict or removal anew.
func (r *applyRun) seedThenRebuild(ctx context.Context, obs client.Object, once *bool) (again bool, err error) {
	*once = true
	seeded, err := r.seed(ctx, obs)
	switch {
	case err == nil:
		r.res.Object = seeded
		return true, nil
	case apierrors.IsConflict(err) && ended(ctx) == nil:
		*once = false
		return r.staleRetry(ctx, obs, err, true)
	}
	return false, err
}

// seed sends an apply of t's manager claiming no field, guarded by obs's uid
// and resourceVersion, and returns the object it left: on an object without
// managedFields, the API server attributes every field to before-first-apply.
func (r *applyRun) seed(ctx context.Context, obs client.Object) (client.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.t.GVK)
	u.SetNamespace(r.t.Namespace)
	u.SetName(r.t.Name)
	u.SetUID(obs.GetUID())
	u.SetResourceVersion(obs.GetResourceVersion())
	body, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the apply configuration: %w", err)
	}
	r.res.Attempts++
	resp, err := r.send(ctx, r.t, &prepared{body: body}, r.like, false, r.sendOptions())
	if err != nil {
		return nil, err
	}
	r.series.applies.get().Inc()
	r.debug("applied nothing, for the API server to attribute the fields to "+ownership.BeforeFirstApplyManager,
		"resourceVersion", resp.resourceVersion())
	return resp.object()
}
