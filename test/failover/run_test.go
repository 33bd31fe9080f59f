package failover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/examples/widgets"
)

const (
	objectCount = 8
	// bumpEvery is how often the driver increments one Widget's spec.replicas.
	bumpEvery = 120 * time.Millisecond
	// legacyEvery is how often the legacy writer patches one Widget.
	legacyEvery = 200 * time.Millisecond
	// convergeWithin bounds how long after the faults stop every Widget must
	// show the status its spec implies: a lease duration for a takeover, the
	// API server's restart, and the reconciles of every Widget, with room.
	convergeWithin = 60 * time.Second
)

// Fault kinds.
const (
	faultKill    = "kill"
	faultPause   = "pause"
	faultRestart = "restart"
	faultRolling = "rolling"
)

// stats are a run's counters.
type stats struct {
	kills, pauses, takeovers, restarts, rollings atomic.Int64
	spawned, exited                              atomic.Int64
	bumps, legacyPatches                         atomic.Int64
}

// report is what a run prints.
type report struct {
	cfg               config
	elapsed           time.Duration
	converged         time.Duration
	convergeChecked   bool
	fenced            int
	stopped, unknown  int // Flushes the fence stopped; applies of unknown outcome (replicas' logs)
	regressions       int // violations of which a value went back or disappeared
	audit             auditFigures
	convergeErr       error
	violations        int
	versions, relists int
	reported          []string
	st                *stats
	peaks             []float64
	applies           float64
	errs              []string
}

func (r *report) line() string {
	peaks := append([]float64(nil), r.peaks...)
	sort.Float64s(peaks)
	ps := make([]string, len(peaks))
	for i, p := range peaks {
		ps[i] = fmt.Sprintf("%.1f", p)
	}
	conv := fmt.Sprintf("%.1fs", r.converged.Seconds())
	switch {
	case !r.convergeChecked:
		conv = "not checked (stopped at the first violation)"
	case r.convergeErr != nil:
		conv = "no: " + r.convergeErr.Error()
	}
	return fmt.Sprintf("failover soak: duration=%s seed=%d broken=%q invariant violations: %d\n"+
		"  faults{kill=%d pause=%d (taken over while paused %d) restart=%d rolling=%d} processes started=%d exited=%d\n"+
		"  writes: applies=%.0f (scraped from the replicas; a killed one's last second is missing) spec bumps=%d legacy patches=%d\n"+
		"  set-up: fence=%s replicas=%d starved=%t lease=%s renew=%s\n"+
		"  reconciles whose status the fence dropped=%d, whose flush it stopped=%d; applies of unknown outcome=%d\n"+
		"  audit log: status applies by replicas=%d (and %d refused with a 409); landed while another replica led, unguarded=%d (after their sender resumed from a pause: %d), guarded on an unchanged object=%d; regressions=%d\n"+
		"  versions checked=%d relists=%d converged after faults=%s (bound %s)\n"+
		"  peak heap per process MiB=[%s]",
		r.elapsed.Round(time.Second), r.cfg.seed, r.cfg.broken, r.violations,
		r.st.kills.Load(), r.st.pauses.Load(), r.st.takeovers.Load(), r.st.restarts.Load(), r.st.rollings.Load(),
		r.st.spawned.Load(), r.st.exited.Load(),
		r.applies, r.st.bumps.Load(), r.st.legacyPatches.Load(),
		r.cfg.su.fence, r.cfg.su.count, r.cfg.su.starved, r.cfg.su.lease, r.cfg.su.renew,
		r.fenced, r.stopped, r.unknown,
		r.audit.applies, r.audit.refused, r.audit.stale, r.audit.staleAfterResume, r.audit.lateGuarded, r.regressions,
		r.versions, r.relists, conv, convergeWithin, strings.Join(ps, " "))
}

// run is one failover soak.
type run struct {
	cfg   config
	ns    string
	c     client.Client
	rng   *rand.Rand
	rngMu sync.Mutex
	st    *stats
	rs    *replicas
	names []string

	errMu sync.Mutex
	errs  []string

	pausesMu sync.Mutex
	pauses   []pauseRecord
}

// pauseRecord is one leader the driver stopped, and when it continued.
type pauseRecord struct {
	replica          string
	stopped, resumed time.Time
}

func (r *run) intn(n int) int {
	r.rngMu.Lock()
	defer r.rngMu.Unlock()
	return r.rng.IntN(n)
}

func (r *run) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.intn(int(hi-lo)+1))
}

