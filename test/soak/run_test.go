package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

const (
	// objectCount is how many Widgets every writer writes.
	objectCount = 24
	// requestTimeout bounds a GET; flushTimeout a Flush with its guarded
	// retries. A request stuck behind a timeout fault ends at the latest then.
	requestTimeout = 5 * time.Second
	flushTimeout   = 15 * time.Second
	// settleAttempts bounds the turns a writer spends on one object in the
	// quiet phase before its change counts as never landed.
	settleAttempts = 40
	// visibleWithin is how long the quiet phase waits for the watch to show
	// every writer's last change.
	visibleWithin = time.Minute
	// heapBound is the most heap the test process may hold after a GC at any
	// sample: the writers, their Appliers' caches, the checker's records and
	// the proxy for 24 objects. The soak measures well below it (see
	// docs/reliability.md); a leak that grows with the run's length crosses
	// it in a long run.
	heapBound = 64 << 20
)

// run is one soak run's shared state.
type run struct {
	cfg   config
	env   *apiserver.Env
	ns    string
	names []string
	out   io.Writer

	stats   *stats
	checker *checker

	// onSecond is true while the writers that have one use their process on
	// the second API server; second holds those processes, by writer.
	onSecond atomic.Bool
	second   atomic.Pointer[map[string]*process]
	// cancelling counts the cancel faults in force; bursts, per object, the
	// bursts in force.
	cancelling atomic.Int32
	bursts     []atomic.Int32

	// admin is the run's own connection, for set-up and faults.
	admin *process

	mu        sync.Mutex
	landed    map[string][]int // writer -> object -> last change landed
	processes []*process
	errs      []string // faults that could not be injected
}

// stats are the run's counters.
type stats struct {
	faults                                          sync.Map // faultKind -> *atomic.Int64
	flushes, flushErrors, exhausted, yielded, taken atomic.Int64
	burstWrites, killed                             atomic.Int64
	peakHeap, firstHeap, lastHeap                   atomic.Uint64
	peakGoroutines                                  atomic.Int64
}

func (s *stats) fault(k faultKind) {
	n, _ := s.faults.LoadOrStore(k, &atomic.Int64{})
	n.(*atomic.Int64).Add(1)
}

func (s *stats) faultCount(k faultKind) int64 {
	if n, ok := s.faults.Load(k); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// hook counts what every Flush's entries did.
func (s *stats) hook(_ ssa.Target, res ssa.Result, err error) {
	s.yielded.Add(int64(len(res.Yielded)))
	s.taken.Add(int64(len(res.Taken)))
	if errors.Is(err, ssa.ErrRetriesExhausted) {
		s.exhausted.Add(1)
	}
}

func (r *run) key(i int) client.ObjectKey { return client.ObjectKey{Namespace: r.ns, Name: r.names[i]} }

func objectMeta(key client.ObjectKey) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}
}

// fail records a fault that could not be injected: the run then proves less
// than it claims, and fails.
func (r *run) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// landedChange records that a writer's change of object i landed.
func (r *run) landedChange(t tracked, i, seq int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.landed[t.writer] == nil {
		r.landed[t.writer] = make([]int, len(r.names))
	}
	r.landed[t.writer][i] = seq
}

// burstingObject reports whether the object an apply configuration names is
// in a burst.
func (r *run) burstingObject(ac kruntime.ApplyConfiguration) (int, bool) {
	raw, err := json.Marshal(ac)
	if err != nil {
		return 0, false
	}
	var head struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return 0, false
	}
	for i, n := range r.names {
		if n == head.Metadata.Name {
			return i, r.bursts[i].Load() > 0
		}
	}
	return 0, false
}

// think is the time a reconcile spends between observing and flushing.
func (r *run) think(ctx context.Context, rnd *rand.Rand) { r.sleep(ctx, rnd, 15) }

// pause is a writer's back-off after an error.
func (r *run) pause(ctx context.Context, rnd *rand.Rand) {
	sleepCtx(ctx, 100*time.Millisecond+time.Duration(rnd.IntN(200))*time.Millisecond)
}

func (r *run) sleep(ctx context.Context, rnd *rand.Rand, maxMillis int) {
	sleepCtx(ctx, time.Duration(rnd.IntN(maxMillis+1))*time.Millisecond)
}

