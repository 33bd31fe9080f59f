package soak

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// Field managers. Each writer owns one condition type (or, for the plan
// creators, one attribute key) and writes a strictly increasing sequence
// number into it, so that the checker can tell an older value from a newer one.
const (
	managerIncA    = "soak-inc-a"
	managerIncB    = "soak-inc-b"
	managerDecl    = "soak-declarative"
	managerEdit    = "soak-edit"
	managerYield   = "soak-yield"
	managerTaker   = "soak-taker"
	managerPlanner = "soak-planner" // both plan creators: one controller, two replicas
	managerBurst   = "soak-burst"
	managerBroken  = "soak-broken"
)

// takerDeclaration is what the TakeDeclared writer owns exclusively: its
// condition and status.phase, which the yielding writer also wants.
var takerDeclaration = conflicts.Declaration{
	ConditionTypes: []string{"SoakTaker"},
	Paths:          []fieldpath.Path{fieldpath.MakePathOrDie("status", "phase")},
}

// tracked is one writer's sequence number as the checker follows it: in the
// reason of its condition, or in the value of its attribute key.
type tracked struct {
	writer   string
	manager  string
	condType string
	attrKey  string
	// shared is true when another writer applies as the same manager (the
	// plan creators): then a lower value the manager still owns may be the
	// other writer's stale write, so any decrease is a lost update. (Their
	// writes are guarded: they carry the observed resourceVersion, so none of
	// them can land after a later write of the object.)
	shared bool
}

// seqOf returns the sequence number obj holds for t, and whether it holds one.
func (t tracked) seqOf(obj *v1alpha1.Widget) (int, bool) {
	var s string
	if t.condType != "" {
		c := meta.FindStatusCondition(obj.Status.Conditions, t.condType)
		if c == nil {
			return 0, false
		}
		var ok bool
		if s, ok = strings.CutPrefix(c.Reason, "Seq"); !ok {
			return -1, true
		}
	} else {
		v, ok := obj.Status.Attributes[t.attrKey]
		if !ok {
			return 0, false
		}
		s = v
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1, true
	}
	return n, true
}

