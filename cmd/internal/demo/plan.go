package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

func stepPlanRace(ctx context.Context, s *Walkthrough) (string, error) {
	c, requests, err := s.Env.CountingClient()
	if err != nil {
		return "", err
	}
	applier, err := newApplier(c)
	if err != nil {
		return "", err
	}
	reconciles := []string{"reconcile-1", "reconcile-2"}

	// Blind: both reconciles observe no plan, both apply one.
	blind, err := createWidget(ctx, c, s.Namespace, "plan-blind")
	if err != nil {
		return "", err
	}
	snapshots, err := observeTwice(ctx, c, client.ObjectKeyFromObject(blind))
	if err != nil {
		return "", err
	}
	var written []string
	for i, id := range reconciles {
		if snapshots[i].Status.Plan != nil {
			continue
		}
		ac := acv1alpha1.Widget(blind.Name, blind.Namespace).WithStatus(acv1alpha1.WidgetStatus().
			WithPlan(acv1alpha1.WidgetPlan().WithID(id).WithCreatedBy(id).WithSteps("provision", "configure")))
		if err := c.Status().Apply(ctx, ac, client.FieldOwner("planner")); err != nil {
			return "", err
		}
		written = append(written, id)
	}
	fmt.Fprintf(s.Out, "      blind:   plans written by %s; the second overwrote the first\n", strings.Join(written, " and "))
	if len(written) != 2 {
		return "", errors.New("the blind control did not write two plans")
	}

	// Guarded: the same two reconciles, the apply carrying the observed resourceVersion.
	guarded, err := createWidget(ctx, c, s.Namespace, "plan-guarded")
	if err != nil {
		return "", err
	}
	key := client.ObjectKeyFromObject(guarded)
	snapshots, err = observeTwice(ctx, c, key)
	if err != nil {
		return "", err
	}
	requests.Reset()
	for i, id := range reconciles {
		b := batcher.New(applier)
		if err := batcher.Status(b, snapshots[i], "planner", planFor(id, "provision", "configure"), ssa.Guarded); err != nil {
			return "", err
		}
		if err := b.Flush(ctx); err != nil {
			return "", err
		}
	}
	applies, rereads := requests.Count("apply"), requests.Count("get")
	final := &v1alpha1.Widget{}
	if err := c.Get(ctx, key, final); err != nil {
		return "", err
	}
	if final.Status.Plan == nil || final.Status.Plan.ID != reconciles[0] || applies != 2 {
		return "", fmt.Errorf("guarded: plan %+v after %d applies, want exactly one plan from %s", final.Status.Plan, applies, reconciles[0])
	}
	fmt.Fprintf(s.Out, "      guarded: plan %q; the second reconcile got 409, re-read, saw the plan and wrote nothing (%d applies, %d re-read)\n",
		final.Status.Plan.ID, applies, rereads)
	return "blind: 2 plans written for 1 object; guarded: exactly 1", nil
}

// observeTwice reads the object twice, as two reconciles fired in close
// succession do before either writes.
func observeTwice(ctx context.Context, c client.Client, key client.ObjectKey) ([]*v1alpha1.Widget, error) {
	var out []*v1alpha1.Widget
	for range 2 {
		w := &v1alpha1.Widget{}
		if err := c.Get(ctx, key, w); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}
