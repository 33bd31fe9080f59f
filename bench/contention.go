package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	capiconditions "sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
)

// ContentionApproaches lists scenario 2's approaches in run order.
var ContentionApproaches = []string{MergePatchStale, OptimisticPatch, CAPIHelper, RawApply, RawApplySerialized, StatusapplyShared, StatusapplySep,
	StatusapplySharedGuarded, StatusapplySepGuarded}

// objectLocks is a mutex per object, shared by the writers of one process: what
// (d') raw apply, serialized per object, takes around each apply.
type objectLocks struct {
	mu    sync.Mutex
	locks map[client.ObjectKey]*sync.Mutex
}

func (l *objectLocks) For(key client.ObjectKey) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = map[client.ObjectKey]*sync.Mutex{}
	}
	if l.locks[key] == nil {
		l.locks[key] = &sync.Mutex{}
	}
	return l.locks[key]
}

// writerCondition is writer i's condition: its own type, and its update
// counter in the message, so that a watch can tell when it goes backwards.
func writerCondition(i, k int, generation int64, ltt metav1.Time) metav1.Condition {
	return metav1.Condition{
		Type: fmt.Sprintf("W%02d", i), Status: metav1.ConditionTrue, Reason: "Updated",
		Message: "k=" + strconv.Itoa(k), ObservedGeneration: generation, LastTransitionTime: ltt,
	}
}

// counterOf reads writer i's counter from an object's conditions; -1 when the
// condition is missing.
func counterOf(conds []metav1.Condition, i int) int {
	c := meta.FindStatusCondition(conds, fmt.Sprintf("W%02d", i))
	if c == nil {
		return -1
	}
	k, err := strconv.Atoi(strings.TrimPrefix(c.Message, "k="))
	if err != nil {
		return -1
	}
	return k
}

// updater performs writer i's k-th update of the object. It returns an error
// only when the write failed for good (after whatever retries the approach
// makes).
type updater func(ctx context.Context, i, k int) error

// counters sums the requests and responses of the clients an approach used.
type counters struct {
	requests  []*apiserver.Requests
	responses []*apiserver.Responses
}

func (c *counters) conflicts() int {
	n := 0
	for _, r := range c.responses {
		n += r.CountCode(409)
	}
	return n
}

func (c *counters) byVerb() map[string]int {
	out := map[string]int{}
	for _, r := range c.requests {
		for k, v := range r.Snapshot() {
			if k != "discovery" {
				out[k] += v
			}
		}
	}
	return out
}

