package widgets

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

// LegacyWrite sets conditions (type -> status) and, unless phase is empty, the
// phase the way the controllers being migrated do: GET, change, JSON merge
// patch of /status as manager. The patch records manager as an Update owner,
// the legacy writer that migrations hand fields away from.
func LegacyWrite(ctx context.Context, c client.Client, key client.ObjectKey, manager, phase string,
	conds map[string]metav1.ConditionStatus) error {
	w, err := Get(ctx, c, key)
	if err != nil {
		return err
	}
	base := w.DeepCopy()
	for _, t := range slices.Sorted(maps.Keys(conds)) {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type: t, Status: conds[t], Reason: "Legacy", Message: "set by the legacy writer",
		})
	}
	if phase != "" {
		w.Status.Phase = phase
	}
	return c.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner(manager))
}

// LegacyWriteLocked is LegacyWrite with an optimistic lock, retried on 409:
// a legacy writer that cannot erase what others set in between, as the
// migration guide tells teams to run theirs while they migrate.
func LegacyWriteLocked(ctx context.Context, c client.Client, key client.ObjectKey, manager string,
	conds map[string]metav1.ConditionStatus) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w, err := Get(ctx, c, key)
		if err != nil {
			return err
		}
		base := w.DeepCopy()
		for _, t := range slices.Sorted(maps.Keys(conds)) {
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
				Type: t, Status: conds[t], Reason: "Legacy", Message: "set by the legacy writer",
			})
		}
		return c.Status().Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
			client.FieldOwner(manager))
	})
}

// ApplyConditions applies exactly the given conditions (type -> status) as
// manager, never forcing: a type left out is given up.
func ApplyConditions(ctx context.Context, c client.Client, key client.ObjectKey, manager string,
	conds map[string]metav1.ConditionStatus) error {
	status := acv1alpha1.WidgetStatus()
	for _, t := range slices.Sorted(maps.Keys(conds)) {
		status.WithConditions(metav1ac.Condition().WithType(t).WithStatus(conds[t]).
			WithReason("Applied").WithMessage("set by " + manager).WithLastTransitionTime(metav1.Now()))
	}
	return applyStatus(ctx, c, key, manager, status)
}

// ApplyPhase applies the phase as manager, never forcing.
func ApplyPhase(ctx context.Context, c client.Client, key client.ObjectKey, manager, phase string) error {
	return applyStatus(ctx, c, key, manager, acv1alpha1.WidgetStatus().WithPhase(phase))
}

// ApplyExisting applies the object's condition of condType verbatim as
// manager: with the same values the current owners set, manager shares their
// ownership instead of conflicting with them.
func ApplyExisting(ctx context.Context, c client.Client, key client.ObjectKey, manager, condType string) error {
	w, err := Get(ctx, c, key)
	if err != nil {
		return err
	}
	cond := meta.FindStatusCondition(w.Status.Conditions, condType)
	if cond == nil {
		return fmt.Errorf("widget %s has no condition %s to apply", key, condType)
	}
	return applyStatus(ctx, c, key, manager, acv1alpha1.WidgetStatus().WithConditions(
		metav1ac.Condition().WithType(cond.Type).WithStatus(cond.Status).WithReason(cond.Reason).
			WithMessage(cond.Message).WithLastTransitionTime(cond.LastTransitionTime)))
}

// applyStatus applies status to the Widget of key as manager, without force.
func applyStatus(ctx context.Context, c client.Client, key client.ObjectKey, manager string,
	status *acv1alpha1.WidgetStatusApplyConfiguration) error {
	return c.Status().Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(status), client.FieldOwner(manager))
}