// flush flushes b, bounded by flushTimeout; while a cancel fault is in force,
// every other Flush has its context cancelled a few milliseconds in.
func (r *run) flush(ctx context.Context, rnd *rand.Rand, b interface{ Flush(context.Context) error }) error {
	ctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	r.stats.flushes.Add(1)
	if r.cancelling.Load() > 0 && rnd.IntN(2) == 0 {
		t := time.AfterFunc(time.Duration(rnd.IntN(20))*time.Millisecond, cancel)
		defer func() {
			if !t.Stop() {
				r.stats.fault(faultCancel)
			}
		}()
	}
	err := b.Flush(ctx)
	if err != nil {
		r.stats.flushErrors.Add(1)
	}
	return err
}

// newProcess builds a process and remembers it, to close its connections at
// the end.
func (r *run) newProcess(name string, cfg *rest.Config, burst bool, opts ...ssa.Option) (*process, error) {
	var funcs = r.burstFuncs()
	if !burst {
		funcs = nil
	}
	p, err := newProcess(name, cfg, funcs, opts...)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.processes = append(r.processes, p)
	return p, nil
}

// plannerOptions give the plan creators a small retry budget, which bursts
// exhaust.
var plannerOptions = []ssa.Option{ssa.WithGuardBackoff(wait.Backoff{Steps: 4, Duration: 5 * time.Millisecond, Factor: 2, Jitter: 0.5})}

// The writers that move to the second API server while it runs.
const (
	writerIncB     = "inc-b"
	writerYield    = "yield"
	writerPlannerB = "planner-b"
)

// secondProcesses builds the processes of the writers that move to the
// second API server, reached through cfg, and publishes them.
func (r *run) secondProcesses(cfg *rest.Config) ([]*process, error) {
	m := map[string]*process{}
	var out []*process
	for _, name := range []string{writerIncB, writerYield, writerPlannerB} {
		var opts []ssa.Option
		if name == writerPlannerB {
			opts = plannerOptions
		}
		p, err := r.newProcess(name+"@second", cfg, name == writerPlannerB, opts...)
		if err != nil {
			return nil, err
		}
		m[name] = p
		out = append(out, p)
	}
	r.second.Store(&m)
	return out, nil
}

// where returns the process a writer runs in now.
func (w *writer) where(r *run) *process {
	if m := r.second.Load(); m != nil && r.onSecond.Load() {
		if p, ok := (*m)[w.writer]; ok {
			return p
		}
	}
	return w.primary
}

// report is what a run measured.
type report struct {
	cfg                 config
	elapsed             time.Duration
	applies, applied    int
	faults              map[faultKind]int64
	violations          int
	reported            []string
	versions, lateSelf  int
	declaredTakes       int
	relists             int
	flushes, flushErrs  int64
	exhausted, yielded  int64
	taken, burstWrites  int64
	killed              int64
	peakHeap            uint64
	firstHeap, lastHeap uint64
	goroutinesBefore    int
	goroutinesPeak      int64
	goroutinesAfter     int
	errs                []string
}