// newUpdaters builds W writers of one approach for the object at key.
func newUpdaters(ctx context.Context, h *Harness, approach string, key client.ObjectKey, w int) ([]updater, *counters, error) {
	cs := &counters{}
	newClient := func(capi bool) (client.Client, error) {
		var (
			c   client.Client
			req *apiserver.Requests
			res *apiserver.Responses
			err error
		)
		if capi {
			c, req, res, err = h.CAPIClient()
		} else {
			c, req, res, err = h.Client()
		}
		cs.requests, cs.responses = append(cs.requests, req), append(cs.responses, res)
		return c, err
	}
	start := metav1.NewTime(time.Now().Truncate(time.Second))
	ups := make([]updater, w)
	switch approach {
	case MergePatchStale:
		c, err := newClient(false)
		if err != nil {
			return nil, nil, err
		}
		for i := range ups {
			ups[i] = func(ctx context.Context, i, k int) error {
				obj := &v1alpha1.Widget{}
				if err := c.Get(ctx, key, obj); err != nil {
					return err
				}
				base := obj.DeepCopy()
				meta.SetStatusCondition(&obj.Status.Conditions, writerCondition(i, k, obj.Generation, start))
				return c.Status().Patch(ctx, obj, client.MergeFrom(base), client.FieldOwner(fmt.Sprintf("writer-%d", i)))
			}
		}
	case OptimisticPatch:
		c, err := newClient(false)
		if err != nil {
			return nil, nil, err
		}
		for i := range ups {
			ups[i] = func(ctx context.Context, i, k int) error {
				return retry.RetryOnConflict(retry.DefaultRetry, func() error {
					obj := &v1alpha1.Widget{}
					if err := c.Get(ctx, key, obj); err != nil {
						return err
					}
					base := obj.DeepCopy()
					meta.SetStatusCondition(&obj.Status.Conditions, writerCondition(i, k, obj.Generation, start))
					return c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
						client.FieldOwner(fmt.Sprintf("writer-%d", i)))
				})
			}
		}
	case CAPIHelper:
		c, err := newClient(true)
		if err != nil {
			return nil, nil, err
		}
		for i := range ups {
			ups[i] = func(ctx context.Context, i, k int) error {
				obj := &CAPIWidget{}
				if err := c.Get(ctx, key, obj); err != nil {
					return err
				}
				helper, err := patch.NewHelper(obj, c)
				if err != nil {
					return err
				}
				capiconditions.Set(obj, writerCondition(i, k, obj.Generation, start))
				return helper.Patch(ctx, obj)
			}
		}
	case RawApply:
		c, err := newClient(false)
		if err != nil {
			return nil, nil, err
		}
		for i := range ups {
			ups[i] = func(ctx context.Context, i, k int) error {
				cond := writerCondition(i, k, 1, start)
				ac := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus())
				if err := ssa.SetCondition(&ac.Status.Conditions, nil, 1, cond); err != nil {
					return err
				}
				return c.Status().Apply(ctx, ac, client.FieldOwner(fmt.Sprintf("writer-%d", i)))
			}
		}
	case RawApplySerialized:
		// The same applies as RawApply, but one process's writers of an object
		// send them one at a time: the ceiling for a per-object lane, which
		// does at least this much. Only the request is inside the lock.
		c, err := newClient(false)
		if err != nil {
			return nil, nil, err
		}
		locks := &objectLocks{}
		for i := range ups {
			ups[i] = func(ctx context.Context, i, k int) error {
				cond := writerCondition(i, k, 1, start)
				ac := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus())
				if err := ssa.SetCondition(&ac.Status.Conditions, nil, 1, cond); err != nil {
					return err
				}
				lock := locks.For(key)
				lock.Lock()
				defer lock.Unlock()
				return c.Status().Apply(ctx, ac, client.FieldOwner(fmt.Sprintf("writer-%d", i)))
			}
		}
	case StatusapplyShared, StatusapplySep, StatusapplySharedGuarded, StatusapplySepGuarded:
		var batchOpts []batcher.Option
		if approach == StatusapplySharedGuarded || approach == StatusapplySepGuarded {
			batchOpts = append(batchOpts, batcher.WithGuardedEntries())
		}
		var shared *ssa.Applier
		if approach == StatusapplyShared || approach == StatusapplySharedGuarded {
			c, err := newClient(false)
			if err != nil {
				return nil, nil, err
			}
			if shared, err = h.Applier(c); err != nil {
				return nil, nil, err
			}
		}
		for i := range ups {
			applier := shared
			if applier == nil {
				c, err := newClient(false)
				if err != nil {
					return nil, nil, err
				}
				if applier, err = h.Applier(c); err != nil {
					return nil, nil, err
				}
			}
			// The writer observes the object as its own last apply returned it
			// (a cache would only be fresher); it starts from one read.
			observed := &v1alpha1.Widget{}
			if err := h.Env.Client.Get(ctx, key, observed); err != nil {
				return nil, nil, err
			}
			ups[i] = func(ctx context.Context, i, k int) error {
				var last client.Object
				opts := append([]batcher.Option{batcher.WithResultHook(func(_ ssa.Target, res ssa.Result, _ error) { last = res.Object })}, batchOpts...)
				b := batcher.New(applier, opts...)
				err := batcher.Status(b, observed, fmt.Sprintf("writer-%d", i), func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
					if ac.Status == nil {
						ac.WithStatus(acv1alpha1.WidgetStatus())
					}
					return ssa.SetCondition(&ac.Status.Conditions, o.Status.Conditions, o.Generation, writerCondition(i, k, o.Generation, metav1.Time{}))
				})
				if err != nil {
					return err
				}
				if err := b.Flush(ctx); err != nil {
					return err
				}
				next, err := asWidget(last)
				if err != nil {
					return err
				}
				if next != nil {
					observed = next
				}
				return nil
			}
		}
	default:
		return nil, nil, fmt.Errorf("unknown approach %q", approach)
	}
	return ups, cs, nil
}

