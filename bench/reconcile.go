package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
)

// Approach names, as they appear in results and documents.
const (
	GetPatchPerMutator = "get-patch-per-mutator"
	OptimisticPatch    = "optimistic-merge-patch"
	CAPIHelper         = "capi-patch-helper"
	CAPIHelperInMemory = "capi-patch-helper-in-memory"
	MergePatchStale    = "merge-patch-stale"
	RawApply           = "raw-apply"
	RawApplySerialized = "raw-apply-serialized"
	Statusapply        = "statusapply"
	SteadyFloor        = "steady-floor"
	StatusapplyShared  = "statusapply-shared"
	StatusapplySep     = "statusapply-separate"
	// The same two with every entry guarded, as ctrlbatch.WithFence sends a
	// fenced batch's entries (batcher.WithGuardedEntries).
	StatusapplySharedGuarded = "statusapply-shared-guarded"
	StatusapplySepGuarded    = "statusapply-separate-guarded"
)

// Phases of scenario 1.
const (
	PhaseChanging = "changing"
	PhaseSteady   = "steady"
	// PhaseBackToBack is the steady phase again, for the approaches that
	// sent nothing in it, without the wait for the informer cache between
	// one reconcile and the next (see RunReconcile).
	PhaseBackToBack = "steady, back to back"
)

// ReconcileSpec is one reconcile of scenario 1: R status functions, each
// setting one condition, spread round-robin over M field managers.
type ReconcileSpec struct {
	Key      client.ObjectKey
	Mutators int
	// On is the status every condition gets; flipping it makes every status
	// function change something.
	On bool
	// Names are the M field managers' names, made once (see ManagerNames).
	Names []string
}

// ManagerNames are the names of m field managers. A controller's field
// managers are constants: RunReconcile names them once, so that no approach
// pays for formatting a manager's name in every status function.
func ManagerNames(m int) []string {
	names := make([]string, m)
	for i := range names {
		names[i] = fmt.Sprintf("writer-%d", i)
	}
	return names
}

func (s ReconcileSpec) manager(j int) string { return s.Names[j%len(s.Names)] }

// statusFunction is status function j as a Mutator: it sets condition j
// on the intent, keeping its lastTransitionTime from the observed object.
// statusapply queues it, the steady floor runs it, as a status function
// written for statusapply would be.
func (s ReconcileSpec) statusFunction(j int) batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
		if ac.Status == nil {
			ac.WithStatus(acv1alpha1.WidgetStatus())
		}
		return ssa.SetCondition(&ac.Status.Conditions, o.Status.Conditions, o.Generation, s.condition(j, o.Generation))
	}
}

func (s ReconcileSpec) condition(j int, generation int64) metav1.Condition {
	st, reason := metav1.ConditionFalse, "Off"
	if s.On {
		st, reason = metav1.ConditionTrue, "On"
	}
	return metav1.Condition{
		Type: fmt.Sprintf("C%02d", j), Status: st, Reason: reason, ObservedGeneration: generation,
		Message: fmt.Sprintf("condition %d of %s", j, s.manager(j)),
	}
}

// Reconciler is one approach to scenario 1's reconcile.
type Reconciler interface {
	Name() string
	Reconcile(ctx context.Context, s ReconcileSpec) error
	Requests() *apiserver.Requests
}

// getPatchPerMutator is what status functions written one at a time do: each
// reads the object and merge-patches its one condition. A patch that would
// change nothing is not sent.
type getPatchPerMutator struct {
	c        client.Client
	requests *apiserver.Requests
}

func (r *getPatchPerMutator) Name() string                  { return GetPatchPerMutator }
func (r *getPatchPerMutator) Requests() *apiserver.Requests { return r.requests }