// line is the run's figures on one line.
func (rep report) line() string {
	var fs []string
	for _, k := range faultKinds {
		fs = append(fs, fmt.Sprintf("%s=%d", k, rep.faults[k]))
	}
	return fmt.Sprintf("soak: duration=%s seed=%d writes=%d (applies sent; %d answered 2xx) faults{%s} violations=%d"+
		" | versions checked=%d, watch relists=%d, late own writes=%d, declared takes=%d (fields forced %d), yielded fields=%d,"+
		" burst writes=%d, guard budget exhausted=%d, restarts that had to kill=%d, flushes=%d (%d failed),"+
		" heap after GC first/peak/last=%.1f/%.1f/%.1fMiB, goroutines before/peak/after=%d/%d/%d",
		rep.elapsed.Round(time.Second), rep.cfg.seed, rep.applies, rep.applied, strings.Join(fs, " "), rep.violations,
		rep.versions, rep.relists, rep.lateSelf, rep.declaredTakes, rep.taken, rep.yielded, rep.burstWrites, rep.exhausted, rep.killed,
		rep.flushes, rep.flushErrs, mib(rep.firstHeap), mib(rep.peakHeap), mib(rep.lastHeap), rep.goroutinesBefore, rep.goroutinesPeak, rep.goroutinesAfter)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// soak runs the writers for cfg.duration under the seed's faults, then a quiet
// phase in which everything queued must land, and reports what it saw.
func soak(ctx context.Context, e *apiserver.Env, cfg config, out io.Writer) (*report, error) {
	runtime.GC()
	before := runtime.NumGoroutine()
	// Every goroutine running now is the suite's; any the run leaves behind
	// is a leak, except the fault-injection proxy's own (see leakOptions).
	leaks := leakOptions()
	started := time.Now()
	r := &run{cfg: cfg, env: e, out: out, stats: &stats{}, landed: map[string][]int{},
		bursts: make([]atomic.Int32, objectCount)}
	defer func() {
		for _, p := range r.processes {
			p.close()
		}
	}()
	// The run's own set-up and faults go through a process of their own,
	// straight to the first API server, so that its connections end with
	// the run.
	admin, err := r.newProcess("admin", e.Config, false)
	if err != nil {
		return nil, err
	}
	r.admin = admin
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "soak-"}}
	if err := admin.client.Create(ctx, nsObj); err != nil {
		return nil, fmt.Errorf("creating the namespace: %w", err)
	}
	r.ns = nsObj.Name
	defer func() { _ = client.IgnoreNotFound(admin.client.Delete(context.WithoutCancel(ctx), nsObj)) }()
	for i := range objectCount {
		r.names = append(r.names, fmt.Sprintf("w%02d", i))
		if _, err := widgets.Create(ctx, admin.client, r.ns, r.names[i]); err != nil {
			return nil, err
		}
	}
	sched := newSchedule(cfg.seed, cfg.duration, objectCount)
	fmt.Fprintf(out, "soak: seed=%d duration=%s broken=%q objects=%d\n", cfg.seed, cfg.duration, cfg.broken, objectCount)
	fmt.Fprintf(out, "soak: fault schedule (%d faults):\n%s\n", len(sched), sched)

	proxy, err := newProxy(e.Config.Host)
	if err != nil {
		return nil, err
	}
	defer proxy.Stop()
	proxied := rest.CopyConfig(e.Config)
	proxied.Host = "https://" + proxy.Listen

	writers, checkerProc, err := r.writers(proxied)
	if err != nil {
		return nil, err
	}
	var tracks []tracked
	for _, w := range writers {
		tracks = append(tracks, w.tracked)
	}
	r.checker = newChecker(tracks)

	// The checker watches the first API server directly: it is the observer,
	// not a subject of the network faults.
	checkCtx, stopChecker := context.WithCancel(context.WithoutCancel(ctx))
	var bg sync.WaitGroup
	wc, err := client.NewWithWatch(checkerProc.cfg, client.Options{Scheme: e.Scheme, HTTPClient: checkerProc.http})
	if err != nil {
		stopChecker()
		return nil, err
	}
	bg.Go(func() { r.checker.run(checkCtx, wc, r.ns) })
	bg.Go(func() { r.sample(checkCtx) })
	defer func() {
		stopChecker()
		bg.Wait()
	}()

	// The fault phase.
	writeCtx, stopWriting := context.WithTimeout(ctx, cfg.duration)
	defer stopWriting()
	if cfg.stopAtFirstViolation {
		go func() {
			select {
			case <-r.checker.failed:
				stopWriting()
			case <-writeCtx.Done():
			}
		}()
	}
	var writing sync.WaitGroup
	for _, w := range writers {
		writing.Go(func() { w.loop(writeCtx, r) })
	}
	if cfg.broken == brokenMergePatch {
		p, err := r.newProcess("broken", proxied, false)
		if err != nil {
			return nil, err
		}
		rnd := rand.New(rand.NewPCG(cfg.seed, 0xb0))
		writing.Go(func() { mergePatcher(writeCtx, r, p, rnd) })
	}
	in := &injector{r: r, proxy: proxy}
	in.play(writeCtx, sched)
	writing.Wait()
	writeElapsed := time.Since(started)

	// The quiet phase: no faults; every object exists; every writer's queued
	// change lands, then one more change of every object does.
	stoppedEarly := cfg.stopAtFirstViolation && r.checker.violationCount() > 0
	if !stoppedEarly {
		r.settle(ctx, writers)
	}
	stopChecker()
	bg.Wait()

	for _, p := range r.processes {
		p.close()
	}
	proxy.Stop()
	leaked := leakedGoroutines(ctx, leaks)
	after := runtime.NumGoroutine()

	rep := &report{cfg: cfg, elapsed: writeElapsed, goroutinesBefore: before, goroutinesAfter: after,
		faults: map[faultKind]int64{}}
	for _, k := range faultKinds {
		rep.faults[k] = r.stats.faultCount(k)
	}
	for _, p := range r.processes {
		if p == r.admin {
			continue // the burst fault's writes, counted apart
		}
		rep.applies += p.requests.Count("apply")
		rep.applied += p.responses.Succeeded("apply")
	}
	rep.violations, rep.versions, rep.lateSelf, rep.declaredTakes, rep.relists, rep.reported = r.checker.figures()
	rep.flushes, rep.flushErrs = r.stats.flushes.Load(), r.stats.flushErrors.Load()
	rep.exhausted, rep.yielded, rep.taken = r.stats.exhausted.Load(), r.stats.yielded.Load(), r.stats.taken.Load()
	rep.burstWrites, rep.killed = r.stats.burstWrites.Load(), r.stats.killed.Load()
	rep.peakHeap, rep.goroutinesPeak = r.stats.peakHeap.Load(), r.stats.peakGoroutines.Load()
	rep.firstHeap, rep.lastHeap = r.stats.firstHeap.Load(), r.stats.lastHeap.Load()
	if !stoppedEarly {
		if leaked != nil {
			rep.violations++
			rep.reported = append(rep.reported, fmt.Sprintf("goroutines left once the run stopped everything: %v", leaked))
		}
		if rep.peakHeap > heapBound {
			rep.violations++
			rep.reported = append(rep.reported, fmt.Sprintf("heap after GC peaked at %d bytes, over the bound of %d", rep.peakHeap, heapBound))
		}
	}
	r.mu.Lock()
	rep.errs = append([]string(nil), r.errs...)
	r.mu.Unlock()
	return rep, nil
}

