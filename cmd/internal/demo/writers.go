package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
)

// writer is one status writer: a field manager that owns one condition type.
type writer struct {
	manager  string
	condType string
	client   client.Client
	requests *apiserver.Requests
}

// rounds is how many times every writer changes its condition.
const rounds = 3

var writerSpecs = [][2]string{{"readiness", "Ready"}, {"networking", "Reachable"}, {"storage", "Bound"}}

func (s *Walkthrough) writers() ([]*writer, error) {
	var out []*writer
	for _, spec := range writerSpecs {
		c, requests, err := s.Env.CountingClient()
		if err != nil {
			return nil, err
		}
		out = append(out, &writer{manager: spec[0], condType: spec[1], client: c, requests: requests})
	}
	return out, nil
}

// statusIn returns the status a writer sets in a round: it flips every round,
// so every write changes something.
func statusIn(round int) metav1.ConditionStatus {
	if round%2 == 0 {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// observeAll has every writer read the object before any of them writes, as
// reconciles running at the same time do: each decides from a snapshot that
// lacks what the others are about to write.
func observeAll(ctx context.Context, ws []*writer, key client.ObjectKey) ([]*v1alpha1.Widget, error) {
	var snapshots []*v1alpha1.Widget
	for _, w := range ws {
		obj := &v1alpha1.Widget{}
		if err := w.client.Get(ctx, key, obj); err != nil {
			return nil, err
		}
		snapshots = append(snapshots, obj)
	}
	return snapshots, nil
}

// lostAfterRound counts the writers whose condition of this round is not on the object.
func lostAfterRound(ctx context.Context, c client.Client, key client.ObjectKey, ws []*writer, round int) (int, *v1alpha1.Widget, error) {
	obj := &v1alpha1.Widget{}
	if err := c.Get(ctx, key, obj); err != nil {
		return 0, nil, err
	}
	lost := 0
	for _, w := range ws {
		if c := meta.FindStatusCondition(obj.Status.Conditions, w.condType); c == nil || c.Status != statusIn(round) {
			lost++
		}
	}
	return lost, obj, nil
}

// roundLine shows the conditions on the object after a round and names the
// writers' updates that are not there: conditions that vanished, and
// conditions that still show an older value than their writer set.
func roundLine(obj *v1alpha1.Widget, ws []*writer, round int) string {
	line := strings.Join(conditionTypes(obj), " ")
	if line == "" {
		line = "no conditions"
	}
	var vanished, stale []string
	for _, w := range ws {
		switch c := meta.FindStatusCondition(obj.Status.Conditions, w.condType); {
		case c == nil:
			vanished = append(vanished, fmt.Sprintf("%s (set by %s)", w.condType, w.manager))
		case c.Status != statusIn(round):
			stale = append(stale, fmt.Sprintf("%s (%s set %s)", w.condType, w.manager, statusIn(round)))
		}
	}
	if len(vanished) > 0 {
		line += "; vanished: " + strings.Join(vanished, ", ")
	}
	if len(stale) > 0 {
		line += "; older value back: " + strings.Join(stale, ", ")
	}
	return line
}

func stepStatusapplyWriters(ctx context.Context, s *Walkthrough) (string, error) {
	ws, err := s.writers()
	if err != nil {
		return "", err
	}
	obj, err := createWidget(ctx, ws[0].client, s.Namespace, "shared-ssa")
	if err != nil {
		return "", err
	}
	key := client.ObjectKeyFromObject(obj)
	lost, applies, gets := 0, 0, 0
	for round := range rounds {
		snapshots, err := observeAll(ctx, ws, key)
		if err != nil {
			return "", err
		}
		for i, w := range ws {
			applier, err := newApplier(w.client)
			if err != nil {
				return "", err
			}
			b := batcher.New(applier)
			if err := batcher.Status(b, snapshots[i], w.manager, setConditionMutator(w.condType, statusIn(round))); err != nil {
				return "", err
			}
			w.requests.Reset()
			if err := b.Flush(ctx); err != nil {
				return "", err
			}
			applies += w.requests.Count("apply")
			gets += w.requests.Count("get")
		}
		n, final, err := lostAfterRound(ctx, ws[0].client, key, ws, round)
		if err != nil {
			return "", err
		}
		lost += n
		fmt.Fprintf(s.Out, "      round %d: %s\n", round+1, roundLine(final, ws, round))
	}
	if lost != 0 {
		return "", fmt.Errorf("%d writer updates were lost; statusapply must lose none", lost)
	}
	if applies != rounds*len(ws) || gets != 0 {
		return "", fmt.Errorf("sent %d applies and %d GETs, want %d applies and no GET", applies, gets, rounds*len(ws))
	}
	return fmt.Sprintf("0 of %d writer updates lost; %d applies, one per writer and change, 0 GETs to write", rounds*len(ws), applies), nil
}

func stepMergePatchWriters(ctx context.Context, s *Walkthrough) (string, error) {
	ws, err := s.writers()
	if err != nil {
		return "", err
	}
	obj, err := createWidget(ctx, ws[0].client, s.Namespace, "shared-merge-patch")
	if err != nil {
		return "", err
	}
	key := client.ObjectKeyFromObject(obj)
	lost := 0
	for round := range rounds {
		snapshots, err := observeAll(ctx, ws, key)
		if err != nil {
			return "", err
		}
		for i, w := range ws {
			base := snapshots[i].DeepCopy()
			meta.SetStatusCondition(&snapshots[i].Status.Conditions, metav1.Condition{
				Type: w.condType, Status: statusIn(round), Reason: "Demo", Message: "set by " + w.manager,
			})
			if err := w.client.Status().Patch(ctx, snapshots[i], client.MergeFrom(base), client.FieldOwner(w.manager)); err != nil {
				return "", err
			}
		}
		n, final, err := lostAfterRound(ctx, ws[0].client, key, ws, round)
		if err != nil {
			return "", err
		}
		lost += n
		fmt.Fprintf(s.Out, "      round %d: %s\n", round+1, roundLine(final, ws, round))
	}
	if lost == 0 {
		return "", fmt.Errorf("no update was lost: the merge-patch control did not show the problem")
	}
	return fmt.Sprintf("%d of %d writer updates lost: each patch replaced the whole conditions array of its stale snapshot",
		lost, rounds*len(ws)), nil
}

func stepOwnership(ctx context.Context, s *Walkthrough) (string, error) {
	c, _, err := s.Env.CountingClient()
	if err != nil {
		return "", err
	}
	obj := &v1alpha1.Widget{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: "shared-ssa"}, obj); err != nil {
		return "", err
	}
	inspected, err := ownership.Inspect(obj)
	if err != nil {
		return "", err
	}
	owners := inspected.ConditionTypes()
	managers := make([]string, 0, len(owners))
	for m := range owners {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	fmt.Fprintf(s.Out, "      %-12s %s\n", "MANAGER", "CONDITIONS")
	for _, m := range managers {
		fmt.Fprintf(s.Out, "      %-12s %s\n", m, strings.Join(owners[m], ","))
	}
	for _, spec := range writerSpecs {
		if got := owners[spec[0]]; len(got) != 1 || got[0] != spec[1] {
			return "", fmt.Errorf("%s owns %v, want exactly [%s]", spec[0], got, spec[1])
		}
	}
	return "each writer owns exactly its own condition type", nil
}

// conditionAC is a condition as a hand-written apply configuration.
func conditionAC(condType string, st metav1.ConditionStatus) *metav1ac.ConditionApplyConfiguration {
	return metav1ac.Condition().WithType(condType).WithStatus(st).WithReason("Demo").WithMessage("set by hand").
		WithLastTransitionTime(metav1.Now())
}

// setConditionMutator contributes one condition to a writer's apply configuration.
func setConditionMutator(condType string, st metav1.ConditionStatus) widgetMutator {
	return putCondition(metav1.Condition{Type: condType, Status: st, Reason: "Demo", Message: "set through statusapply"})
}