// asWidget is the object an apply's result reported, as a Widget: the Applier
// returns it as the observed object's Go type or as unstructured content. Nil
// when there is none.
func asWidget(o client.Object) (*v1alpha1.Widget, error) {
	switch o := o.(type) {
	case nil:
		return nil, nil
	case *v1alpha1.Widget:
		return o, nil
	case *unstructured.Unstructured:
		if o == nil {
			return nil, nil
		}
		w := &v1alpha1.Widget{}
		return w, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, w)
	}
	return nil, fmt.Errorf("the apply returned a %T, want a Widget", o)
}

// ContentionResult is one approach at one writer count.
type ContentionResult struct {
	Approach string        `json:"approach"`
	Writers  int           `json:"writers"`
	Updates  int           `json:"updates"`
	Wall     time.Duration `json:"wallNs"`
	P50      time.Duration `json:"p50Ns"`
	P99      time.Duration `json:"p99Ns"`
	Conflict int           `json:"conflicts409"`
	Failed   int           `json:"failedWrites"`
	// Regressions counts the steps in which the watch saw a writer's counter
	// go back (or its condition vanish): updates that another write undid.
	Regressions int `json:"regressions"`
	// FinalLost counts the writers whose final value on the object is not
	// their last successful write.
	FinalLost int            `json:"finalLost"`
	Requests  map[string]int `json:"requests"`
	Errors    []string       `json:"errors,omitempty"`
	// Latencies are every update's, for percentiles over several rounds.
	Latencies []time.Duration `json:"latenciesNs"`
}

// PerSecond is updates per second of wall time.
func (r ContentionResult) PerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Updates) / r.Wall.Seconds()
}

// Lossless is true when no update was lost and none failed.
func (r ContentionResult) Lossless() bool {
	return r.Regressions == 0 && r.FinalLost == 0 && r.Failed == 0
}

// ContentionConfig sizes scenario 2.
type ContentionConfig struct {
	Writers []int
	Updates int
	Rounds  int
	// GoalRounds are further rounds of just the two approaches the
	// throughput goal compares, (d') and statusapply in one process, at the
	// writer counts it is judged at, alternating which goes first. A round
	// at W=8 lasts about a second: over two rounds alone, the ratio moves
	// by several points from one run to the next.
	GoalRounds int
}

