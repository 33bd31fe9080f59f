package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ssa"
)

func stepPolicies(ctx context.Context, s *Walkthrough) (string, error) {
	c, _, err := s.Env.CountingClient()
	if err != nil {
		return "", err
	}
	applier, err := newApplier(c)
	if err != nil {
		return "", err
	}
	policies := []struct {
		name   string
		policy conflicts.Policy
	}{
		{"Fail", conflicts.Fail()},
		{"Yield", conflicts.Yield()},
		{"TakeDeclared", conflicts.TakeDeclared(conflicts.Declaration{ConditionTypes: []string{"Ready"}})},
	}
	var outcomes []string
	for _, p := range policies {
		obj, err := createWidget(ctx, c, s.Namespace, "contested-"+map[string]string{"Fail": "fail", "Yield": "yield", "TakeDeclared": "take"}[p.name])
		if err != nil {
			return "", err
		}
		key := client.ObjectKeyFromObject(obj)
		// The owner's transition lies in the past, so the intruder's change
		// always touches the same fields whichever second the two writes fall in.
		owner := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithConditions(
			conditionAC("Ready", metav1.ConditionFalse).WithLastTransitionTime(metav1.NewTime(time.Now().Add(-time.Hour)))))
		if err := c.Status().Apply(ctx, owner, client.FieldOwner("owner")); err != nil {
			return "", err
		}
		if err := c.Get(ctx, key, obj); err != nil {
			return "", err
		}
		b := batcher.New(applier)
		if err := batcher.Status(b, obj, "intruder", setConditionMutator("Ready", metav1.ConditionTrue), ssa.OnConflict(p.policy)); err != nil {
			return "", err
		}
		if err := batcher.Status(b, obj, "intruder", setConditionMutator("Advice", metav1.ConditionTrue)); err != nil {
			return "", err
		}
		flushErr := b.Flush(ctx)
		after := &v1alpha1.Widget{}
		if err := c.Get(ctx, key, after); err != nil {
			return "", err
		}
		ready := meta.FindStatusCondition(after.Status.Conditions, "Ready").Status
		advice := meta.FindStatusCondition(after.Status.Conditions, "Advice") != nil
		var cerr *conflicts.Error
		switch p.name {
		case "Fail":
			if !errors.As(flushErr, &cerr) || ready != metav1.ConditionFalse || advice {
				return "", fmt.Errorf("policy Fail: Ready=%s Advice=%v: %w", ready, advice, flushErr)
			}
			// The conflict message spans lines; keep them under its first.
			fmt.Fprintf(s.Out, "      %-12s %s\n", p.name, indent(cerr.Error(), strings.Repeat(" ", 6+12+1)))
		case "Yield":
			if flushErr != nil || ready != metav1.ConditionFalse || !advice {
				return "", fmt.Errorf("policy Yield: Ready=%s Advice=%v: %w", ready, advice, flushErr)
			}
			fmt.Fprintf(s.Out, "      %-12s Advice landed, Ready stays the owner's (%s)\n", p.name, ready)
		case "TakeDeclared":
			if flushErr != nil || ready != metav1.ConditionTrue || !advice {
				return "", fmt.Errorf("policy TakeDeclared: Ready=%s Advice=%v: %w", ready, advice, flushErr)
			}
			fmt.Fprintf(s.Out, "      %-12s Ready, declared, was taken by force (%s); nothing undeclared was forced\n", p.name, ready)
		}
		outcomes = append(outcomes, p.name)
	}
	return fmt.Sprintf("%s each did what it says; nothing was forced silently", strings.Join(outcomes, ", ")), nil
}