func (r *run) fail(format string, args ...any) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func soak(ctx context.Context, ns string, c config, out io.Writer) (*report, error) {
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "failover-logs-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	st := &stats{}
	su := c.su
	switch c.broken {
	case brokenNoFence:
		su.fence = fenceOff
	case brokenLeaseOnly:
		su.fence = fenceLeaseOnly
	}
	c.su = su
	r := &run{cfg: c, ns: ns, c: wc, rng: rand.New(rand.NewPCG(c.seed, c.seed^0x9e3779b97f4a7c15)), st: st,
		rs: newReplicas(ns, dir, su, st)}
	stopHogs := func() {}
	if su.starved {
		if stopHogs, err = startHogs(hogCount); err != nil {
			return nil, err
		}
	}
	defer func() { stopHogs() }()
	for i := range objectCount {
		name := fmt.Sprintf("w%02d", i)
		r.names = append(r.names, name)
		w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.WidgetSpec{Replicas: 1}}
		if err := wc.Create(ctx, w, client.FieldOwner(driverManager)); err != nil {
			return nil, err
		}
	}
	chk := newChecker()
	chkCtx, stopChecker := context.WithCancel(ctx)
	var bg sync.WaitGroup
	bg.Add(1)
	go func() { defer bg.Done(); chk.run(chkCtx, wc, ns) }()
	scrapeCtx, stopScrape := context.WithCancel(ctx)
	bg.Add(1)
	go func() { defer bg.Done(); r.rs.scrape(scrapeCtx) }()
	defer func() {
		r.rs.close()
		stopScrape()
		stopChecker()
		bg.Wait()
	}()

	for range su.count {
		if _, err := r.rs.spawn(); err != nil {
			return nil, err
		}
	}
	if _, err := r.waitLeader(ctx, "", 60*time.Second); err != nil {
		return nil, fmt.Errorf("no leader: %w", err)
	}

	start := time.Now()
	faultCtx, stopFaults := context.WithTimeout(ctx, c.duration*9/10)
	writeCtx, stopWriters := context.WithTimeout(ctx, c.duration)
	if c.stopAtFirstViolation {
		go func() {
			select {
			case <-chk.failed:
				stopFaults()
				stopWriters()
			case <-writeCtx.Done():
			}
		}()
	}
	var writers sync.WaitGroup
	writers.Add(1)
	go func() { defer writers.Done(); r.bump(writeCtx) }()
	legacyCtx, stopLegacy := context.WithCancel(ctx)
	var legacy sync.WaitGroup
	legacy.Add(1)
	go func() { defer legacy.Done(); r.legacy(legacyCtx) }()
	r.faults(faultCtx, out)
	stopFaults()
	writers.Wait()
	stopWriters()
	elapsed := time.Since(start)

	// Starvation is for the faults; convergence is checked on a machine
	// that has its CPU back.
	stopHogs()
	stopHogs = func() {}
	rep := &report{cfg: c, elapsed: elapsed, st: st}
	if chk.violations == 0 || !c.stopAtFirstViolation {
		// Every replica runs again; the Widgets must reach the state their
		// spec implies, the legacy writer still writing.
		r.rs.mu.Lock()
		for _, rep := range r.rs.live {
			if rep.stopped {
				rep.stopped = false
				_ = rep.cmd.Process.Signal(syscall.SIGCONT)
			}
		}
		r.rs.mu.Unlock()
		t0 := time.Now()
		rep.convergeErr = r.converge(ctx)
		rep.converged, rep.convergeChecked = time.Since(t0), true
	}
	stopLegacy()
	legacy.Wait()
	// The last versions reach the checker.
	time.Sleep(time.Second)
	rep.violations, rep.versions, rep.relists, rep.reported = chk.figures()
	rep.peaks, rep.applies = r.rs.heapFigures()
	rep.fenced = r.rs.countInLogs(fencedMessage)
	rep.stopped = r.rs.countInLogs(stoppedMessage)
	rep.unknown = r.rs.countInLogs(unknownMessage)
	rep.regressions = chk.regressionCount()
	r.pausesMu.Lock()
	pauses := append([]pauseRecord(nil), r.pauses...)
	r.pausesMu.Unlock()
	if rep.audit, err = analyseAudit(auditLog, ns, "widgets-failover", pauses); err != nil {
		r.fail("reading the audit log: %v", err)
	}
	for _, s := range rep.audit.reported {
		fmt.Fprintln(out, "failover soak: stale apply:", s)
	}
	r.errMu.Lock()
	rep.errs = append(rep.errs, r.errs...)
	r.errMu.Unlock()
	if rep.violations > 0 || rep.convergeErr != nil {
		r.rs.mu.Lock()
		all := append([]*replica(nil), r.rs.all...)
		r.rs.mu.Unlock()
		for _, rp := range all {
			fmt.Fprintf(out, "--- %s, last lines:\n%s\n", rp.name, tail(rp, 8))
		}
	}
	// The next run's replicas must not reconcile this run's Widgets.
	_ = wc.DeleteAllOf(context.Background(), &v1alpha1.Widget{}, client.InNamespace(ns))
	return rep, nil
}