// RunContention runs scenario 2: for every writer count, every approach (in
// a rotating order) has W writers update one fresh Widget K times each,
// concurrently, each writer owning its own condition type. A watch on the
// object records every state it goes through. Then come the goal rounds
// (see ContentionConfig.GoalRounds). Results are per round, in the order
// they ran.
func RunContention(ctx context.Context, h *Harness, ns string, cfg ContentionConfig, logf func(string, ...any)) ([]ContentionResult, error) {
	wc, err := client.NewWithWatch(h.Config(), client.Options{Scheme: h.Env.Scheme})
	if err != nil {
		return nil, err
	}
	var out []ContentionResult
	// run runs one approach at w writers on a fresh Widget named for the
	// round; what names the round in the log and in the Widget's name.
	run := func(what string, round int, approach string, w int) error {
		res, err := runContentionOnce(ctx, h, wc, ns, fmt.Sprintf("%s-w%d-%s%d", approach, w, what[:1], round), approach, w, cfg.Updates)
		if err != nil {
			return fmt.Errorf("%s with %d writers: %w", approach, w, err)
		}
		logf("contention %s %d W=%2d %-22s %7.1f updates/s p50 %v p99 %v 409s %d failed %d regressions %d final lost %d",
			what, round+1, w, approach, res.PerSecond(), res.P50.Round(time.Millisecond), res.P99.Round(time.Millisecond),
			res.Conflict, res.Failed, res.Regressions, res.FinalLost)
		out = append(out, res)
		return nil
	}
	for round := range cfg.Rounds {
		for _, w := range cfg.Writers {
			for a := range ContentionApproaches {
				if err := run("round", round, ContentionApproaches[(a+round)%len(ContentionApproaches)], w); err != nil {
					return nil, err
				}
			}
		}
	}
	for round := range cfg.GoalRounds {
		for _, w := range contentionWriters {
			if !slices.Contains(cfg.Writers, w) {
				continue
			}
			pair := []string{RawApplySerialized, StatusapplyShared}
			if round%2 == 1 {
				pair[0], pair[1] = pair[1], pair[0]
			}
			for _, approach := range pair {
				if err := run("goal round", round, approach, w); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

func runContentionOnce(ctx context.Context, h *Harness, wc client.WithWatch, ns, name, approach string, writers, updates int) (ContentionResult, error) {
	res := ContentionResult{Approach: approach, Writers: writers}
	obj, err := h.CreateWidget(ctx, ns, name)
	if err != nil {
		return res, err
	}
	key := client.ObjectKeyFromObject(obj)
	ups, cs, err := newUpdaters(ctx, h, approach, key, writers)
	if err != nil {
		return res, err
	}
	watcher, err := wc.Watch(ctx, &v1alpha1.WidgetList{}, client.InNamespace(ns),
		client.MatchingFields{"metadata.name": name},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: obj.ResourceVersion}})
	if err != nil {
		return res, err
	}
	defer watcher.Stop()
	seen := newRegressionTracker(writers)
	go func() {
		for ev := range watcher.ResultChan() {
			if ev.Type != watch.Modified && ev.Type != watch.Added {
				continue
			}
			if w, ok := ev.Object.(*v1alpha1.Widget); ok {
				seen.observe(w.ResourceVersion, w.Status.Conditions)
			}
		}
	}()

	lastOK := make([]int, writers)
	latencies := make([][]time.Duration, writers)
	errs := make([][]string, writers)
	failed := make([]int, writers)
	var ready, wg sync.WaitGroup
	gate := make(chan struct{})
	ready.Add(writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lastOK[i] = -1
			ready.Done()
			<-gate
			for k := 1; k <= updates; k++ {
				t0 := time.Now()
				err := ups[i](ctx, i, k)
				latencies[i] = append(latencies[i], time.Since(t0))
				if err != nil {
					failed[i]++
					if len(errs[i]) < 3 {
						errs[i] = append(errs[i], err.Error())
					}
					continue
				}
				lastOK[i] = k
			}
		}()
	}
	ready.Wait()
	start := time.Now()
	close(gate)
	wg.Wait()
	res.Wall = time.Since(start)

	final := &v1alpha1.Widget{}
	if err := h.Env.Client.Get(ctx, key, final); err != nil {
		return res, err
	}
	// Wait until the watch has seen the final state, so that every
	// intermediate state has been checked.
	if final.ResourceVersion != obj.ResourceVersion {
		if err := waitFor(ctx, 30*time.Second, "the watch to reach the final state", func() (bool, error) {
			return newerOrEqual(seen.lastVersion(), final.ResourceVersion), nil
		}); err != nil {
			return res, err
		}
	}
	watcher.Stop()

	var all []time.Duration
	for i := range writers {
		all = append(all, latencies[i]...)
		res.Failed += failed[i]
		res.Errors = append(res.Errors, errs[i]...)
		if lastOK[i] >= 0 && counterOf(final.Status.Conditions, i) != lastOK[i] {
			res.FinalLost++
		}
	}
	res.Updates = len(all)
	res.Latencies = all
	res.P50, res.P99 = Percentile(all, 50), Percentile(all, 99)
	res.Regressions = seen.regressions()
	res.Conflict = cs.conflicts()
	res.Requests = cs.byVerb()
	return res, nil
}

// regressionTracker follows the states a watch delivers and counts the steps
// in which a writer's counter went back (or its condition vanished): each is
// an acknowledged write that a later write undid.
type regressionTracker struct {
	mu      sync.Mutex
	prev    []int
	back    int
	version string
}

func newRegressionTracker(writers int) *regressionTracker {
	t := &regressionTracker{prev: make([]int, writers)}
	for i := range t.prev {
		t.prev[i] = -1
	}
	return t
}

func (t *regressionTracker) observe(version string, conds []metav1.Condition) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.prev {
		k := counterOf(conds, i)
		if k < t.prev[i] {
			t.back++
		}
		t.prev[i] = k
	}
	t.version = version
}

func (t *regressionTracker) lastVersion() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version
}

func (t *regressionTracker) regressions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.back
}