// writers builds the processes and their writers, every one reaching the API
// server through the proxy, and a process for the checker that does not.
func (r *run) writers(proxied *rest.Config) ([]*writer, *checkerProcess, error) {
	shared, err := r.newProcess("shared", proxied, false)
	if err != nil {
		return nil, nil, err
	}
	own := func(name string, burst bool, opts ...ssa.Option) (*process, error) {
		return r.newProcess(name, proxied, burst, opts...)
	}
	var errs []error
	mk := func(name string, burst bool, opts ...ssa.Option) *process {
		p, err := own(name, burst, opts...)
		errs = append(errs, err)
		return p
	}
	incB, yield, taker := mk(writerIncB, false), mk(writerYield, false), mk("taker", false)
	plannerA, plannerB := mk("planner-a", true, plannerOptions...), mk(writerPlannerB, true, plannerOptions...)
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	guarded := r.cfg.broken != brokenUnguarded
	seed, n := r.cfg.seed, len(r.names)
	t := func(writer, manager, condType string) tracked {
		return tracked{writer: writer, manager: manager, condType: condType}
	}
	ws := []*writer{
		// One process, one Applier, three writers in their own goroutines.
		newWriter(t("inc-a", managerIncA, "SoakIncA"), seed, n, shared, incremental(t("inc-a", managerIncA, "SoakIncA"))),
		newWriter(t("declarative", managerDecl, "SoakDeclarative"), seed, n, shared, declarative(t("declarative", managerDecl, "SoakDeclarative"))),
		newWriter(t("edit", managerEdit, "SoakEdit"), seed, n, shared, edit(t("edit", managerEdit, "SoakEdit"))),
		// Processes of their own.
		newWriter(t(writerIncB, managerIncB, "SoakIncB"), seed, n, incB, incremental(t(writerIncB, managerIncB, "SoakIncB"))),
		newWriter(t(writerYield, managerYield, "SoakYield"), seed, n, yield, phaseWriter(t(writerYield, managerYield, "SoakYield"), conflicts.Yield())),
		newWriter(t("taker", managerTaker, "SoakTaker"), seed, n, taker, phaseWriter(t("taker", managerTaker, "SoakTaker"), conflicts.TakeDeclared(takerDeclaration))),
	}
	for _, pl := range []struct {
		name string
		p    *process
	}{{"planner-a", plannerA}, {writerPlannerB, plannerB}} {
		tr := tracked{writer: pl.name, manager: managerPlanner, attrKey: pl.name, shared: true}
		w := newWriter(tr, seed, n, pl.p, planner(tr, guarded))
		w.rebuildOn = rebuildPlanner
		ws = append(ws, w)
	}
	checkerCfg := rest.CopyConfig(r.env.Config)
	hc, err := rest.HTTPClientFor(checkerCfg)
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	r.processes = append(r.processes, &process{name: "checker", http: hc, requests: &apiserver.Requests{}, responses: &apiserver.Responses{}})
	r.mu.Unlock()
	return ws, &checkerProcess{cfg: checkerCfg, http: hc}, nil
}