func (r *getPatchPerMutator) Reconcile(ctx context.Context, s ReconcileSpec) error {
	for j := range s.Mutators {
		w := &v1alpha1.Widget{}
		if err := r.c.Get(ctx, s.Key, w); err != nil {
			return err
		}
		base := w.DeepCopy()
		meta.SetStatusCondition(&w.Status.Conditions, s.condition(j, w.Generation))
		if equality.Semantic.DeepEqual(base.Status, w.Status) {
			continue
		}
		if err := r.c.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner(s.manager(j))); err != nil {
			return err
		}
	}
	return nil
}

// optimisticPatch stands in for a per-reconcile merge-patch batcher: one GET,
// every status function on the object, one merge patch carrying the observed
// resourceVersion, and on a 409 all of it again (client-go's DefaultRetry).
type optimisticPatch struct {
	c        client.Client
	requests *apiserver.Requests
}

func (r *optimisticPatch) Name() string                  { return OptimisticPatch }
func (r *optimisticPatch) Requests() *apiserver.Requests { return r.requests }

func (r *optimisticPatch) Reconcile(ctx context.Context, s ReconcileSpec) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &v1alpha1.Widget{}
		if err := r.c.Get(ctx, s.Key, w); err != nil {
			return err
		}
		base := w.DeepCopy()
		for j := range s.Mutators {
			meta.SetStatusCondition(&w.Status.Conditions, s.condition(j, w.Generation))
		}
		if equality.Semantic.DeepEqual(base.Status, w.Status) {
			return nil
		}
		return r.c.Status().Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
			client.FieldOwner("reconciler"))
	})
}

// capiHelper is Cluster API's util/patch: the reconcile edits the object read
// from the informer cache, and the helper works out and sends the patches.
type capiHelper struct {
	c        client.Client
	cache    client.Reader
	requests *apiserver.Requests
}

func (r *capiHelper) Name() string                  { return CAPIHelper }
func (r *capiHelper) Requests() *apiserver.Requests { return r.requests }

func (r *capiHelper) Reconcile(ctx context.Context, s ReconcileSpec) error {
	cached := &v1alpha1.Widget{}
	if err := r.cache.Get(ctx, s.Key, cached); err != nil {
		return err
	}
	// cached is this reconcile's own copy: wrap it without copying it again,
	// as a client reading CAPIWidgets from a cache would hand it over.
	obj := &CAPIWidget{Widget: *cached}
	helper, err := patch.NewHelper(obj, r.c)
	if err != nil {
		return err
	}
	for j := range s.Mutators {
		capiconditions.Set(obj, s.condition(j, obj.Generation))
	}
	return helper.Patch(ctx, obj)
}

// capiHelperInMemory is Cluster API's util/patch on an object the reconciler
// keeps in memory: each reconcile starts from the object the previous one
// ended with (helper.Patch leaves the edited object as it was), so there is
// no informer cache read per reconcile. Prepare reads it once, outside the
// measurement.
type capiHelperInMemory struct {
	c        client.Client
	obj      *CAPIWidget
	requests *apiserver.Requests
}

func (r *capiHelperInMemory) Name() string                  { return CAPIHelperInMemory }
func (r *capiHelperInMemory) Requests() *apiserver.Requests { return r.requests }

func (r *capiHelperInMemory) Prepare(ctx context.Context, key client.ObjectKey) error {
	obj := &CAPIWidget{}
	if err := r.c.Get(ctx, key, obj); err != nil {
		return err
	}
	r.obj = obj
	return nil
}

func (r *capiHelperInMemory) Reconcile(ctx context.Context, s ReconcileSpec) error {
	obj := r.obj
	if obj == nil {
		return fmt.Errorf("%s: no object in memory (Prepare was not called)", r.Name())
	}
	helper, err := patch.NewHelper(obj, r.c)
	if err != nil {
		return err
	}
	for j := range s.Mutators {
		capiconditions.Set(obj, s.condition(j, obj.Generation))
	}
	return helper.Patch(ctx, obj)
}

