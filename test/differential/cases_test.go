package differential

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

const (
	// manager is the writer whose contribution each case flushes.
	manager = "readiness"
	// other is another apply-based writer of the same objects.
	other = "networking"
	// legacy is a merge-patch writer, an Update owner of what it wrote.
	legacy = "legacy-controller"
)

// A scenario is one case: writes that prepare a fresh Widget, the
// observation the contribution is queued with, and the contribution. Every
// way runs it on a Widget of its own, prepared the same way.
type scenario struct {
	name string
	// setup are the writes before the observation.
	setup []step
	// late are the writes after it: they leave the observation stale.
	late []step
	// stripped takes the observation's managedFields away, as a cache that
	// strips them does.
	stripped bool
	intent   intent
	// want is the error class the anchors must end with.
	want errClass
	// sendsNothing: no apply, not even a dry run, may be sent.
	sendsNothing bool
}

// A step is one write of a scenario's preparation.
type step func(ctx context.Context, p *prepared) error

// applyBy applies ops as m through the Applier the harness prepares the
// Widget with, on the object as read now: that Applier remembers what m owns.
func applyBy(m string, ops ...op) step {
	return func(ctx context.Context, p *prepared) error {
		w, err := widgets.Get(ctx, p.client, p.key)
		if err != nil {
			return err
		}
		b := batcher.New(p.applier)
		for _, o := range ops {
			if err := batcher.Status(b, w, m, o.mutator); err != nil {
				return err
			}
		}
		return b.Flush(ctx)
	}
}

// legacyWrite sets conditions (type -> status, reason Legacy) as the legacy
// merge-patch writer does: GET, change, JSON merge patch of /status.
func legacyWrite(conds map[string]metav1.ConditionStatus) step {
	return func(ctx context.Context, p *prepared) error {
		return widgets.LegacyWrite(ctx, p.client, p.key, legacy, "", conds)
	}
}

var (
	reachable = setCondition("Reachable", metav1.ConditionTrue, "Routed", "a route exists")
	ready     = setCondition("Ready", metav1.ConditionTrue, "Up", "all replicas up")
	synced    = setCondition("Synced", metav1.ConditionTrue, "Done", "in sync")
	notReady  = setCondition("Ready", metav1.ConditionFalse, "Down", "a replica is down")
)

// ownTwoBesideAnother: networking owns Reachable, readiness Ready and Synced;
// readiness wrote last, so the Applier remembers its state at the object's
// resourceVersion.
var ownTwoBesideAnother = []step{applyBy(other, reachable), applyBy(manager, ready, synced)}

var scenarios = []scenario{
	{
		name:   "a manager that owns nothing sets two conditions",
		setup:  []step{applyBy(other, reachable)},
		intent: intent{ops: []op{ready, setCondition("Synced", metav1.ConditionFalse, "Behind", "two commits behind")}},
		want:   noError,
	},
	{
		name:   "a manager changes its own condition",
		setup:  ownTwoBesideAnother,
		intent: intent{ops: []op{notReady}},
		want:   noError,
	},
	{
		name:   "a manager removes its own condition",
		setup:  ownTwoBesideAnother,
		intent: intent{ops: []op{removeCondition("Synced")}},
		want:   noError,
	},
	{
		name:   "a manager removes the only condition it owns",
		setup:  []step{applyBy(other, reachable), applyBy(manager, ready)},
		intent: intent{ops: []op{removeCondition("Ready")}},
		want:   noError,
	},
	{
		name:   "a manager removes another manager's condition",
		setup:  ownTwoBesideAnother,
		intent: intent{ops: []op{removeCondition("Reachable")}},
		want:   removesForeign,
	},
	{
		// Both apply Reachable with the same values (the second keeps the
		// observed lastTransitionTime), so they share it.
		name:   "a manager removes a condition it shares with another manager",
		setup:  []step{applyBy(other, reachable), applyBy(manager, ready, reachable)},
		intent: intent{ops: []op{removeCondition("Reachable")}},
		want:   removesForeign,
	},
	{
		name:   "a manager drops its own condition from what it owns",
		setup:  ownTwoBesideAnother,
		intent: intent{ops: []op{dropCondition("Synced")}},
		want:   noError,
	},
	{
		name:   "a manager drops from what it owns a condition it shares with another manager",
		setup:  []step{applyBy(other, reachable), applyBy(manager, ready, reachable)},
		intent: intent{ops: []op{dropCondition("Reachable")}},
		want:   removesForeign,
	},
	{
		name:     "a manager drops a condition it shares through an observation without managedFields",
		setup:    []step{applyBy(other, reachable), applyBy(manager, ready, reachable)},
		stripped: true,
		intent:   intent{ops: []op{dropCondition("Reachable")}},
		want:     removesForeign,
	},
	{
		name:   "a manager restates what it owns",
		setup:  []step{applyBy(other, reachable), applyBy(manager, ready, setPhase("Running"))},
		intent: intent{ops: []op{ready, setPhase("Running")}},
		want:   noError,
	},
	{
		name:   "a manager sets the phase and an attribute beside another manager's attribute",
		setup:  []step{applyBy(other, setAttribute("zone", "a")), applyBy(manager, setPhase("Pending"))},
		intent: intent{ops: []op{setPhase("Running"), setAttribute("seen", "1")}},
		want:   noError,
	},
	{
		name:   "a manager changes a condition a legacy merge-patch writer owns",
		setup:  []step{legacyWrite(widgets.CS("Ready", "True")), applyBy(manager, synced)},
		intent: intent{ops: []op{notReady, synced}},
		want:   fieldConflict,
	},
	{
		name:   "a manager that yields changes a condition a legacy merge-patch writer owns",
		setup:  []step{legacyWrite(widgets.CS("Ready", "True")), applyBy(manager, synced)},
		intent: intent{ops: []op{notReady, setPhase("Degraded")}, opts: []ssa.ApplyOption{ssa.OnConflict(conflicts.Yield())}},
		want:   noError,
	},
	{
		name:         "a manager sets a condition with an invalid reason",
		setup:        []step{applyBy(manager, ready)},
		intent:       intent{ops: []op{setCondition("Ready", metav1.ConditionFalse, "not a reason", "spaces are not allowed")}},
		want:         invalidInput,
		sendsNothing: true,
	},
	{
		name:   "a guarded manager decides on a stale observation",
		setup:  []step{applyBy(manager, ready)},
		late:   []step{applyBy(other, reachable)},
		intent: intent{ops: []op{countConditions("Counted")}, opts: []ssa.ApplyOption{ssa.Guarded}},
		want:   noError,
	},
	{
		name:     "a manager writes status through an observation without managedFields, another writer having written since",
		setup:    []step{applyBy(manager, ready, synced), legacyWrite(widgets.CS("Legacy", "True"))},
		stripped: true,
		intent:   intent{ops: []op{notReady, removeCondition("Synced")}},
		want:     noError,
	},
}
