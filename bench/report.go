package bench

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Machine describes where and how a run was made.
type Machine struct {
	CPUs        int    `json:"cpus"`
	CPUModel    string `json:"cpuModel"`
	Memory      string `json:"memory"`
	OS          string `json:"os"`
	GoVersion   string `json:"goVersion"`
	KubeVersion string `json:"kubeVersion"`
	EtcdVersion string `json:"etcdVersion"`
	Command     string `json:"command"`
	Date        string `json:"date"`
	Quick       bool   `json:"quick"`
	Duration    string `json:"duration"`
	// Commit is the library's commit, "-dirty" when the work tree had changes.
	Commit string `json:"commit,omitempty"`
}

// Config is every scenario's size, as run.
type Config struct {
	Reconcile  ReconcileConfig  `json:"reconcile"`
	Contention ContentionConfig `json:"contention"`
	Scale      ScaleConfig      `json:"scale"`
	RoundTrips int              `json:"roundTrips"`
}

// Results is one run: what the JSON file holds and the document is made from.
type Results struct {
	Machine    Machine            `json:"machine"`
	Config     Config             `json:"config"`
	Reconcile  []ReconcileResult  `json:"reconcile,omitempty"`
	Contention []ContentionResult `json:"contention,omitempty"`
	Scale      []ScaleResult      `json:"scale,omitempty"`
	Client     []ClientCostResult `json:"client,omitempty"`
	RoundTrip  *RoundTrip         `json:"roundTrip,omitempty"`
}

// labels are the approaches as the document names them.
var labels = map[string]string{
	GetPatchPerMutator: "(a) GET + merge patch per mutator",
	OptimisticPatch:    "(b) GET + optimistic-lock merge patch",
	CAPIHelper:         "(c) Cluster API patch helper",
	RawApply:           "(d) raw apply",
	Statusapply:        "(e) statusapply",
	MergePatchStale:    "GET + merge patch (no lock)",
	StatusapplyShared:  "statusapply, one process (shared Applier)",
	StatusapplySep:     "statusapply, separate processes",
}

func label(approach string) string {
	if l, ok := labels[approach]; ok {
		return l
	}
	return approach
}

// mergedContention combines the rounds of one approach at one writer count.
func mergedContention(rs []ContentionResult) []ContentionResult {
	byKey := map[string]*ContentionResult{}
	var keys []string
	for _, r := range rs {
		k := fmt.Sprintf("%s/%03d", r.Approach, r.Writers)
		m := byKey[k]
		if m == nil {
			m = &ContentionResult{Approach: r.Approach, Writers: r.Writers, Requests: map[string]int{}}
			byKey[k] = m
			keys = append(keys, k)
		}
		m.Updates += r.Updates
		m.Wall += r.Wall
		m.Conflict += r.Conflict
		m.Failed += r.Failed
		m.Regressions += r.Regressions
		m.FinalLost += r.FinalLost
		m.Latencies = append(m.Latencies, r.Latencies...)
		m.Errors = append(m.Errors, r.Errors...)
		for v, n := range r.Requests {
			m.Requests[v] += n
		}
	}
	out := make([]ContentionResult, 0, len(keys))
	for _, k := range keys {
		m := byKey[k]
		m.P50, m.P99 = Percentile(m.Latencies, 50), Percentile(m.Latencies, 99)
		out = append(out, *m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Writers != out[j].Writers {
			return out[i].Writers < out[j].Writers
		}
		return slices.Index(ContentionApproaches, out[i].Approach) < slices.Index(ContentionApproaches, out[j].Approach)
	})
	return out
}

// mergedScale combines the rounds of each approach: times and requests add
// up, the peak is the highest.
func mergedScale(rs []ScaleResult) []ScaleResult {
	var out []ScaleResult
	for _, approach := range []string{RawApply, Statusapply} {
		var m *ScaleResult
		rounds := 0
		for _, r := range rs {
			if r.Approach != approach {
				continue
			}
			rounds++
			if m == nil {
				c := r
				c.Requests = maps.Clone(r.Requests)
				m = &c
				continue
			}
			m.Objects += r.Objects
			m.Wall += r.Wall
			m.CPU += r.CPU
			m.Mallocs += r.Mallocs
			m.Bytes += r.Bytes
			m.FailedOps += r.FailedOps
			m.PeakHeap = max(m.PeakHeap, r.PeakHeap)
			m.PeakSys = max(m.PeakSys, r.PeakSys)
			for v, n := range r.Requests {
				m.Requests[v] += n
			}
		}
		if m != nil {
			out = append(out, *m)
		}
	}
	return out
}