// preparer is a Reconciler that needs the object once before its first
// reconcile; RunReconcile calls Prepare outside the measurement.
type preparer interface {
	Prepare(ctx context.Context, key client.ObjectKey) error
}

// rawApply is a hand-written apply configuration per field manager, built from
// the cached object (to keep lastTransitionTime) and sent every reconcile.
type rawApply struct {
	c        client.Client
	cache    client.Reader
	requests *apiserver.Requests
}

func (r *rawApply) Name() string                  { return RawApply }
func (r *rawApply) Requests() *apiserver.Requests { return r.requests }

func (r *rawApply) Reconcile(ctx context.Context, s ReconcileSpec) error {
	w := &v1alpha1.Widget{}
	if err := r.cache.Get(ctx, s.Key, w); err != nil {
		return err
	}
	for m, manager := range s.Names {
		ac := acv1alpha1.Widget(w.Name, w.Namespace).WithStatus(acv1alpha1.WidgetStatus())
		for j := m; j < s.Mutators; j += len(s.Names) {
			if err := ssa.SetCondition(&ac.Status.Conditions, w.Status.Conditions, w.Generation, s.condition(j, w.Generation)); err != nil {
				return err
			}
		}
		if err := r.c.Status().Apply(ctx, ac, client.FieldOwner(manager)); err != nil {
			return err
		}
	}
	return nil
}

// statusapplyBatch is the library: a batch per reconcile, a contribution per
// status function, one Flush, on a long-lived Applier.
type statusapplyBatch struct {
	applier  *ssa.Applier
	cache    client.Reader
	requests *apiserver.Requests
}

func (r *statusapplyBatch) Name() string                  { return Statusapply }
func (r *statusapplyBatch) Requests() *apiserver.Requests { return r.requests }

func (r *statusapplyBatch) Reconcile(ctx context.Context, s ReconcileSpec) error {
	w := &v1alpha1.Widget{}
	if err := r.cache.Get(ctx, s.Key, w); err != nil {
		return err
	}
	b := batcher.New(r.applier)
	for j := range s.Mutators {
		if err := batcher.Status(b, w, s.manager(j), s.statusFunction(j)); err != nil {
			return err
		}
	}
	return b.Flush(ctx)
}

// steadyFloor is the least a steady reconcile of statusapply's design can
// do: the status functions are queued as closures and run on a copy of the
// cached object, into an apply configuration per field manager that still
// holds the previous reconcile's intent, and each is compared with a
// remembered copy of that intent; when nothing differs, nothing else
// happens. It leaves out all that a library owes besides: checking the
// target and the contributions, finding what each manager owns and whether
// it can be trusted for the object observed, metrics. No controller could
// use it as it is. It is in the bench so that statusapply's distance from
// it, in the steady phase, measures what statusapply's own machinery costs.
// When an intent differs (the changing phase) it applies it as (d) does.
type steadyFloor struct {
	c        client.Client
	cache    client.Reader
	requests *apiserver.Requests
	// per field manager: the intent the status functions edit, and a copy
	// of it as last applied.
	intents, applied []*acv1alpha1.WidgetApplyConfiguration
}

func (r *steadyFloor) Name() string                  { return SteadyFloor }
func (r *steadyFloor) Requests() *apiserver.Requests { return r.requests }