// ownsValue reports whether t's manager still owns the field carrying the
// sequence number on obj: then whatever value it holds was written by that
// manager, not by someone else.
func (t tracked) ownsValue(obj *v1alpha1.Widget) bool {
	p := fieldpath.MakePathOrDie("status", "attributes", t.attrKey)
	if t.condType != "" {
		p = append(ownership.ConditionPath(t.condType), fieldpath.PathElement{FieldName: ptr("reason")})
	}
	o, err := ownership.Inspect(obj)
	if err != nil {
		return false
	}
	for _, e := range o.Owners(p) {
		if e.Manager == t.manager && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// condition is change seq of a writer owning condType: the status flips with
// every change, the reason carries the number.
func condition(condType, writer string, seq int) metav1.Condition {
	st := metav1.ConditionTrue
	if seq%2 == 1 {
		st = metav1.ConditionFalse
	}
	return metav1.Condition{Type: condType, Status: st, Reason: fmt.Sprintf("Seq%d", seq),
		Message: fmt.Sprintf("change %d of %s", seq, writer)}
}

// contributeFunc queues a writer's change seq of obj on b.
type contributeFunc func(b *batcher.Batch, obj *v1alpha1.Widget, seq int) error

// writer is one status writer of every object: a reconcile loop over the
// objects in an order of its own, each turn observing an object, queueing one
// change and flushing it.
type writer struct {
	tracked
	// primary is the process the writer runs in, except while it has one on
	// the second API server (see run.secondProcesses).
	primary    *process
	contribute contributeFunc
	// rebuildOn says which Flush errors make the writer drop its batch and
	// queue the same change again on a fresh observation; every other error
	// leaves the entry queued for the next Flush.
	rebuildOn func(error) bool
	rnd       *rand.Rand
	objs      []objectState
}

// objectState is what a writer remembers of one object between turns.
type objectState struct {
	// seq is the last sequence number the writer used.
	seq int
	// queued is the change not yet landed (0: none).
	queued int
	// batch holds it; proc is the process the batch belongs to.
	batch *batcher.Batch
	proc  *process
}

func newWriter(t tracked, seed uint64, objects int, primary *process, contribute contributeFunc) *writer {
	h := fnv.New64a()
	_, _ = h.Write([]byte(t.writer))
	return &writer{
		tracked: t, primary: primary, contribute: contribute,
		rebuildOn: func(error) bool { return false },
		rnd:       rand.New(rand.NewPCG(seed, h.Sum64())),
		objs:      make([]objectState, objects),
	}
}

// loop runs turns over every object until ctx ends.
func (w *writer) loop(ctx context.Context, r *run) {
	for ctx.Err() == nil {
		for _, i := range w.rnd.Perm(len(w.objs)) {
			if ctx.Err() != nil {
				return
			}
			if err := w.turn(ctx, r, i); err != nil {
				r.pause(ctx, w.rnd)
			}
		}
	}
}

// turn is one reconcile of object i: flush the change still queued, or
// observe the object and queue the next change, then flush.
func (w *writer) turn(ctx context.Context, r *run, i int) error {
	st := &w.objs[i]
	p := w.where(r)
	if st.batch != nil && st.proc != p {
		// The writer moved to the other API server: as a restarted process
		// would, it queues the change again from a fresh observation.
		st.batch = nil
	}
	if st.batch == nil {
		obj := &v1alpha1.Widget{}
		if err := p.get(ctx, r.key(i), obj); err != nil {
			return err
		}
		if st.queued == 0 {
			st.seq++
			st.queued = st.seq
		}
		b := batcher.New(p.applier, batcher.WithResultHook(r.stats.hook))
		if err := w.contribute(b, obj, st.queued); err != nil {
			r.checker.violate("%s: queueing change %d of %s: %v", w.writer, st.queued, obj.Name, err)
			return err
		}
		st.batch, st.proc = b, p
		r.think(ctx, w.rnd)
	}
	err := r.flush(ctx, w.rnd, st.batch)
	if len(st.batch.Pending()) == 0 {
		r.landedChange(w.tracked, i, st.queued)
		st.batch, st.queued = nil, 0
		return nil
	}
	if err == nil {
		err = errStillQueued
	}
	if w.rebuildOn(err) {
		st.batch = nil
	}
	return err
}

var errStillQueued = errors.New("entry still queued after a Flush without error")

// settle is the writer's quiet phase, once faults have stopped: its queued
// changes are flushed until they land, then it makes one more change of every
// object, which must land as well. It returns the changes that were still
// queued after attempts turns of their object.
func (w *writer) settle(ctx context.Context, r *run, attempts int) []string {
	var stuck []string
	for i := range w.objs {
		st := &w.objs[i]
		final, landed := false, false
		for range attempts {
			if st.queued == 0 {
				if final {
					landed = true
					break
				}
				final = true
			}
			if err := w.turn(ctx, r, i); err != nil {
				r.pause(ctx, w.rnd)
			}
		}
		if !landed && st.queued == 0 && final {
			landed = true
		}
		if !landed {
			stuck = append(stuck, fmt.Sprintf("%s: change %d of %s still queued", w.writer, st.queued, r.key(i).Name))
		}
	}
	return stuck
}

// The writers, one per kind of contribution the library offers.

// incremental queues the condition and the attribute of the writer as two
// mutators of one entry: it keeps what it applied before and adds to it.
func incremental(t tracked) contributeFunc {
	return func(b *batcher.Batch, obj *v1alpha1.Widget, seq int) error {
		return errors.Join(
			batcher.Status(b, obj, t.manager, widgets.PutCondition(condition(t.condType, t.writer, seq))),
			batcher.Status(b, obj, t.manager, func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				widgets.Status(ac).WithAttributes(map[string]string{t.writer: strconv.Itoa(seq)})
				return nil
			}))
	}
}

// declarative states the writer's whole intent every time: what it leaves
// out it gives up.
func declarative(t tracked) contributeFunc {
	return func(b *batcher.Batch, obj *v1alpha1.Widget, seq int) error {
		return batcher.Status(b, obj, t.manager, widgets.PutCondition(condition(t.condType, t.writer, seq)), ssa.Declarative)
	}
}

// edit is a status function written for merge patches, run unchanged.
func edit(t tracked) contributeFunc {
	return func(b *batcher.Batch, obj *v1alpha1.Widget, seq int) error {
		return batcher.EditStatus(b, obj, t.manager, func(o *v1alpha1.Widget) error {
			meta.SetStatusCondition(&o.Status.Conditions, condition(t.condType, t.writer, seq))
			return nil
		})
	}
}

// phaseWriter queues the writer's condition and status.phase under policy:
// the yielding and the declared-taking writers both want the phase.
func phaseWriter(t tracked, policy conflicts.Policy) contributeFunc {
	return func(b *batcher.Batch, obj *v1alpha1.Widget, seq int) error {
		return errors.Join(
			batcher.Status(b, obj, t.manager, widgets.PutCondition(condition(t.condType, t.writer, seq)), ssa.OnConflict(policy)),
			batcher.Status(b, obj, t.manager, func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				widgets.Status(ac).WithPhase(fmt.Sprintf("%s-%d", t.writer, seq))
				return nil
			}, ssa.OnConflict(policy)))
	}
}