func findReconcile(rs []ReconcileResult, approach string, managers int, phase string) (ReconcileResult, bool) {
	for _, r := range rs {
		if r.Approach == approach && r.Managers == managers && r.Phase == phase {
			return r, true
		}
	}
	return ReconcileResult{}, false
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// perReconcile prints requests per reconcile by verb, e.g. "1 get, 1 patch".
func perVerb(counts map[string]int, div int) string {
	if div == 0 {
		return "-"
	}
	var parts []string
	for _, v := range []string{"get", "patch", "apply", "update", "create"} {
		if n := counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", trimFloat(float64(n)/float64(div)), v))
		}
	}
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		if !slices.Contains([]string{"get", "patch", "apply", "update", "create", "discovery"}, v) && counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", trimFloat(float64(counts[v])/float64(div)), v))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func trimFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64)
}

func total(counts map[string]int) int {
	n := 0
	for v, c := range counts {
		if v != "discovery" {
			n += c
		}
	}
	return n
}

// Goal is one of the project's targets, judged on a run.
type Goal struct {
	Scenario string
	Goal     string
	Measured string
	Met      bool
}

// Goals judges every goal the run has data for.
func (r *Results) Goals() []Goal {
	var goals []Goal
	for _, m := range r.Config.Reconcile.Managers {
		ch, ok := findReconcile(r.Reconcile, Statusapply, m, PhaseChanging)
		if !ok {
			continue
		}
		applies := ch.PerReconcile(float64(ch.Requests["apply"]))
		goals = append(goals, Goal{"1", fmt.Sprintf("M=%d: one apply per (object, manager) with a change, no GET", m),
			fmt.Sprintf("%s per reconcile", perVerb(ch.Requests, ch.Reconciles)),
			applies == float64(m) && total(ch.Requests) == ch.Reconciles*m})
		if st, ok := findReconcile(r.Reconcile, Statusapply, m, PhaseSteady); ok {
			goals = append(goals, Goal{"1", fmt.Sprintf("M=%d: no request in steady state", m),
				fmt.Sprintf("%d requests in %d reconciles", total(st.Requests), st.Reconciles), total(st.Requests) == 0})
		}
		for _, phase := range []string{PhaseChanging, PhaseSteady} {
			own, _ := findReconcile(r.Reconcile, Statusapply, m, phase)
			for _, peer := range []struct {
				name string
				want float64
			}{{RawApply, 0.9}, {CAPIHelper, 1.2}} {
				p, ok := findReconcile(r.Reconcile, peer.name, m, phase)
				if !ok {
					continue
				}
				x := ratio(own.PerSecond(), p.PerSecond())
				goals = append(goals, Goal{"1", fmt.Sprintf("M=%d, %s: ≥ %.1fx %s in reconciles/s", m, phase, peer.want, label(peer.name)),
					fmt.Sprintf("%.2fx (%.0f vs %.0f/s)", x, own.PerSecond(), p.PerSecond()), x >= peer.want})
			}
		}
	}
	cont := mergedContention(r.Contention)
	if len(cont) > 0 {
		for _, a := range []string{StatusapplyShared, StatusapplySep} {
			lost, c409, failed := 0, 0, 0
			for _, c := range cont {
				if c.Approach == a {
					lost += c.Regressions + c.FinalLost
					c409 += c.Conflict
					failed += c.Failed
				}
			}
			goals = append(goals, Goal{"2", fmt.Sprintf("%s: no lost update, no 409, no failed write (every W)", label(a)),
				fmt.Sprintf("%d lost, %d 409s, %d failed", lost, c409, failed), lost == 0 && c409 == 0 && failed == 0})
		}
		for _, w := range r.Config.Contention.Writers {
			if w != 8 && w != 16 {
				continue
			}
			var own ContentionResult
			best := ContentionResult{}
			for _, c := range cont {
				switch {
				case c.Writers != w:
				case c.Approach == StatusapplyShared:
					own = c
				case c.Approach == StatusapplySep:
				case c.Lossless() && c.PerSecond() > best.PerSecond():
					best = c
				}
			}
			if best.Approach == "" {
				goals = append(goals, Goal{"2", fmt.Sprintf("W=%d: one process ≥ 1.3x the best lossless peer", w), "no peer was lossless", true})
				continue
			}
			x := ratio(own.PerSecond(), best.PerSecond())
			goals = append(goals, Goal{"2", fmt.Sprintf("W=%d: one process ≥ 1.3x the best lossless peer", w),
				fmt.Sprintf("%.2fx %s (%.0f vs %.0f updates/s)", x, label(best.Approach), own.PerSecond(), best.PerSecond()), x >= 1.3})
		}
	}
	if sc := mergedScale(r.Scale); len(sc) == 2 {
		raw, own := sc[0], sc[1]
		x := ratio(own.AppliesPerSecond(), raw.AppliesPerSecond())
		goals = append(goals, Goal{"3", fmt.Sprintf("%d objects × %d managers in one Flush: ≥ 0.9x the raw loop", r.Config.Scale.Objects, len(ScaleManagers)),
			fmt.Sprintf("%.2fx (%.0f vs %.0f applies/s)", x, own.AppliesPerSecond(), raw.AppliesPerSecond()), x >= 0.9})
	}
	if r.RoundTrip != nil {
		for _, c := range r.Client {
			if c.Name != "StatusapplyMutators" && c.Name != "StatusapplyEdits" {
				continue
			}
			x := c.NsPerOp / float64(r.RoundTrip.P50)
			goals = append(goals, Goal{"4", fmt.Sprintf("client-side cost (%s) < 10%% of one apply on envtest", c.Name),
				fmt.Sprintf("%.1f%% (%.0f µs vs %s ms)", 100*x, c.NsPerOp/1e3, ms(r.RoundTrip.P50)), x < 0.1})
		}
	}
	return goals
}