// checkerProcess is the checker's connection to the API server.
type checkerProcess struct {
	cfg  *rest.Config
	http *http.Client
}

// settle is the quiet phase: every object exists again, every writer's queued
// change lands and so does one more, and the watch shows each of them and a
// plan on every object.
func (r *run) settle(ctx context.Context, writers []*writer) {
	for i := range r.names {
		_ = r.ensure(ctx, i)
	}
	var wg sync.WaitGroup
	for _, w := range writers {
		wg.Go(func() {
			for _, s := range w.settle(ctx, r, settleAttempts) {
				r.checker.violate("never landed once faults stopped: %s", s)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(visibleWithin)
	for {
		missing := r.invisible()
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			for _, m := range missing {
				r.checker.violate("never visible once faults stopped: %s", m)
			}
			return
		}
		sleepCtx(ctx, 200*time.Millisecond)
	}
}

// invisible lists the landed changes the watch has not shown on the current
// incarnation of their object, and the objects it shows without a plan.
func (r *run) invisible() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for writer, seqs := range r.landed {
		for i, want := range seqs {
			if want == 0 {
				continue
			}
			got, ok, _ := r.checker.seen(r.names[i], writer)
			if !ok || got < want {
				out = append(out, fmt.Sprintf("%s's change %d of %s (watch shows %d)", writer, want, r.names[i], got))
			}
		}
	}
	for _, name := range r.names {
		if _, _, plan := r.checker.seen(name, "planner-a"); plan == "" {
			out = append(out, fmt.Sprintf("a plan on %s", name))
		}
	}
	return out
}

// sample records the peak heap after a GC, and the peak goroutine count,
// every few seconds.
func (r *run) sample(ctx context.Context) {
	for ctx.Err() == nil {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		for cur := r.stats.peakHeap.Load(); ms.HeapAlloc > cur && !r.stats.peakHeap.CompareAndSwap(cur, ms.HeapAlloc); cur = r.stats.peakHeap.Load() {
		}
		r.stats.firstHeap.CompareAndSwap(0, ms.HeapAlloc)
		r.stats.lastHeap.Store(ms.HeapAlloc)
		g := int64(runtime.NumGoroutine())
		for cur := r.stats.peakGoroutines.Load(); g > cur && !r.stats.peakGoroutines.CompareAndSwap(cur, g); cur = r.stats.peakGoroutines.Load() {
		}
		sleepCtx(ctx, 5*time.Second)
	}
}

// leakOptions are goleak's options for the run that starts now: the
// goroutines running now are the suite's, and two kinds of goroutine that the
// run leaves behind are not the library's. The fault-injection proxy leaks the
// goroutines of links that a toxic was holding when their connection closed
// (toxiproxy v2.5.0, after proxy.Stop too); and the API server a restart fault
// started again runs under a new envtest process watcher.
func leakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2/toxics.(*ToxicStub).Run"),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).read"),
		goleak.IgnoreAnyFunction("github.com/Shopify/toxiproxy/v2.(*ToxicLink).write"),
		goleak.IgnoreAnyFunction("sigs.k8s.io/controller-runtime/pkg/internal/testing/process.(*State).Start.func1"),
	}
}

// leakedGoroutines waits for every goroutine the run started to end, and
// returns goleak's report of those that did not. It waits up to 90 s: a
// connection the proxy left half-open (its side gone, the client's not told)
// keeps its client's HTTP/2 read loop until client-go's health check closes it,
// 30 s without a frame and then 15 s without an answer to a ping.
func leakedGoroutines(ctx context.Context, opts []goleak.Option) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		sleepCtx(ctx, 500*time.Millisecond)
	}
}
