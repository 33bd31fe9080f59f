package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// TestSteadyFloorSendsWhatChanged holds the steady floor to what makes it a
// floor of statusapply's design rather than a reconcile that does nothing:
// it sends one apply per field manager whose intent changed and none when
// nothing did. The control is a remembered intent made stale by hand: the
// floor compares values, so that manager's intent is sent again.
func TestSteadyFloorSendsWhatChanged(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// The observed conditions hold every condition On since a fixed time, so
	// that the On intent keeps that lastTransitionTime in every reconcile.
	since := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 1}}
	for j := range 4 {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
			Type: fmt.Sprintf("C%02d", j), Status: metav1.ConditionTrue, Reason: "On", LastTransitionTime: since,
		})
	}
	applies := map[string]int{}
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithObjects(w).WithStatusSubresource(w).Build(),
		interceptor.Funcs{SubResourceApply: func(_ context.Context, _ client.Client, _ string, _ runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			o := &client.SubResourceApplyOptions{}
			o.ApplyOpts(opts)
			applies[o.FieldManager]++
			return nil
		}})
	floor := &steadyFloor{c: c, cache: c}
	spec := ReconcileSpec{Key: client.ObjectKeyFromObject(w), Mutators: 4, On: true, Names: ManagerNames(2)}
	reconcile := func(what string, s ReconcileSpec, want map[string]int) {
		t.Helper()
		clear(applies)
		if err := floor.Reconcile(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(applies) != fmt.Sprint(want) {
			t.Fatalf("%s: applies %v, want %v", what, applies, want)
		}
	}
	reconcile("first reconcile", spec, map[string]int{"writer-0": 1, "writer-1": 1})
	reconcile("steady", spec, map[string]int{})
	*floor.applied[0].Status.Conditions[0].Message = "stale"
	reconcile("control: writer-0's remembered intent made stale", spec, map[string]int{"writer-0": 1})
	reconcile("steady again", spec, map[string]int{})
	spec.On = false
	reconcile("every condition flipped", spec, map[string]int{"writer-0": 1, "writer-1": 1})
}

// TestTurns checks the steady phase's schedule: every approach gets all its
// reconciles, in turns of at most turn, approaches in order within a round
// of turns, and one with fewer reconciles drops out once they are done.
func TestTurns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts []int
		turn   int
		want   []int
	}{
		{"even", []int{2, 2}, 1, []int{0, 1, 0, 1}},
		{"turns of two", []int{4, 3}, 2, []int{0, 0, 1, 1, 0, 0, 1}},
		{"one does fewer", []int{1, 5}, 2, []int{0, 1, 1, 1, 1, 1}},
		{"a turn longer than the phase", []int{3, 2}, 25, []int{0, 0, 0, 1, 1}},
		{"none", []int{0, 0}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := turns(tc.counts, tc.turn); !slices.Equal(got, tc.want) {
				t.Fatalf("turns(%v, %d) = %v, want %v", tc.counts, tc.turn, got, tc.want)
			}
		})
	}
}