// Markdown renders the run as docs/benchmarks.md.
func (r *Results) Markdown(chart string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := r.Machine
	p("# Benchmarks\n\n")
	p("statusapply against the approaches controller authors pick instead, on a real API server (envtest), every approach\n")
	p("in the same run, interleaved. Generated by the harness in `bench/` from one run; the raw results are written as JSON\n")
	p("to `bench/results/`.\n\n")
	if m.Quick {
		p("> **Quick run** (`BENCH_QUICK=1`): small sizes, for checking the harness, not for quoting.\n\n")
	}
	p("> Measured on a **shared 2-core machine**: other test suites (each with its own API server) were running at the same\n")
	p("> time, and the API server, etcd and the benchmark share the cores. Absolute numbers are noisy; ratios between\n")
	p("> approaches measured in the same run, interleaved, are what to read. Rerun with the command below to check.\n\n")
	p("| | |\n|---|---|\n")
	p("| command | `%s` |\n| date | %s (took %s) |\n| CPUs (`nproc`) | %d (%s) |\n| memory | %s |\n| OS | %s |\n| Go | %s |\n| kube-apiserver | %s |\n| etcd | %s |\n\n",
		m.Command, m.Date, m.Duration, m.CPUs, m.CPUModel, m.Memory, m.OS, m.GoVersion, m.KubeVersion, m.EtcdVersion)
	if m.Commit != "" {
		p("The library at commit `%s`.\n\n", m.Commit)
	}

	p("## Goals\n\n| scenario | goal | measured | |\n|---|---|---|---|\n")
	missed := 0
	for _, g := range r.Goals() {
		if !g.Met {
			missed++
		}
		p("| %s | %s | %s | %s |\n", g.Scenario, g.Goal, g.Measured, verdict(g.Met))
	}
	p("\n%d goals missed. Each scenario below says what was measured and how.\n\n", missed)

	r.reconcileSection(p)
	r.contentionSection(p, chart)
	r.scaleSection(p)
	r.clientSection(p)
	methodSection(p, m.Duration)
	return b.String()
}