// leader returns the replica holding the Lease, "" when none does.
func (r *run) leader(ctx context.Context) string {
	l := &coordinationv1.Lease{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: "widgets-failover"}, l); err != nil {
		return ""
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitLeader waits until a live replica other than not holds the Lease.
func (r *run) waitLeader(ctx context.Context, not string, within time.Duration) (*replica, error) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if name := r.leader(ctx); name != "" && name != not {
			if rp := r.rs.byName(name); rp != nil {
				return rp, nil
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	return nil, errors.New("timed out")
}

// bump increments a random Widget's spec.replicas now and then: a new
// generation, which every writer's next value derives from.
func (r *run) bump(ctx context.Context) {
	for ctx.Err() == nil {
		sleepCtx(ctx, r.between(bumpEvery/2, bumpEvery*3/2))
		r.bumpOne(ctx, r.names[r.intn(len(r.names))])
	}
}

func (r *run) bumpOne(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w := &v1alpha1.Widget{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: name}, w); err != nil {
		return
	}
	// Guarded by resourceVersion: replicas only ever grows.
	base := w.DeepCopy()
	w.Spec.Replicas++
	if err := r.c.Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(driverManager)); err == nil {
		r.st.bumps.Add(1)
	}
}

// legacy is a writer that has not moved to server-side apply: it reads a
// Widget and merge-patches the generation it saw into its own attribute.
// Under SOAK_BROKEN=mergepatch it merge-patches its own condition instead,
// which sends the whole conditions array of a snapshot it held for a while.
func (r *run) legacy(ctx context.Context) {
	for ctx.Err() == nil {
		sleepCtx(ctx, r.between(legacyEvery/2, legacyEvery*3/2))
		name := r.names[r.intn(len(r.names))]
		hold := time.Duration(0)
		if r.cfg.broken == brokenMergePatch {
			hold = r.between(0, 300*time.Millisecond)
		}
		if r.legacyOne(ctx, name, hold) {
			r.st.legacyPatches.Add(1)
		}
	}
}

func (r *run) legacyOne(ctx context.Context, name string, hold time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	w := &v1alpha1.Widget{}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: name}, w); err != nil {
		return false
	}
	var body []byte
	if r.cfg.broken == brokenMergePatch {
		sleepCtx(ctx, hold)
		conds := w.Status.Conditions
		meta.SetStatusCondition(&conds, metav1.Condition{Type: conditionLegacy, Status: metav1.ConditionTrue,
			Reason: "Seen", Message: "generation " + strconv.FormatInt(w.Generation, 10), ObservedGeneration: w.Generation})
		body, _ = json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	} else {
		body, _ = json.Marshal(map[string]any{"status": map[string]any{"attributes": map[string]string{legacyKey: strconv.FormatInt(w.Generation, 10)}}})
	}
	return r.c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, body), client.FieldOwner(legacyManager)) == nil
}

// faults injects faults one after the other until ctx ends.
func (r *run) faults(ctx context.Context, out io.Writer) {
	kinds := []string{faultPause, faultKill, faultRolling, faultRestart}
	pausesOnly := r.cfg.broken == brokenNoFence || r.cfg.su.starved
	if pausesOnly {
		kinds = []string{faultPause}
	}
	gapLo, gapHi := time.Second, 3*time.Second
	if r.cfg.su.starved {
		// As many pauses as the run has room for.
		gapLo, gapHi = 200*time.Millisecond, 600*time.Millisecond
	}
	if r.cfg.broken == brokenMergePatch {
		kinds = nil
	}
	var lastRestart time.Time
	for i := 0; ctx.Err() == nil; i++ {
		sleepCtx(ctx, r.between(gapLo, gapHi))
		if ctx.Err() != nil || len(kinds) == 0 {
			continue
		}
		kind := kinds[i%len(kinds)]
		if i >= len(kinds) {
			// After one of each: pauses and kills most, restarts at most one a minute.
			switch n := r.intn(10); {
			case n < 4:
				kind = faultPause
			case n < 7:
				kind = faultKill
			case n < 9:
				kind = faultRolling
			default:
				kind = faultRestart
			}
			if pausesOnly {
				kind = faultPause
			}
		}
		if kind == faultRestart && time.Since(lastRestart) < time.Minute {
			kind = faultKill
		}
		fmt.Fprintf(out, "%s fault %s\n", time.Now().Format("15:04:05.000"), kind)
		switch kind {
		case faultKill:
			r.kill(ctx)
		case faultPause:
			r.pause(ctx, out)
		case faultRolling:
			r.rolling(ctx)
		case faultRestart:
			lastRestart = time.Now()
			r.restart()
		}
	}
}