func (r *steadyFloor) Reconcile(ctx context.Context, s ReconcileSpec) error {
	cached := &v1alpha1.Widget{}
	if err := r.cache.Get(ctx, s.Key, cached); err != nil {
		return err
	}
	observed := cached.DeepCopy() // what a batch keeps: the caller may change cached
	queued := make([][]batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration], len(s.Names))
	for j := range s.Mutators {
		m := j % len(s.Names)
		queued[m] = append(queued[m], s.statusFunction(j))
	}
	if len(r.intents) != len(s.Names) {
		r.intents = make([]*acv1alpha1.WidgetApplyConfiguration, len(s.Names))
		r.applied = make([]*acv1alpha1.WidgetApplyConfiguration, len(s.Names))
	}
	for m, fns := range queued {
		if r.intents[m] == nil {
			r.intents[m] = acv1alpha1.Widget(s.Key.Name, s.Key.Namespace)
		}
		intent := r.intents[m]
		for _, fn := range fns {
			if err := fn(intent, observed); err != nil {
				return err
			}
		}
		if r.applied[m] != nil && sameConditions(intent, r.applied[m]) {
			continue
		}
		// The client decodes the response into what it sends: send a copy.
		sent, err := copyIntent(intent)
		if err != nil {
			return err
		}
		if err := r.c.Status().Apply(ctx, sent, client.FieldOwner(s.Names[m])); err != nil {
			return err
		}
		if r.applied[m], err = copyIntent(intent); err != nil {
			return err
		}
	}
	return nil
}

// copyIntent copies an intent through its JSON, as it would be sent.
func copyIntent(ac *acv1alpha1.WidgetApplyConfiguration) (*acv1alpha1.WidgetApplyConfiguration, error) {
	raw, err := json.Marshal(ac)
	if err != nil {
		return nil, err
	}
	out := &acv1alpha1.WidgetApplyConfiguration{}
	return out, json.Unmarshal(raw, out)
}

// sameConditions compares the status conditions of two intents field by
// field: all the floor's intents hold.
func sameConditions(a, b *acv1alpha1.WidgetApplyConfiguration) bool {
	if a.Status == nil || b.Status == nil || len(a.Status.Conditions) != len(b.Status.Conditions) {
		return false
	}
	for i := range a.Status.Conditions {
		x, y := &a.Status.Conditions[i], &b.Status.Conditions[i]
		if *x.Type != *y.Type || *x.Status != *y.Status || *x.Reason != *y.Reason || *x.Message != *y.Message ||
			*x.ObservedGeneration != *y.ObservedGeneration || !x.LastTransitionTime.Equal(y.LastTransitionTime) {
			return false
		}
	}
	return true
}

// ReconcileResult sums one approach's reconciles of one phase, in one round
// or, merged, in all of them.
type ReconcileResult struct {
	Approach string `json:"approach"`
	Managers int    `json:"managers"`
	Mutators int    `json:"mutators"`
	Phase    string `json:"phase"`
	// Round counts from 1; 0 in a merged result, and in results files from
	// before rounds were kept apart, which hold one merged result each.
	Round      int `json:"round,omitempty"`
	Reconciles int `json:"reconciles"`
	// AllocReconciles is how many further reconciles, not timed, Mallocs
	// and Bytes were counted over; 0 in results that counted them over the
	// timed ones.
	AllocReconciles int            `json:"allocReconciles,omitempty"`
	Wall            time.Duration  `json:"wallNs"`
	CPU             time.Duration  `json:"cpuNs"`
	Mallocs         uint64         `json:"mallocs"`
	Bytes           uint64         `json:"bytes"`
	Requests        map[string]int `json:"requests"`
}

// PerSecond is reconciles per second of reconcile wall time.
func (r ReconcileResult) PerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Reconciles) / r.Wall.Seconds()
}

// steadyTurn is how many steady reconciles an approach runs in a row before
// the next approach's turn (see RunReconcile). Taking turns reconcile by
// reconcile instead puts every other approach's code between two reconciles
// of one, which is a different measurement: it cools the caches far more.
const steadyTurn = 25

// changingTurn is how many changing reconciles an approach runs in a row
// before the next approach's turn: a few, so that the approaches' reconciles
// interleave over the phase; each waits for at least one request, next to
// which what the other approaches leave in the CPU's caches is nothing.
const changingTurn = 5

// turns returns the order in which approaches run counts[i] reconciles
// each, in turns of at most turn reconciles: one index per reconcile.
func turns(counts []int, turn int) []int {
	var out []int
	for k := 0; slices.ContainsFunc(counts, func(n int) bool { return n > k }); k += turn {
		for i, n := range counts {
			for range min(turn, n-k) {
				out = append(out, i)
			}
		}
	}
	return out
}