// planner creates the object's plan when it observes none and records its
// sequence number in its attribute key, all in one guarded entry. Both plan
// creators apply as the same manager, so the entry starts from what either
// applied last: only the guard keeps a stale observation from writing the
// other replica's key back to an older value, or from replacing its plan.
// Unguarded (the broken mode), both do.
func planner(t tracked, guarded bool) contributeFunc {
	var opts []ssa.ApplyOption
	if guarded {
		opts = append(opts, ssa.Guarded)
	}
	return func(b *batcher.Batch, obj *v1alpha1.Widget, seq int) error {
		return errors.Join(
			batcher.Status(b, obj, t.manager, widgets.PlanFor(fmt.Sprintf("%s-%d", t.writer, seq), "provision", "serve"), opts...),
			batcher.Status(b, obj, t.manager, func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
				widgets.Status(ac).WithAttributes(map[string]string{t.attrKey: strconv.Itoa(seq)})
				return nil
			}, opts...))
	}
}

// rebuildPlanner drops a plan creator's batch when its object is gone or was
// replaced: a guarded entry never lands on the successor, and a plan decided
// from the predecessor must not.
func rebuildPlanner(err error) bool {
	return apierrors.IsNotFound(err) || errors.Is(err, batcher.ErrReplaced)
}

// mergePatcher is the broken writer of the control: it reads an object, holds
// the snapshot while others write, then sets its condition on the snapshot and
// sends a JSON merge patch, which carries the whole conditions list as the
// snapshot had it.
func mergePatcher(ctx context.Context, r *run, p *process, rnd *rand.Rand) {
	seq := 0
	for ctx.Err() == nil {
		i := rnd.IntN(len(r.names))
		obj := &v1alpha1.Widget{}
		if err := p.get(ctx, r.key(i), obj); err != nil {
			r.pause(ctx, rnd)
			continue
		}
		base := obj.DeepCopy()
		r.sleep(ctx, rnd, 300)
		seq++
		meta.SetStatusCondition(&obj.Status.Conditions, condition("SoakBroken", "broken", seq))
		pctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_ = p.client.Status().Patch(pctx, obj, client.MergeFrom(base), client.FieldOwner(managerBroken))
		cancel()
	}
}
