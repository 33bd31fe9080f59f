package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ssa"
)

// takeOverAndRemove has the new readiness writer change Ready and then remove
// it, through statusapply, reporting what happened to the change, the removal
// (refused with ssa.ErrRemovesForeignField while another owner keeps Ready)
// and the condition.
func takeOverAndRemove(ctx context.Context, c client.Client, applier *ssa.Applier, key client.ObjectKey) (
	changeErr, removeErr error, stillThere bool, err error) {
	obj := &v1alpha1.Widget{}
	if err := c.Get(ctx, key, obj); err != nil {
		return nil, nil, false, err
	}
	b := batcher.New(applier)
	if err := batcher.Status(b, obj, "readiness", setConditionMutator("Ready", metav1.ConditionTrue)); err != nil {
		return nil, nil, false, err
	}
	changeErr = b.Flush(ctx)

	// Agree with the legacy value first, so the removal is tried even when the
	// change was refused: the writer then shares the field and gives it up.
	if err := c.Get(ctx, key, obj); err != nil {
		return nil, nil, false, err
	}
	b = batcher.New(applier)
	if err := batcher.Status(b, obj, "readiness", func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
		current := *meta.FindStatusCondition(o.Status.Conditions, "Ready")
		return ssa.SetCondition(&widgetStatus(ac).Conditions, o.Status.Conditions, current.ObservedGeneration, current)
	}); err != nil {
		return nil, nil, false, err
	}
	if err := b.Flush(ctx); err != nil {
		return nil, nil, false, err
	}
	if err := c.Get(ctx, key, obj); err != nil {
		return nil, nil, false, err
	}
	b = batcher.New(applier)
	if err := batcher.Status(b, obj, "readiness", removeCondition("Ready")); err != nil {
		return nil, nil, false, err
	}
	if removeErr = b.Flush(ctx); removeErr != nil && !errors.Is(removeErr, ssa.ErrRemovesForeignField) {
		return nil, nil, false, removeErr
	}
	if err := c.Get(ctx, key, obj); err != nil {
		return nil, nil, false, err
	}
	return changeErr, removeErr, meta.FindStatusCondition(obj.Status.Conditions, "Ready") != nil, nil
}

// ownersLine renders manager -> condition types as "readiness owns Ready,
// networking owns Reachable", managers sorted.
func ownersLine(owners map[string][]string) string {
	var parts []string
	for _, m := range slices.Sorted(maps.Keys(owners)) {
		parts = append(parts, m+" owns "+strings.Join(owners[m], ", "))
	}
	if len(parts) == 0 {
		return "no manager owns a condition"
	}
	return strings.Join(parts, "; ")
}

// legacyWrites has a merge-patch controller write Ready and Reachable, as it did
// before statusapply.
func (s *Walkthrough) legacyWrites(ctx context.Context, c client.Client, name string) (client.ObjectKey, error) {
	obj, err := createWidget(ctx, c, s.Namespace, name)
	if err != nil {
		return client.ObjectKey{}, err
	}
	base := obj.DeepCopy()
	for _, t := range []string{"Ready", "Reachable"} {
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: "Legacy"})
	}
	return client.ObjectKeyFromObject(obj), c.Status().Patch(ctx, obj, client.MergeFrom(base), client.FieldOwner("legacy-controller"))
}

func stepMigration(ctx context.Context, s *Walkthrough) (string, error) {
	c, _, err := s.Env.CountingClient()
	if err != nil {
		return "", err
	}
	applier, err := newApplier(c)
	if err != nil {
		return "", err
	}

	// Before: the legacy owner refuses the change and keeps the removed condition alive.
	before, err := s.legacyWrites(ctx, c, "legacy-unmigrated")
	if err != nil {
		return "", err
	}
	changeErr, removeErr, stillThere, err := takeOverAndRemove(ctx, c, applier, before)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.Out, "      before migration: change refused=%v (%s), removal refused=%v, Ready left behind=%v\n",
		changeErr != nil, conflicts.Classify(changeErr), removeErr != nil, stillThere)
	if changeErr == nil || removeErr == nil || !stillThere {
		return "", errors.New("the control did not show the legacy owner blocking the new writer")
	}

	// Migrate: Ready goes to readiness, Reachable to networking.
	after, err := s.legacyWrites(ctx, c, "legacy-migrated")
	if err != nil {
		return "", err
	}
	migrator, err := fleet.NewMigrator(c, fleet.Plan{Conditions: map[string]string{"Ready": "readiness", "Reachable": "networking"}},
		fleet.WithDryRun(false))
	if err != nil {
		return "", err
	}
	obj := &v1alpha1.Widget{}
	if err := c.Get(ctx, after, obj); err != nil {
		return "", err
	}
	res, err := migrator.Migrate(ctx, obj)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.Out, "      migrated: %s\n", ownersLine(res.After.ConditionTypes()))
	changeErr, removeErr, stillThere, err = takeOverAndRemove(ctx, c, applier, after)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.Out, "      after migration:  change refused=%v, removal refused=%v, Ready left behind=%v\n",
		changeErr != nil, removeErr != nil, stillThere)
	if changeErr != nil || removeErr != nil || stillThere {
		return "", fmt.Errorf("after the migration the new writer still could not change or remove its condition (left behind=%v): %w",
			stillThere, errors.Join(changeErr, removeErr))
	}
	return "before the migration the legacy owner blocks the change and the removal, and keeps the condition; after it, both work", nil
}