// allocSamples is how many reconciles per phase and round count allocations.
const allocSamples = 10

// PerAllocReconcile divides an allocation total by the number of reconciles
// it was counted over.
func (r ReconcileResult) PerAllocReconcile(total float64) float64 {
	if r.AllocReconciles == 0 {
		return r.PerReconcile(total)
	}
	return total / float64(r.AllocReconciles)
}

// PerReconcile divides a total by the number of reconciles.
func (r ReconcileResult) PerReconcile(total float64) float64 {
	if r.Reconciles == 0 {
		return 0
	}
	return total / float64(r.Reconciles)
}

func (r *ReconcileResult) merge(o ReconcileResult) {
	r.Reconciles += o.Reconciles
	r.Wall += o.Wall
	r.CPU += o.CPU
	r.AllocReconciles += o.AllocReconciles
	r.Mallocs += o.Mallocs
	r.Bytes += o.Bytes
	if r.Requests == nil {
		r.Requests = map[string]int{}
	}
	for k, v := range o.Requests {
		r.Requests[k] += v
	}
}

// ReconcileConfig sizes scenario 1.
type ReconcileConfig struct {
	Mutators int
	Managers []int
	// Reconciles per phase and round; GetPatchPerMutator gets SlowReconciles
	// because it is an order of magnitude slower. The steady phase runs
	// SteadyReconciles when set: its reconciles take tens of microseconds,
	// so that it takes many of them to time them steadily.
	Reconciles       int
	SlowReconciles   int
	SteadyReconciles int
	Rounds           int
}