func (r *Results) reconcileSection(p func(string, ...any)) {
	if len(r.Reconcile) == 0 {
		return
	}
	c := r.Config.Reconcile
	p("## 1. Many small writers: one reconcile, %d status functions\n\n", c.Mutators)
	p("One reconcile runs %d status functions, each setting one condition of one Widget, spread round-robin over M field\n", c.Mutators)
	p("managers. In the *changing* phase every reconcile flips every condition's status; in the *steady* phase reconciles\n")
	p("repeat the last state and change nothing. %d rounds; per round and approach %d reconciles per phase (%d for (a)).\n", c.Rounds, c.Reconciles, c.SlowReconciles)
	p("Reconciles/s is reconciles per second of reconcile wall time. CPU (user + system of the benchmark process, API server\n")
	p("excluded) and allocations are per reconcile.\n\n")
	p("- **(a)** each status function GETs the Widget, sets its condition (`meta.SetStatusCondition`) and sends a merge patch\n  (none when nothing changed).\n")
	p("- **(b)** one GET, every status function on that object, one merge patch with `MergeFromWithOptimisticLock`; on a 409\n  all again (`retry.RetryOnConflict(retry.DefaultRetry, ...)`); no patch when nothing changed. A minimal per-reconcile\n  merge-patch batcher.\n")
	p("- **(c)** `sigs.k8s.io/cluster-api/util/patch`: `NewHelper` on the object from the informer cache, Cluster API's\n  `conditions.Set` per status function, `helper.Patch`. The Widget is wrapped in a type with `GetConditions` /\n  `SetConditions`, so the helper takes its conditions path (a GET and an optimistic-lock patch of the conditions).\n")
	p("- **(d)** one hand-written apply configuration per manager, built from the cached object with `ssa.SetCondition` (to keep\n  `lastTransitionTime`), sent with `Status().Apply` every reconcile.\n")
	p("- **(e)** statusapply: `batcher.New` per reconcile on a long-lived `ssa.Applier`, `batcher.Status` per status function,\n  `Flush`.\n\n")
	p("(c), (d) and (e) read the Widget from a controller-runtime informer cache (managedFields kept), as a controller does;\n")
	p("between reconciles, outside the measurement, the harness waits until the cache holds the last write.\n\n")
	for _, mgr := range c.Managers {
		p("### M = %d field manager(s)\n\n", mgr)
		p("| approach | phase | reconciles/s | requests per reconcile | CPU ms/reconcile | allocs/reconcile | KiB/reconcile |\n")
		p("|---|---|---:|---|---:|---:|---:|\n")
		for _, phase := range []string{PhaseChanging, PhaseSteady} {
			for _, a := range []string{GetPatchPerMutator, OptimisticPatch, CAPIHelper, RawApply, Statusapply} {
				res, ok := findReconcile(r.Reconcile, a, mgr, phase)
				if !ok {
					continue
				}
				p("| %s | %s | %.1f | %s | %.2f | %.0f | %.1f |\n", label(a), phase, res.PerSecond(), perVerb(res.Requests, res.Reconciles),
					res.PerReconcile(float64(res.CPU)/1e6), res.PerReconcile(float64(res.Mallocs)), res.PerReconcile(float64(res.Bytes)/1024))
			}
		}
		p("\n")
	}
}