// kill SIGKILLs the leader at a random moment: the driver bumps a few
// Widgets first, so the leader is reconciling and flushing when it dies.
func (r *run) kill(ctx context.Context) {
	rp, err := r.waitLeader(ctx, "", 20*time.Second)
	if err != nil {
		return
	}
	for range 3 {
		r.bumpOne(ctx, r.names[r.intn(len(r.names))])
	}
	sleepCtx(ctx, r.between(0, 2*r.cfg.su.work))
	r.rs.signal(rp, syscall.SIGKILL)
	r.st.kills.Add(1)
	_, _ = r.waitLeader(ctx, rp.name, 20*time.Second)
}

// pause SIGSTOPs the leader mid-reconcile, past its lease: another replica
// takes over and writes newer values while it is stopped; then SIGCONT.
func (r *run) pause(ctx context.Context, out io.Writer) {
	rp, err := r.waitLeader(ctx, "", 20*time.Second)
	if err != nil {
		return
	}
	for range 3 {
		r.bumpOne(ctx, r.names[r.intn(len(r.names))])
	}
	sleepCtx(ctx, r.between(0, 2*r.cfg.su.work))
	p := pauseRecord{replica: rp.name, stopped: time.Now()}
	r.rs.signal(rp, syscall.SIGSTOP)
	r.st.pauses.Add(1)
	// Past the lease, until another replica leads and has had time to write.
	sleepCtx(context.Background(), r.cfg.su.lease)
	if _, err := r.waitLeader(context.Background(), rp.name, 15*time.Second); err == nil {
		r.st.takeovers.Add(1)
	}
	hold := r.between(500*time.Millisecond, 2*time.Second)
	if r.cfg.su.starved {
		hold = r.between(300*time.Millisecond, time.Second)
	}
	sleepCtx(context.Background(), hold)
	r.rs.signal(rp, syscall.SIGCONT)
	p.resumed = time.Now()
	r.pausesMu.Lock()
	r.pauses = append(r.pauses, p)
	r.pausesMu.Unlock()
	fmt.Fprintf(out, "%s continued %s\n", time.Now().Format("15:04:05.000"), rp.name)
}

// rolling replaces the oldest replica: a new one starts, then the old one is
// stopped gracefully (it releases the lease if it holds it).
func (r *run) rolling(ctx context.Context) {
	old := r.rs.oldest()
	if old == nil {
		return
	}
	if _, err := r.rs.spawn(); err != nil {
		return
	}
	sleepCtx(ctx, r.between(time.Second, 2*time.Second))
	r.rs.stop(old)
	r.st.rollings.Add(1)
}

// restart stops the API server and starts it again, same port and certificates.
func (r *run) restart() {
	s := env.Environment().ControlPlane.APIServer
	if err := s.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
		r.fail("stopping the API server: %v", err)
	}
	if err := s.Start(); err != nil {
		r.fail("starting the API server again: %v", err)
		return
	}
	r.st.restarts.Add(1)
}

// converge waits until every Widget shows what its spec implies: each
// writer's value at the current generation, readyReplicas equal to
// spec.replicas, a plan.
func (r *run) converge(ctx context.Context) error {
	deadline := time.Now().Add(convergeWithin)
	var last string
	for {
		last = r.unconverged(ctx)
		if last == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New(last)
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
}

func (r *run) unconverged(ctx context.Context) string {
	for _, name := range r.names {
		w := &v1alpha1.Widget{}
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: name}, w); err != nil {
			return name + ": " + err.Error()
		}
		g := w.Generation
		want := map[string]int64{
			widgets.ReadinessManager + " Ready":              g,
			widgets.ReadinessManager + " observedGeneration": g,
			widgets.ReadinessManager + " readyReplicas":      int64(w.Spec.Replicas),
			widgets.NetworkingManager + " Reachable":         g,
			widgets.PlannerManager + " Planned":              g,
		}
		if r.cfg.broken == brokenMergePatch {
			want[legacyManager+" Legacy"] = g
		} else {
			want[legacyManager+" attribute"] = g
		}
		for _, v := range values {
			if n, ok := want[v.name]; ok && v.of(w) != n {
				return fmt.Sprintf("%s: %s is %d, want %d", name, v.name, v.of(w), n)
			}
		}
		if w.Status.Plan == nil {
			return name + ": no plan"
		}
	}
	return ""
}