// RunReconcile runs scenario 1: per round, per manager count, the approaches
// (in an order that rotates each round) run a phase of reconciles that all
// change something, taking turns of changingTurn reconciles; then a steady
// phase that changes nothing, taking turns of steadyTurn reconciles; then
// those that sent nothing in it run it again back to back, without the wait
// for the cache between reconciles: a steady reconcile that follows a
// request is one whose code and data the request pushed out of the CPU's
// caches, one that follows another reconcile of its approach finds them
// there, and a controller sees both. Each approach writes its own Widget,
// and reconciles that read the object read it from an informer cache, as a
// controller does; between reconciles, outside the measurement, the harness
// waits for the cache to hold the last write. It
// returns a result per round, manager count, approach and phase, in the
// rounds' order; the report adds the rounds up (mergedReconcile) and shows
// how far they spread.
func RunReconcile(ctx context.Context, h *Harness, ns string, cfg ReconcileConfig, logf func(string, ...any)) ([]ReconcileResult, error) {
	informers, err := cache.New(h.Config(), cache.Options{Scheme: h.Env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	cacheCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = informers.Start(cacheCtx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the informer cache did not sync")
	}

	type state struct {
		r     Reconciler
		key   client.ObjectKey
		on    bool
		names []string
	}
	var states []map[int]*state // per approach: per manager count
	for _, build := range reconcilers(h, informers) {
		perM := map[int]*state{}
		for _, m := range cfg.Managers {
			r, err := build()
			if err != nil {
				return nil, err
			}
			w, err := h.CreateWidget(ctx, ns, fmt.Sprintf("%s-m%d", r.Name(), m))
			if err != nil {
				return nil, err
			}
			key := client.ObjectKeyFromObject(w)
			if p, ok := r.(preparer); ok {
				if err := p.Prepare(ctx, key); err != nil {
					return nil, fmt.Errorf("%s: %w", r.Name(), err)
				}
			}
			perM[m] = &state{r: r, key: key, names: ManagerNames(m)}
		}
		states = append(states, perM)
	}

	var out []ReconcileResult
	synced := func(key client.ObjectKey) error {
		server := &v1alpha1.Widget{}
		if err := h.Env.Client.Get(ctx, key, server); err != nil {
			return err
		}
		return waitFor(ctx, 10*time.Second, "the informer cache", func() (bool, error) {
			cached := &v1alpha1.Widget{}
			if err := informers.Get(ctx, key, cached); err != nil {
				return false, err
			}
			return newerOrEqual(cached.ResourceVersion, server.ResourceVersion), nil
		})
	}
	for round := range cfg.Rounds {
		for _, m := range cfg.Managers {
			order := make([]*state, len(states))
			for i := range states {
				order[i] = states[(i+round)%len(states)][m]
			}
			results := make([][3]ReconcileResult, len(order)) // per approach: changing, steady, back to back
			for i, st := range order {
				for p, phase := range []string{PhaseChanging, PhaseSteady, PhaseBackToBack} {
					results[i][p] = ReconcileResult{Approach: st.r.Name(), Managers: m, Mutators: cfg.Mutators, Phase: phase, Round: round + 1}
				}
			}
			// once makes one reconcile of st's in phase, measured or not.
			once := func(st *state, phase string, measure func(spec ReconcileSpec) error) error {
				if phase == PhaseChanging {
					st.on = !st.on
				}
				if err := measure(ReconcileSpec{Key: st.key, Mutators: cfg.Mutators, On: st.on, Names: st.names}); err != nil {
					return fmt.Errorf("%s, %d managers, %s: %w", st.r.Name(), m, phase, err)
				}
				return nil
			}
			// run is once, then waits for the informer cache to hold what
			// the reconcile wrote.
			run := func(st *state, phase string, measure func(spec ReconcileSpec) error) error {
				if err := once(st, phase, measure); err != nil {
					return err
				}
				return synced(st.key)
			}
			measure := func(st *state, res *ReconcileResult) func(spec ReconcileSpec) error {
				return func(spec ReconcileSpec) error {
					cpu := processCPU()
					start := time.Now()
					err := st.r.Reconcile(ctx, spec)
					res.Wall += time.Since(start)
					res.CPU += processCPU() - cpu
					res.Reconciles++
					return err
				}
			}
			timed := func(st *state, res *ReconcileResult) error {
				return run(st, res.Phase, measure(st, res))
			}
			reconciles := func(st *state, phase string) int {
				switch {
				case st.r.Name() == GetPatchPerMutator:
					return cfg.SlowReconciles
				case phase != PhaseChanging && cfg.SteadyReconciles > 0:
					return cfg.SteadyReconciles
				}
				return cfg.Reconciles
			}
			// Allocations are counted in reconciles of their own, not timed:
			// runtime.ReadMemStats empties every allocation cache, and a
			// reconcile timed right after it would pay for refilling them,
			// the more the more kinds of objects it allocates.
			countAllocs := func(st *state, res *ReconcileResult) error {
				res.Requests = st.r.Requests().Snapshot()
				delete(res.Requests, "discovery")
				for range min(reconciles(st, res.Phase), allocSamples) {
					err := run(st, res.Phase, func(spec ReconcileSpec) error {
						var meter UsageMeter
						meter.Start()
						err := st.r.Reconcile(ctx, spec)
						u := meter.Stop()
						res.Mallocs += u.Mallocs
						res.Bytes += u.Bytes
						res.AllocReconciles++
						return err
					})
					if err != nil {
						return err
					}
				}
				return nil
			}
			// inTurns runs phase (results' p-th) for the approaches runs
			// picks, in turns of turn reconciles each made by step, then
			// counts its allocations.
			counts := make([]int, len(order))
			inTurns := func(phase string, p, turn int, runs func(i int) bool, step func(st *state, res *ReconcileResult) error) error {
				for i, st := range order {
					st.r.Requests().Reset()
					if counts[i] = 0; runs(i) {
						counts[i] = reconciles(st, phase)
					}
				}
				for _, i := range turns(counts, turn) {
					if err := step(order[i], &results[i][p]); err != nil {
						return err
					}
				}
				for i, st := range order {
					if counts[i] == 0 {
						continue
					}
					if err := countAllocs(st, &results[i][p]); err != nil {
						return err
					}
				}
				return nil
			}
			every := func(int) bool { return true }
			// The changing phase, in turns of changingTurn reconciles per
			// approach, as the steady phase takes turns: each reconcile
			// waits for the API server, whose pace on a shared machine
			// drifts over seconds, and a phase run approach by approach
			// put a whole slow stretch on one approach (with nothing
			// changed on its path, one row read 1.01x in one run and
			// 0.93x in the next).
			if err := inTurns(PhaseChanging, 0, changingTurn, every, timed); err != nil {
				return nil, err
			}
			// The steady phase, in turns of steadyTurn reconciles per
			// approach: a steady reconcile takes tens of microseconds, and
			// a stretch in which the whole machine is slower would
			// otherwise fall on one approach's phase and move its ratios by
			// several points. Within a turn an approach's reconciles follow
			// one another, as a phase's did, so what runs between two of
			// them (the wait for the cache) is the same as without turns.
			if err := inTurns(PhaseSteady, 1, steadyTurn, every, timed); err != nil {
				return nil, err
			}
			// The back-to-back phase: the same steady reconciles, in the
			// same turns, each right after the one before it, for the
			// approaches that sent nothing in the steady phase: with
			// nothing written, the cache has nothing to catch up with. An
			// approach that sends a request in it fails the run.
			sentNothing := func(i int) bool { return total(results[i][1].Requests) == 0 }
			backToBack := func(st *state, res *ReconcileResult) error {
				return once(st, PhaseBackToBack, measure(st, res))
			}
			if err := inTurns(PhaseBackToBack, 2, steadyTurn, sentNothing, backToBack); err != nil {
				return nil, err
			}
			for i, st := range order {
				if sent := total(results[i][2].Requests); sent > 0 {
					return nil, fmt.Errorf("%s, %d managers: %d requests in the %s phase, which does not wait for the cache", st.r.Name(), m, sent, PhaseBackToBack)
				}
			}
			for i := range order {
				for _, res := range results[i] {
					if res.Reconciles == 0 {
						continue // an approach that has no back-to-back phase
					}
					out = append(out, res)
					logf("reconcile round %d M=%d %-28s %-8s %6.1f reconciles/s %v", round+1, m, res.Approach, res.Phase, res.PerSecond(), res.Requests)
				}
			}
		}
	}
	return out, nil
}

// reconcilers returns a constructor per approach; each call makes a fresh
// counting client, so every approach's requests are counted apart.
func reconcilers(h *Harness, informers client.Reader) []func() (Reconciler, error) {
	return []func() (Reconciler, error){
		func() (Reconciler, error) {
			c, req, _, err := h.Client()
			return &getPatchPerMutator{c: c, requests: req}, err
		},
		func() (Reconciler, error) {
			c, req, _, err := h.Client()
			return &optimisticPatch{c: c, requests: req}, err
		},
		func() (Reconciler, error) {
			c, req, _, err := h.CAPIClient()
			return &capiHelper{c: c, cache: informers, requests: req}, err
		},
		func() (Reconciler, error) {
			c, req, _, err := h.CAPIClient()
			return &capiHelperInMemory{c: c, requests: req}, err
		},
		func() (Reconciler, error) {
			c, req, _, err := h.Client()
			return &rawApply{c: c, cache: informers, requests: req}, err
		},
		func() (Reconciler, error) {
			c, req, _, err := h.Client()
			if err != nil {
				return nil, err
			}
			a, err := h.Applier(c)
			return &statusapplyBatch{applier: a, cache: informers, requests: req}, err
		},
		func() (Reconciler, error) {
			c, req, _, err := h.Client()
			return &steadyFloor{c: c, cache: informers, requests: req}, err
		},
	}
}