func (r *Results) contentionSection(p func(string, ...any), chart string) {
	cont := mergedContention(r.Contention)
	if len(cont) == 0 {
		return
	}
	c := r.Config.Contention
	p("## 2. Contention: W writers on one object\n\n")
	p("W writers, each owning its own condition type, update one fresh Widget %d times each, all at once; %d round(s), the\n", c.Updates, c.Rounds)
	p("approaches in a rotating order. Each update writes the writer's counter into its condition's message. A watch on the\n")
	p("object sees every state it goes through: a *lost update* is a step in which a writer's counter went back (another\n")
	p("write undid it), plus writers whose final value is not their last successful write. *Failed* writes returned an error\n")
	p("after the approach's own retries. Latency is per update, retries included.\n\n")
	p("- **GET + merge patch (no lock)**: GET, `meta.SetStatusCondition`, merge patch. The conditions array is replaced whole.\n")
	p("- **(b) optimistic-lock merge patch**: the same with `MergeFromWithOptimisticLock`, retried on 409 with `retry.DefaultRetry` (5 attempts).\n")
	p("- **(c) Cluster API patch helper**: GET, `NewHelper`, `conditions.Set`, `Patch` (its own GET + optimistic-lock retry loop, 5 attempts with 100 ms jittered backoff).\n")
	p("- **(d) raw apply**: one hand-written apply per update, all writers at once.\n")
	p("- **statusapply, one process**: every writer uses the same `ssa.Applier` (and client), so the Applier's per-object lane\n  sends one apply at a time to the object; a batch per update.\n")
	p("- **statusapply, separate processes**: every writer has its own client and Applier: nothing shared client-side.\n\n")
	p("The peers share one client (one process); the statusapply writers observe the object as their own last apply returned it.\n\n")
	if chart != "" {
		p("![throughput vs writers](%s)\n\n", chart)
	}
	p("| W | approach | updates/s | p50 ms | p99 ms | 409s | failed | lost (watch) | lost (final) | requests per update |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, x := range cont {
		p("| %d | %s | %.1f | %s | %s | %d | %d | %d | %d | %s |\n", x.Writers, label(x.Approach), x.PerSecond(), ms(x.P50), ms(x.P99),
			x.Conflict, x.Failed, x.Regressions, x.FinalLost, perVerb(x.Requests, x.Updates))
	}
	var errs []string
	for _, x := range cont {
		if len(x.Errors) > 0 {
			errs = append(errs, fmt.Sprintf("- %s, W=%d: `%s`", label(x.Approach), x.Writers, truncate(x.Errors[0], 200)))
		}
	}
	if len(errs) > 0 {
		p("\nFirst error of each approach and W with failed writes:\n\n%s\n", strings.Join(errs, "\n"))
	}
	p("\n")
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "`", "'")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (r *Results) scaleSection(p func(string, ...any)) {
	sc := mergedScale(r.Scale)
	if len(sc) == 0 {
		return
	}
	c := r.Config.Scale
	p("## 3. Scale: %d objects × %d managers\n\n", c.Objects, len(ScaleManagers))
	p("Each of %d Widgets gets one condition from each of %d managers, every run flipping them: statusapply queues all %d\n", c.Objects, len(ScaleManagers), c.Objects*len(ScaleManagers))
	p("contributions in one batch and flushes it with `batcher.WithConcurrency(%d)`; the raw loop applies them on %d goroutines,\n", c.Concurrency, c.Concurrency)
	p("an object's three applies in a row. Objects are listed before each run (outside the measurement) as a cache would hold\n")
	p("them. %d round(s) each, alternating which goes first; totals over the rounds. Peak heap is the highest `HeapInuse`\n", c.Rounds)
	p("sampled every 10 ms during the run, above the level before it (the listed objects are held by both).\n\n")
	p("| approach | objects | wall s | applies/s | requests | CPU s | allocs | MiB allocated | peak heap MiB | peak Sys MiB | failed |\n")
	p("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range sc {
		p("| %s | %d | %.2f | %.0f | %s | %.2f | %d | %.0f | %.1f | %.0f | %d |\n", label(x.Approach), x.Objects, x.Wall.Seconds(), x.AppliesPerSecond(),
			perVerb(x.Requests, 1), x.CPU.Seconds(), x.Mallocs, float64(x.Bytes)/(1<<20), float64(x.PeakHeap)/(1<<20), float64(x.PeakSys)/(1<<20), x.FailedOps)
	}
	p("\n")
}

func (r *Results) clientSection(p func(string, ...any)) {
	if len(r.Client) == 0 {
		return
	}
	p("## 4. Client cost\n\n")
	p("Go benchmarks (`testing.Benchmark`, allocations reported) of the client-side work, on a Widget as the API server\n")
	p("returned it after real applies (one manager owning 20 conditions, managedFields included). Nothing is sent: the\n")
	p("statusapply rows flush through an Applier whose client only JSON-encodes the apply. The same bodies run as plain\n")
	p("`Benchmark*` functions on the committed fixture `bench/testdata/observed-widget.json`.\n\n")
	p("| benchmark | what | µs/op | allocs/op | KiB/op |\n|---|---|---:|---:|---:|\n")
	for _, c := range r.Client {
		p("| %s | %s | %.1f | %d | %.1f |\n", c.Name, c.What, c.NsPerOp/1e3, c.AllocsPerOp, float64(c.BytesPerOp)/1024)
	}
	if rt := r.RoundTrip; rt != nil {
		p("\nOne apply round trip (%s): p50 %s ms, mean %s ms over %d applies.\n", rt.What, ms(rt.P50), ms(rt.Mean), rt.N)
	}
	p("\nThe statusapply rows are more than the sum of the parts above (Build, Owned, Unchanged, Encode): the rest is the\n")
	p("batch's own work per contribution and per entry. To see where it goes:\n")
	p("`cd bench && go test -run '^$' -bench Client/StatusapplyMutators -cpuprofile cpu.out`.\n\n")
}

func methodSection(p func(string, ...any), duration string) {
	p("## How it was measured, and what is left out\n\n")
	p("- One envtest API server and etcd for the whole run; every approach writes its own objects, so managedFields never mix.\n")
	p("- Requests are counted by verb at the client's HTTP transport (`testenv.CountingClientFor`); 409s by response code\n  (`testenv.WithResponses`). Discovery requests are left out. The informer cache's list and watch are not counted:\n  a controller has that cache anyway.\n")
	p("- CPU is `getrusage(RUSAGE_SELF)` user + system around each reconcile, summed; allocations are the `runtime.MemStats`\n  deltas (`Mallocs`, `TotalAlloc`). Both are process-wide, so the informer's decoding of watch events during a reconcile\n  counts too, for every approach alike.\n")
	p("- Nothing here measures the API server's CPU or etcd writes; a no-op apply (raw apply in steady state) still costs\n  the server a request and a merge.\n")
	p("- Scenario 2 uses one Widget per approach and W; its writers start together behind a gate. Throughput is all\n  updates (failed ones included) over wall time.\n")
	p("- A peer is *lossless* in scenario 2 when no update was lost and no write failed; the one-process goal compares\n  statusapply with the fastest such peer at the same W.\n")
	p("- (b) stands in for a merge-patch batcher; (c) runs with the helper's default options. No approach forces ownership.\n")
	p("- Sizes are bounded (see the tables); this run took %s.\n\n", duration)
	p("Run it: `make bench` (full, writes this file and the chart) or `make bench-quick` (small sizes, writes only to\n")
	p("`bench/results/`). Scenarios can be picked with `BENCH_SCENARIOS=reconcile,contention,scale,client`; this document is\n")
	p("rendered again from a results file, without a run, by `cd bench && BENCH_RENDER=results/latest.json go test -run TestRender .`\n")
}

// Chart draws updates/s against W for every contention approach.
func (r *Results) Chart(path string) error {
	cont := mergedContention(r.Contention)
	if len(cont) == 0 {
		return nil
	}
	pl := plot.New()
	pl.Title.Text = "Contention: W writers, one object (envtest, shared 2-core machine)"
	pl.X.Label.Text = "writers (W)"
	pl.Y.Label.Text = "updates/s"
	pl.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, w := range r.Config.Contention.Writers {
		ticks = append(ticks, plot.Tick{Value: float64(w), Label: strconv.Itoa(w)})
	}
	pl.X.Tick.Marker = plot.ConstantTicks(ticks)
	pl.Y.Min = 0
	pl.Legend.TextStyle.Font.Size = vg.Points(9)
	pl.Legend.Top = true
	pl.Legend.Left = false
	var lines []any
	top := 0.0
	for _, a := range ContentionApproaches {
		var pts plotter.XYs
		lossy := false
		for _, c := range cont {
			if c.Approach == a {
				pts = append(pts, plotter.XY{X: float64(c.Writers), Y: c.PerSecond()})
				top = max(top, c.PerSecond())
				lossy = lossy || !c.Lossless()
			}
		}
		name := label(a)
		if lossy {
			name += " (lost or failed writes)"
		}
		if len(pts) > 0 {
			lines = append(lines, name, pts)
		}
	}
	pl.Y.Max = top * 1.5 // room for the legend above the lines
	if err := plotutil.AddLinePoints(pl, lines...); err != nil {
		return err
	}
	return pl.Save(9*vg.Inch, 5.5*vg.Inch, path)
}
