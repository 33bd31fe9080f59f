package bench

import (
	"fmt"
	"maps"
	"regexp"
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
	// ClientRounds is how many times scenario 4's benchmarks ran (the
	// median is reported); 0 in results from before it existed means 1.
	ClientRounds int `json:"clientRounds,omitempty"`
	// CLI sizes scenario 5; absent in results from before it existed.
	CLI CLIConfig `json:"cli,omitzero"`
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
	CLI        []CLIResult        `json:"cli,omitempty"`
}

// labels are the approaches as the document names them.
var labels = map[string]string{
	GetPatchPerMutator:       "(a) GET + merge patch per mutator",
	OptimisticPatch:          "(b) GET + optimistic-lock merge patch",
	CAPIHelper:               "(c) Cluster API patch helper",
	CAPIHelperInMemory:       "(c') Cluster API patch helper, object in memory",
	RawApply:                 "(d) raw apply",
	RawApplySerialized:       "(d') raw apply, serialized per object",
	Statusapply:              "(e) statusapply",
	SteadyFloor:              "(f) steady floor, no library",
	MergePatchStale:          "GET + merge patch (no lock)",
	StatusapplyShared:        "statusapply, one process (shared Applier)",
	StatusapplySep:           "statusapply, separate processes",
	StatusapplySharedGuarded: "statusapply, one process, guarded (as fenced)",
	StatusapplySepGuarded:    "statusapply, separate processes, guarded (as fenced)",
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

// mergedReconcile adds up the rounds of each approach, manager count and
// phase, in the order they first appear.
func mergedReconcile(rs []ReconcileResult) []ReconcileResult {
	var out []ReconcileResult
	for _, r := range rs {
		i := slices.IndexFunc(out, func(m ReconcileResult) bool {
			return m.Approach == r.Approach && m.Managers == r.Managers && m.Phase == r.Phase
		})
		if i < 0 {
			out = append(out, ReconcileResult{Approach: r.Approach, Managers: r.Managers, Mutators: r.Mutators, Phase: r.Phase})
			i = len(out) - 1
		}
		out[i].merge(r)
	}
	return out
}

// roundsOf returns the results in rs that keep accepts, in the order they
// ran.
func roundsOf[T any](rs []T, keep func(T) bool) []T {
	var out []T
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// roundSpread says how far a ratio moved between rounds: the lowest and
// highest of rate(own[i]) / rate(peer[i]), the two approaches' results paired
// round by round. A ratio over all rounds hides whether every round missed
// its goal or the rounds straddle it. It is empty with fewer than two paired
// rounds.
func roundSpread[T any](own, peer []T, rate func(T) float64) string {
	n := min(len(own), len(peer))
	if n < 2 {
		return ""
	}
	lo, hi := 0.0, 0.0
	for i := range n {
		x := ratio(rate(own[i]), rate(peer[i]))
		if i == 0 || x < lo {
			lo = x
		}
		if i == 0 || x > hi {
			hi = x
		}
	}
	return fmt.Sprintf("; per round %.2fx to %.2fx", lo, hi)
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

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
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

// Goal is one of the project's targets, judged on a run, or a ratio the
// document reports without a target.
type Goal struct {
	Scenario string
	Goal     string
	Measured string
	Met      bool
	// Report marks a row shown without a goal: it is neither met nor missed.
	Report bool
	// Unmeasured marks a goal this run has no data for (a quick run's sizes,
	// or a results file from before the approach existed).
	Unmeasured bool
}

// Verdict is the goal table's last column.
func (g Goal) Verdict() string {
	switch {
	case g.Report:
		return "reported, no goal"
	case g.Unmeasured:
		return "not measured"
	}
	return verdict(g.Met)
}

// Goals judges every goal of the scenarios the run has data for.
func (r *Results) Goals() []Goal {
	var goals []Goal
	goals = append(goals, r.reconcileGoals()...)
	goals = append(goals, r.contentionGoals()...)
	goals = append(goals, r.scaleGoals()...)
	goals = append(goals, r.clientGoals()...)
	goals = append(goals, r.cliGoals()...)
	return goals
}

// GoalsTable renders the goals as a Markdown table, with a count below it.
func (r *Results) GoalsTable() string {
	var b strings.Builder
	b.WriteString("| scenario | goal | measured | |\n|---|---|---|---|\n")
	var verdicts []string
	for _, g := range r.Goals() {
		b.WriteString(g.row())
		verdicts = append(verdicts, g.Verdict())
	}
	b.WriteString("\n" + goalCount(verdicts))
	return b.String()
}

// row is the goal's row in the goals table.
func (g Goal) row() string {
	return fmt.Sprintf("| %s | %s | %s | %s |\n", g.Scenario, g.Goal, g.Measured, g.Verdict())
}

// goalCount is the line below the goals table, counting its verdicts.
func goalCount(verdicts []string) string {
	n := map[string]int{}
	for _, v := range verdicts {
		n[v]++
	}
	s := fmt.Sprintf("%d goals met, %d missed", n[verdict(true)], n[verdict(false)])
	if u := n[Goal{Unmeasured: true}.Verdict()]; u > 0 {
		s += fmt.Sprintf(", %d not measured in this run", u)
	}
	return s + fmt.Sprintf("; %d rows reported without a goal.\n", n[Goal{Report: true}.Verdict()])
}

// reconcileGoals are scenario 1's: per M, the requests statusapply sends, and
// its reconciles/s against (d) and (c) in the changing phase and against (c)
// in the steady phase; (c') is reported.
func (r *Results) reconcileGoals() []Goal {
	if len(r.Reconcile) == 0 {
		return nil
	}
	merged := mergedReconcile(r.Reconcile)
	rounds := func(res ReconcileResult) []ReconcileResult {
		return roundsOf(r.Reconcile, func(o ReconcileResult) bool {
			return o.Approach == res.Approach && o.Managers == res.Managers && o.Phase == res.Phase
		})
	}
	vs := func(own, peer ReconcileResult) (float64, string) {
		x := ratio(own.PerSecond(), peer.PerSecond())
		return x, fmt.Sprintf("%.2fx (%.0f vs %.0f/s)%s", x, own.PerSecond(), peer.PerSecond(),
			roundSpread(rounds(own), rounds(peer), ReconcileResult.PerSecond))
	}
	var goals []Goal
	for _, m := range r.Config.Reconcile.Managers {
		ch, okCh := findReconcile(merged, Statusapply, m, PhaseChanging)
		st, okSt := findReconcile(merged, Statusapply, m, PhaseSteady)
		if !okCh || !okSt {
			continue
		}
		applies := ch.PerReconcile(float64(ch.Requests["apply"]))
		goals = append(goals, Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d: one apply per (object, manager) with a change, no GET", m),
			Measured: fmt.Sprintf("%s per reconcile", perVerb(ch.Requests, ch.Reconciles)),
			Met:      applies == float64(m) && total(ch.Requests) == ch.Reconciles*m})
		goals = append(goals, Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d: no request in steady state", m),
			Measured: fmt.Sprintf("%d requests in %d reconciles", total(st.Requests), st.Reconciles), Met: total(st.Requests) == 0})

		// Changing: against (d) for every M, against (c) for M=1 only.
		g := Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d, changing, reconciles/s: ≥ 0.95x %s", m, label(RawApply))}
		if d, ok := findReconcile(merged, RawApply, m, PhaseChanging); ok {
			var x float64
			x, g.Measured = vs(ch, d)
			g.Met = x >= 0.95
		} else {
			g.Measured, g.Unmeasured = "no (d) in this run", true
		}
		goals = append(goals, g)
		if c, ok := findReconcile(merged, CAPIHelper, m, PhaseChanging); ok {
			x, measured := vs(ch, c)
			if m == 1 {
				goals = append(goals, Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d, changing, reconciles/s: ≥ 1.2x %s", m, label(CAPIHelper)),
					Measured: measured, Met: x >= 1.2})
			} else {
				goals = append(goals, Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d, changing, reconciles/s: against %s (no goal at M > 1, see below)", m, label(CAPIHelper)),
					Measured: fmt.Sprintf("%s; requests per reconcile: %s vs %s", measured, perVerb(ch.Requests, ch.Reconciles), perVerb(c.Requests, c.Reconciles)),
					Report:   true})
			}
		}

		// Steady: against (c), which reads the informer cache as (e) does;
		// (c') reported.
		g = Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d, steady, reconciles/s: ≥ 1.0x %s (reading the same informer cache), both 0 requests", m, label(CAPIHelper))}
		if c, ok := findReconcile(merged, CAPIHelper, m, PhaseSteady); ok {
			var x float64
			x, g.Measured = vs(st, c)
			g.Measured += fmt.Sprintf("; %d vs %d requests", total(st.Requests), total(c.Requests))
			g.Met = x >= 1.0 && total(st.Requests) == 0
		} else {
			g.Measured, g.Unmeasured = "no (c) in this run", true
		}
		goals = append(goals, g)
		if c, ok := findReconcile(merged, CAPIHelperInMemory, m, PhaseSteady); ok {
			_, measured := vs(st, c)
			goals = append(goals, Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d, steady, reconciles/s: (e) against %s", m, label(CAPIHelperInMemory)),
				Measured: fmt.Sprintf("%s; %d vs %d requests", measured, total(st.Requests), total(c.Requests)), Report: true})
		}
		if f, ok := findReconcile(merged, SteadyFloor, m, PhaseSteady); ok {
			_, measured := vs(st, f)
			goals = append(goals, Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d, steady, reconciles/s: (e) against %s", m, label(SteadyFloor)),
				Measured: fmt.Sprintf("%s; %d vs %d requests", measured, total(st.Requests), total(f.Requests)), Report: true})
		}
		if sb, ok := findReconcile(merged, Statusapply, m, PhaseBackToBack); ok {
			if c, ok := findReconcile(merged, CAPIHelper, m, PhaseBackToBack); ok {
				_, measured := vs(sb, c)
				goals = append(goals, Goal{Scenario: "1", Goal: fmt.Sprintf("M=%d, %s, reconciles/s: (e) against %s", m, PhaseBackToBack, label(CAPIHelper)),
					Measured: fmt.Sprintf("%s; %d vs %d requests", measured, total(sb.Requests), total(c.Requests)), Report: true})
			}
		}
	}
	return goals
}

// contentionWriters are the writer counts scenario 2's throughput goal is
// judged at.
var contentionWriters = []int{8, 16}

// contentionGoals are scenario 2's: statusapply never loses or fails an
// update, and one process keeps up with (d') at high W.
func (r *Results) contentionGoals() []Goal {
	cont := mergedContention(r.Contention)
	if len(cont) == 0 {
		return nil
	}
	find := func(approach string, w int) (ContentionResult, bool) {
		for _, c := range cont {
			if c.Approach == approach && c.Writers == w {
				return c, true
			}
		}
		return ContentionResult{}, false
	}
	rounds := func(approach string, w int) []ContentionResult {
		return roundsOf(r.Contention, func(c ContentionResult) bool { return c.Approach == approach && c.Writers == w })
	}
	var goals []Goal
	for _, a := range []string{StatusapplyShared, StatusapplySep} {
		lost, c409, failed := 0, 0, 0
		for _, c := range cont {
			if c.Approach == a {
				lost += c.Regressions + c.FinalLost
				c409 += c.Conflict
				failed += c.Failed
			}
		}
		goals = append(goals, Goal{Scenario: "2", Goal: fmt.Sprintf("%s: no lost update, no 409, no failed write (every W)", label(a)),
			Measured: fmt.Sprintf("%d lost, %d 409s, %d failed", lost, c409, failed), Met: lost == 0 && c409 == 0 && failed == 0})
	}
	for _, w := range contentionWriters {
		g := Goal{Scenario: "2", Goal: fmt.Sprintf("W=%d, updates/s: %s ≥ 0.95x %s, with 0 lost, 0 409s, 0 failed", w, label(StatusapplyShared), label(RawApplySerialized))}
		own, okOwn := find(StatusapplyShared, w)
		ser, okSer := find(RawApplySerialized, w)
		switch {
		case !okOwn:
			g.Measured, g.Unmeasured = fmt.Sprintf("W=%d not in this run", w), true
		case !okSer:
			g.Measured, g.Unmeasured = "no (d') in this run", true
		default:
			x := ratio(own.PerSecond(), ser.PerSecond())
			lost := own.Regressions + own.FinalLost
			spread := roundSpread(rounds(StatusapplyShared, w), rounds(RawApplySerialized, w), ContentionResult.PerSecond)
			g.Measured = fmt.Sprintf("%.2fx (%.0f vs %.0f updates/s)%s; %d lost, %d 409s, %d failed", x, own.PerSecond(), ser.PerSecond(), spread, lost, own.Conflict, own.Failed)
			if ser.Failed > 0 {
				g.Measured += fmt.Sprintf(" ((d') %d failed)", ser.Failed)
			}
			g.Met = x >= 0.95 && lost == 0 && own.Conflict == 0 && own.Failed == 0
		}
		goals = append(goals, g)
		if !okOwn {
			continue
		}
		// What the lane is worth against the peers that do not serialize.
		var best ContentionResult
		for _, c := range cont {
			switch {
			case c.Writers != w, c.Approach == StatusapplyShared, c.Approach == StatusapplySep, c.Approach == RawApplySerialized,
				c.Approach == StatusapplySharedGuarded, c.Approach == StatusapplySepGuarded:
			case c.Lossless() && c.PerSecond() > best.PerSecond():
				best = c
			}
		}
		rep := Goal{Scenario: "2", Goal: fmt.Sprintf("W=%d, updates/s: one process against the fastest lossless peer that does not serialize per object", w), Report: true}
		if best.Approach == "" {
			rep.Measured = "no such peer was lossless"
		} else {
			rep.Measured = fmt.Sprintf("%.2fx %s (%.0f vs %.0f updates/s)", ratio(own.PerSecond(), best.PerSecond()), label(best.Approach), own.PerSecond(), best.PerSecond())
		}
		goals = append(goals, rep)
	}
	// What guarding every entry (a fenced batch) costs where writers meet.
	for _, pair := range [][2]string{{StatusapplySharedGuarded, StatusapplyShared}, {StatusapplySepGuarded, StatusapplySep}} {
		for _, w := range r.Config.Contention.Writers {
			g, okG := find(pair[0], w)
			u, okU := find(pair[1], w)
			if !okG || !okU || w < 2 {
				continue
			}
			// Failed updates (retries exhausted, left queued) are not counted as done.
			done := func(c ContentionResult) float64 { return float64(c.Updates-c.Failed) / max(c.Wall.Seconds(), 1e-9) }
			goals = append(goals, Goal{Scenario: "2", Report: true,
				Goal: fmt.Sprintf("W=%d: %s against %s", w, label(pair[0]), label(pair[1])),
				Measured: fmt.Sprintf("%d vs %d 409s, %d vs %d failed of %d updates; requests per update: %s vs %s; updates done/s %.0f vs %.0f",
					g.Conflict, u.Conflict, g.Failed, u.Failed, g.Updates, perVerb(g.Requests, g.Updates), perVerb(u.Requests, u.Updates),
					done(g), done(u))})
		}
	}
	return goals
}

// scaleGoals are scenario 3's: one Flush against the raw loop, in applies/s
// and in peak heap.
func (r *Results) scaleGoals() []Goal {
	sc := mergedScale(r.Scale)
	if len(sc) != 2 {
		return nil
	}
	raw, own := sc[0], sc[1]
	what := fmt.Sprintf("%d objects × %d managers in one Flush", r.Config.Scale.Objects, len(ScaleManagers))
	x := ratio(own.AppliesPerSecond(), raw.AppliesPerSecond())
	rounds := func(approach string) []ScaleResult {
		return roundsOf(r.Scale, func(s ScaleResult) bool { return s.Approach == approach })
	}
	spread := roundSpread(rounds(Statusapply), rounds(RawApply), ScaleResult.AppliesPerSecond)
	speed := Goal{Scenario: "3", Goal: what + ": ≥ 0.95x the raw loop in applies/s",
		Measured: fmt.Sprintf("%.2fx (%.0f vs %.0f applies/s)%s", x, own.AppliesPerSecond(), raw.AppliesPerSecond(), spread), Met: x >= 0.95 && own.FailedOps == 0}
	if own.FailedOps > 0 {
		speed.Measured += fmt.Sprintf("; %d failed", own.FailedOps)
	}
	mib := func(b uint64) float64 { return float64(b) / (1 << 20) }
	heap := Goal{Scenario: "3", Goal: what + ": peak heap ≤ 2x the raw loop's"}
	if raw.PeakHeap == 0 {
		heap.Measured = fmt.Sprintf("%.1f MiB vs 0 for the raw loop", mib(own.PeakHeap))
		heap.Met = own.PeakHeap == 0
	} else {
		h := ratio(float64(own.PeakHeap), float64(raw.PeakHeap))
		heap.Measured = fmt.Sprintf("%.2fx (%.1f vs %.1f MiB)", h, mib(own.PeakHeap), mib(raw.PeakHeap))
		heap.Met = h <= 2
	}
	return []Goal{speed, heap}
}

// clientGoals are scenario 4's: statusapply's client-side work against a
// hand-written apply's, and against one apply's round trip.
func (r *Results) clientGoals() []Goal {
	find := func(name string) (ClientCostResult, bool) {
		for _, c := range r.Client {
			if c.Name == name {
				return c, true
			}
		}
		return ClientCostResult{}, false
	}
	limits := []struct {
		name string
		max  float64
	}{{"StatusapplyMutators", 1.5}, {"StatusapplyEdits", 2}}
	var goals []Goal
	if raw, ok := find("RawApplyClientSide"); ok {
		for _, l := range limits {
			c, ok := find(l.name)
			if !ok {
				continue
			}
			x := ratio(c.NsPerOp, raw.NsPerOp)
			goals = append(goals, Goal{Scenario: "4", Goal: fmt.Sprintf("client side: %s ≤ %gx RawApplyClientSide in µs/op", l.name, l.max),
				Measured: fmt.Sprintf("%.2fx (%.0f vs %.0f µs)", x, c.NsPerOp/1e3, raw.NsPerOp/1e3), Met: raw.NsPerOp > 0 && x <= l.max})
		}
	}
	if rt := r.RoundTrip; rt != nil && rt.P50 > 0 {
		for _, l := range limits {
			c, ok := find(l.name)
			if !ok {
				continue
			}
			x := c.NsPerOp / float64(rt.P50)
			goals = append(goals, Goal{Scenario: "4", Goal: fmt.Sprintf("client side: %s < 5%% of one apply's p50 on envtest", l.name),
				Measured: fmt.Sprintf("%.1f%% (%.0f µs vs %s ms)", 100*x, c.NsPerOp/1e3, ms(rt.P50)), Met: x < 0.05})
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

	p("## Goals\n\n%s\n", r.GoalsTable())
	p("A ratio is over all of a scenario's rounds. *Per round* gives the lowest and the highest of the same ratio taken in\n")
	p("each round alone, the two approaches' results paired by round: a row whose rounds fall on both sides of its goal is\n")
	p("at the line, and the next run may judge it the other way.\n\n")
	p("Each scenario below says what was measured and how. Rows *reported, no goal* are ratios shown for reading the\n")
	p("others, with no target:\n\n")
	p("- Scenario 1, changing phase, M > 1, against (c): the Cluster API helper sends one patch (after one GET) for all the\n")
	p("  conditions, under one owner, whatever M is. statusapply keeps every writer's ownership apart, which takes one apply\n")
	p("  per field manager: 3 per reconcile at M=3. Per-writer ownership cannot beat one patch on requests, so the goal\n")
	p("  against (c) holds for M=1 only; at M > 1 statusapply's goal is against (d), the same applies written by hand.\n")
	p("- Scenario 1, steady phase, against (c'): the helper on an object held in memory, with no informer cache read.\n")
	p("  statusapply reads the cache in every reconcile, as (c) does; the goal is against (c), and (c') shows what the\n")
	p("  cache read costs.\n")
	p("- Scenario 1, steady phase, against (f): the least a steady reconcile of statusapply's design does, with none of the\n")
	p("  library's checks and bookkeeping. What (e) is slower than (f) by is the cost of those.\n")
	p("- Scenario 1, steady phase back to back, against (c): the same steady reconciles without the wait for the cache (a\n")
	p("  request to the API server) between one and the next. The goal is the steady phase's, where every reconcile starts\n")
	p("  after other work; this row shows what the two cost when their code and data are still in the CPU's caches.\n")
	p("- Scenario 2, one process against the fastest lossless peer that does not serialize per object: what the per-object\n")
	p("  lane is worth against (b), (c), (d) and the unlocked merge patch. The goal is against (d'), the lane's ceiling.\n\n")

	r.reconcileSection(p)
	r.contentionSection(p, chart)
	r.scaleSection(p)
	r.clientSection(p)
	r.cliSection(p)
	methodSection(p, m.Duration)
	return b.String()
}

func (r *Results) reconcileSection(p func(string, ...any)) {
	if len(r.Reconcile) == 0 {
		return
	}
	c := r.Config.Reconcile
	merged := mergedReconcile(r.Reconcile)
	p("## 1. Many small writers: one reconcile, %d status functions\n\n", c.Mutators)
	p("One reconcile runs %d status functions, each setting one condition of one Widget, spread round-robin over M field\n", c.Mutators)
	p("managers, named once per approach (a controller's field managers are constants). In the *changing* phase every\n")
	p("reconcile flips every condition's status; in the *steady* phase reconciles\n")
	steady := c.Reconciles
	if c.SteadyReconciles > 0 {
		steady = c.SteadyReconciles
	}
	p("repeat the last state and change nothing. %d rounds; per round and approach %d changing and %d steady reconciles (%d each for\n", c.Rounds, c.Reconciles, steady, c.SlowReconciles)
	p("(a)). In the changing phase the approaches take turns of %d reconciles, in the steady phase turns of %d reconciles,\n", changingTurn, steadyTurn)
	p("so that a stretch in which the whole machine is slower falls on all of them alike.\n")
	p("Reconciles/s is reconciles per second of reconcile wall time. CPU (user + system of the benchmark process, API server\n")
	p("excluded) and allocations are per reconcile.\n\n")
	p("- **(a)** each status function GETs the Widget, sets its condition (`meta.SetStatusCondition`) and sends a merge patch\n  (none when nothing changed).\n")
	p("- **(b)** one GET, every status function on that object, one merge patch with `MergeFromWithOptimisticLock`; on a 409\n  all again (`retry.RetryOnConflict(retry.DefaultRetry, ...)`); no patch when nothing changed. A minimal per-reconcile\n  merge-patch batcher.\n")
	p("- **(c)** `sigs.k8s.io/cluster-api/util/patch`: `NewHelper` on the object from the informer cache, Cluster API's\n  `conditions.Set` per status function, `helper.Patch`. The Widget is wrapped in a type with `GetConditions` /\n  `SetConditions`, so the helper takes its conditions path (a GET and an optimistic-lock patch of the conditions).\n")
	p("- **(c')** the same helper on an object the reconciler keeps in memory: `NewHelper`, `conditions.Set` per status\n")
	p("  function, `helper.Patch`, on the object the previous reconcile ended with (`Patch` leaves the edited object as it\n")
	p("  is), so no reconcile reads the informer cache; the object is read once before the first reconcile, outside the\n")
	p("  measurement. In the steady phase (c) and (c') send nothing (the helper compares before and after); what sets them\n")
	p("  apart is the cache read. In the changing phase the helper GETs the object anyway (its conditions path).\n")
	p("- **(d)** one hand-written apply configuration per manager, built from the cached object with `ssa.SetCondition` (to keep\n  `lastTransitionTime`), sent with `Status().Apply` every reconcile.\n")
	p("- **(e)** statusapply: `batcher.New` per reconcile on a long-lived `ssa.Applier`, `batcher.Status` per status function,\n  `Flush`.\n")
	p("- **(f)** the steady floor, no library: what a steady reconcile of statusapply's design does at the least, and no\n")
	p("  approach a controller could use. The status functions are queued as closures, run on a copy of the cached object\n")
	p("  into an apply configuration per manager that still holds the last intent, and each intent is compared, field by\n")
	p("  field, with a copy of it as last applied. It leaves out what a library owes besides: checking the target and the\n")
	p("  contributions, finding what each manager owns and whether it still holds for the object observed, metrics, a log\n")
	p("  level check. Shown in the steady phase only (in the changing phase it applies as (d) does); (e) against (f) is what\n")
	p("  statusapply's own machinery costs.\n\n")
	p("(c), (d), (e) and (f) read the Widget from a controller-runtime informer cache (managedFields kept), as a controller does;\n")
	p("between reconciles, outside the measurement, the harness waits until the cache holds the last write: it reads the\n")
	p("object from the API server and then from the cache. That read pushes much of a reconcile's code and data out of the\n")
	p("CPU's caches, as the other work a controller does between two reconciles of an object would. The *%s* phase\n", PhaseBackToBack)
	p("runs the steady reconciles of the approaches that sent no request in the steady phase again, in the same turns,\n")
	p("without that wait (nothing is written, so there is nothing to wait for): each reconcile follows one of its own\n")
	p("approach, as in a burst of events or a resync.\n\n")
	for _, mgr := range c.Managers {
		p("### M = %d field manager(s)\n\n", mgr)
		p("| approach | phase | reconciles/s | requests per reconcile | CPU ms/reconcile | allocs/reconcile | KiB/reconcile |\n")
		p("|---|---|---:|---|---:|---:|---:|\n")
		for _, phase := range []string{PhaseChanging, PhaseSteady, PhaseBackToBack} {
			for _, a := range []string{GetPatchPerMutator, OptimisticPatch, CAPIHelper, CAPIHelperInMemory, RawApply, Statusapply, SteadyFloor} {
				res, ok := findReconcile(merged, a, mgr, phase)
				if !ok || (a == SteadyFloor && phase == PhaseChanging) {
					continue // (f) is a steady-phase measure only
				}
				p("| %s | %s | %.1f | %s | %.2f | %.0f | %.1f |\n", label(a), phase, res.PerSecond(), perVerb(res.Requests, res.Reconciles),
					res.PerReconcile(float64(res.CPU)/1e6), res.PerAllocReconcile(float64(res.Mallocs)), res.PerAllocReconcile(float64(res.Bytes)/1024))
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
	if c.GoalRounds > 0 {
		p("The throughput goal compares two of them, (d') and statusapply in one process, at W = %s. At those W the two\n", joinInts(contentionWriters, " and "))
		p("also ran %d more rounds by themselves, alternating which went first, since a round at W=8 lasts about a second:\n", c.GoalRounds)
		p("their rows there are over %d rounds, the others' over %d.\n\n", c.Rounds+c.GoalRounds, c.Rounds)
	}
	p("- **GET + merge patch (no lock)**: GET, `meta.SetStatusCondition`, merge patch. The conditions array is replaced whole.\n")
	p("- **(b) optimistic-lock merge patch**: the same with `MergeFromWithOptimisticLock`, retried on 409 with `retry.DefaultRetry` (5 attempts).\n")
	p("- **(c) Cluster API patch helper**: GET, `NewHelper`, `conditions.Set`, `Patch` (its own GET + optimistic-lock retry loop, 5 attempts with 100 ms jittered backoff).\n")
	p("- **(d) raw apply**: one hand-written apply per update, all writers at once.\n")
	p("- **(d') raw apply, serialized per object**: the same applies, but the writers of one object share a per-object mutex\n")
	p("  (one process) held around the request only, so one apply at a time reaches the object. This is what a per-object\n")
	p("  lane does at the least: the measured ceiling for statusapply's one-process lane.\n")
	p("- **statusapply, one process**: every writer uses the same `ssa.Applier` (and client), so the Applier's per-object lane\n  sends one apply at a time to the object; a batch per update.\n")
	p("- **statusapply, separate processes**: every writer has its own client and Applier: nothing shared client-side.\n")
	p("- **guarded (as fenced)**: the two statusapply set-ups with every entry guarded (`batcher.WithGuardedEntries`, what\n")
	p("  `ctrlbatch.WithFence` sets): each apply carries the resourceVersion it was built from, and another writer's apply\n")
	p("  in between costs a 409, a GET and a rebuilt apply (5 attempts by default, then the update fails).\n\n")
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
	p("them. %d round(s) each after a warm-up round that is not kept, alternating which goes first; totals over the rounds. Peak heap is the highest `HeapInuse`\n", c.Rounds)
	p("sampled every 10 ms during the run, above the level before it (the listed objects are held by both). statusapply's\n")
	p("failures are the entries left queued after the Flush; with no result hook, a response is decoded only when the\n")
	p("object's next entry is built on it.\n\n")
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
	p("returned it after real applies (one manager owning 20 conditions, managedFields included). Nothing is sent:\n")
	p("RawApplyClientSide and the statusapply rows call `Status().Apply` on the same client, which JSON-encodes the apply\n")
	p("and decodes a recorded API server response into it, as controller-runtime's client does, but makes no request; so\n")
	p("their ratio is the client-side work statusapply adds to a hand-written apply. ")
	if n := max(r.Config.ClientRounds, 1); n > 1 {
		p("Every benchmark ran %d times, the\nbenchmarks in a rotating order; the table shows the run with the median µs/op. ", n)
	} else {
		p("Every benchmark ran once.\n")
	}
	p("The same bodies run as plain\n`Benchmark*` functions on the committed fixture `bench/testdata/observed-widget.json`.\n\n")
	p("| benchmark | what | µs/op | allocs/op | KiB/op |\n|---|---|---:|---:|---:|\n")
	for _, c := range r.Client {
		p("| %s | %s | %.1f | %d | %.1f |\n", c.Name, c.What, c.NsPerOp/1e3, c.AllocsPerOp, float64(c.BytesPerOp)/1024)
	}
	if rt := r.RoundTrip; rt != nil {
		p("\nOne apply round trip (%s): p50 %s ms, mean %s ms over %d applies.\n", rt.What, ms(rt.P50), ms(rt.Mean), rt.N)
	}
	p("\nThe statusapply rows are more than the sum of the parts above (Build, Encode): the rest is the\n")
	p("batch's own work per contribution and per entry. To see where it goes:\n")
	p("`cd bench && go test -run '^$' -bench Client/StatusapplyMutators -cpuprofile cpu.out`.\n\n")
	keptFastPaths(p)
	funcCountSection(p)
}

// keptFastPaths lists the shortcuts kept beside a general path, with what
// removing each measured (by hand, not by this run).
func keptFastPaths(p func(string, ...any)) {
	p("### Kept fast paths\n")
	p("\n")
	p("A shortcut beside a general path stays while removing it costs a row above. Each was measured once by hand against\n")
	p("a build without it (its general path always taken) and the build before it, the builds alternating, medians of 5\n")
	p("runs of each row, on the shared 2-core machine (load average 6 to 8 during the run; µs/op within a build spread by\n")
	p("up to a third, allocs/op not at all). With it, the two rows are 1.48x and 1.65x RawApplyClientSide (126 µs).\n")
	p("\n")
	p("| fast path | general path | row | before it (typed as content) | with it | without it |\n")
	p("|---|---|---|---:|---:|---:|\n")
	p("| `ssa/intentschema.go` `mustTypeIntent`: an intent of a generated apply configuration type is not typed before it is sent when a probe of its type fitted the kind's schema (once per type, kind and schema version) and its keyed lists' elements hold a key | `checkIntentSchemaAC`: the intent typed as it is | StatusapplyMutators | 924 allocs, 268 µs | 340 allocs, 187 µs | 550 allocs, 250 µs |\n")
	p("| the same | the same | StatusapplyEdits | 923 allocs, 336 µs | 340 allocs, 208 µs | 550 allocs, 283 µs |\n")
	p("\n")
	p("RawApplyClientSide (341 allocs) and StatusapplySteady (112 allocs, no intent typed) are the same in all three.\n")
	p("The build without it is this tree with `mustTypeIntent` returning true; the build before it is the parent of\n")
	p("`b8d3d0e`, the commit that added it. `cd bench && go test -run '^$' -bench 'Client/' -benchmem` in each, alternating.\n")
	p("\n")
}

// funcCountSection is what make funccount counted, by hand, not by this run.
func funcCountSection(p func(string, ...any)) {
	p("### Functions a reconcile enters\n")
	p("\n")
	p("The library functions and files one reconcile of a statusapply row above runs through, counted by `make funccount`\n")
	p("(`hack/funccount`; `make funccount FUNCCOUNT_FLAGS=-v` lists them): bench's test binary is built with count-mode\n")
	p("coverage of the library's packages (the module's, less `api/`, `cmd/`, `examples/`, `test/`, `hack/`, `docs/`,\n")
	p("`config/` and the test helpers under `internal/`), each row runs for 2 and for 6 iterations, and a coverage block whose\n")
	p("count differs between the two runs is one every reconcile enters; `go tool cover -func` names the function around it\n")
	p("(a closure is part of it; a method counts apart from a same-named method of another type). Two runs give the same\n")
	p("lists. Measured before (commit `72d115d`) and after the steady path was shortened and its small helpers folded\n")
	p("(the commit that last changed this column), on the same machine:\n")
	p("\n")
	p("| row | reconcile | before: functions | files | after: functions | files | goal |\n")
	p("|---|---|---:|---:|---:|---:|---|\n")
	p("| StatusapplySteady | steady, 20 Mutators, nothing sent | 116 | 19 | 54 | 16 | ≤ 40 in ≤ 6 files: **missed** |\n")
	p("| StatusapplyMutators | changed, 20 Mutators | 176 | 26 | 127 | 26 | ≤ 70: **missed** |\n")
	p("| StatusapplyEdits | changed, 20 Edits | 188 | 29 | 140 | 29 | ≤ 70: **missed** |\n")
	p("\n")
}

func methodSection(p func(string, ...any), duration string) {
	p("## How it was measured, and what is left out\n\n")
	p("- One envtest API server and etcd for the whole run; every approach writes its own objects, so managedFields never mix.\n")
	p("- Requests are counted by verb at the client's HTTP transport (`Env.CountingClientFor` in `internal/apiserver`); 409s by response code\n  (`apiserver.WithResponses`). Discovery requests are left out. The informer cache's list and watch are not counted:\n  a controller has that cache anyway.\n")
	p("- CPU is `getrusage(RUSAGE_SELF)` user + system around each reconcile, summed. Allocations are the `runtime.MemStats`\n  deltas (`Mallocs`, `TotalAlloc`) around %d further reconciles per phase and round, not timed: `ReadMemStats` empties\n  every allocation cache, and a reconcile timed right after it would pay for refilling them. Both are process-wide, so\n  the informer's decoding of watch events during a reconcile counts too, for every approach alike.\n", allocSamples)
	p("- Nothing here measures the API server's CPU or etcd writes; a no-op apply (raw apply in steady state) still costs\n  the server a request and a merge.\n")
	p("- Scenario 2 uses one Widget per approach and W; its writers start together behind a gate. Throughput is all\n  updates (failed ones included) over wall time.\n")
	p("- A peer is *lossless* in scenario 2 when no update was lost and no write failed. The one-process goal compares\n  statusapply with (d') at the same W: both send one apply at a time to the object from one process, so the ratio is\n  what the lane costs on top of its requests.\n")
	p("- (b) stands in for a merge-patch batcher; (c) runs with the helper's default options. No approach forces ownership.\n")
	p("- Sizes are bounded (see the tables); this run took %s.\n\n", duration)
	p("Run it: `make bench` (full, writes this file and the chart) or `make bench-quick` (small sizes, writes only to\n")
	p("`bench/results/`). Scenarios can be picked with `BENCH_SCENARIOS=reconcile,contention,scale,client,cli`: such a run\n")
	p("puts them into this document in place of those here, the goal rows and the count included, and says so in each\n")
	p("section; `make bench-cli` does that for scenario 5 alone, and a baseline binary (`BENCH_CLI_BASELINE=path`, named by\n")
	p("`BENCH_CLI_BASELINE_NAME`) runs the same steps on a fleet of its own. This document is rendered again from a results\n")
	p("file, without a run, by `cd bench && BENCH_RENDER=results/latest.json go test -run TestRender .`\n")
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

// scenarios are the numbers of the scenarios r has results for.
func (r *Results) scenarios() []string {
	var out []string
	for i, ran := range []bool{len(r.Reconcile) > 0, len(r.Contention) > 0, len(r.Scale) > 0, len(r.Client) > 0, len(r.CLI) > 0} {
		if ran {
			out = append(out, strconv.Itoa(i+1))
		}
	}
	return out
}

// goalCountRE matches the line below the goals table.
var goalCountRE = regexp.MustCompile(`(?m)^\d+ goals met, \d+ missed(, \d+ not measured in this run)?; \d+ rows reported without a goal\.$`)

// Splice puts the scenarios res has results for into doc, a document
// rendered by Markdown from an earlier run, leaving the others as they are:
// each scenario's section in place of the one doc has (or before the next
// scenario's, or before "How it was measured"), its goal rows in place of
// doc's, in scenario order, and the count below the goals table counted
// again. A run of some scenarios (make bench-cli, or make bench with
// BENCH_SCENARIOS) updates the document this way; each section it puts in
// says when and at which commit it was measured.
func Splice(doc string, res *Results, chart string) (string, error) {
	ran := res.scenarios()
	rendered := res.Markdown(chart)

	// The goal rows.
	header := strings.Index(doc, "| scenario | goal | measured | |\n|---|---|---|---|\n")
	if header < 0 {
		return "", fmt.Errorf("no goals table in the document")
	}
	from := header + len("| scenario | goal | measured | |\n|---|---|---|---|\n")
	to := from
	var rows []string
	for line := range strings.Lines(doc[from:]) {
		if !strings.HasPrefix(line, "|") {
			break
		}
		to += len(line)
		if !slices.Contains(ran, goalScenario(line)) {
			rows = append(rows, line)
		}
	}
	for _, g := range res.Goals() {
		rows = append(rows, g.row())
	}
	slices.SortStableFunc(rows, func(a, b string) int {
		x, _ := strconv.Atoi(goalScenario(a))
		y, _ := strconv.Atoi(goalScenario(b))
		return x - y
	})
	var verdicts []string
	for _, row := range rows {
		cells := strings.Split(strings.TrimSpace(row), "|")
		verdicts = append(verdicts, strings.TrimSpace(cells[len(cells)-2]))
	}
	doc = doc[:from] + strings.Join(rows, "") + doc[to:]
	if !goalCountRE.MatchString(doc) {
		return "", fmt.Errorf("no goal count below the goals table")
	}
	doc = goalCountRE.ReplaceAllString(doc, strings.TrimSuffix(goalCount(verdicts), "\n"))

	// The sections.
	for _, n := range ran {
		start, end := scenarioSection(rendered, n)
		if start < 0 {
			return "", fmt.Errorf("scenario %s has results but no section", n)
		}
		section := rendered[start:end]
		if m := res.Machine; m.Date != "" {
			section = strings.Replace(section, "\n\n", fmt.Sprintf("\n\nMeasured on its own (`%s`) on %s, at commit `%s`, on the machine above.\n\n",
				m.Command, m.Date, m.Commit), 1)
		}
		at, end := scenarioSection(doc, n)
		if at < 0 {
			// Before the next scenario's section, or the method's.
			at = strings.Index(doc, "## How it was measured")
			for next, _ := strconv.Atoi(n); next < 9; next++ {
				if s, _ := scenarioSection(doc, strconv.Itoa(next+1)); s >= 0 {
					at = s
					break
				}
			}
			if at < 0 {
				return "", fmt.Errorf("no section \"How it was measured\" to put scenario %s before", n)
			}
			end = at
		}
		doc = doc[:at] + section + doc[end:]
	}
	return doc, nil
}

// goalScenario is the scenario cell of a goals table row.
func goalScenario(row string) string {
	cells := strings.Split(row, "|")
	if len(cells) < 2 {
		return ""
	}
	return strings.TrimSpace(cells[1])
}

// scenarioSection returns where scenario n's section ("## n. ...") starts
// in doc and where the next section starts, or -1, -1.
func scenarioSection(doc, n string) (start, end int) {
	heading := "## " + n + ". "
	switch {
	case strings.HasPrefix(doc, heading):
		start = 0
	case strings.Contains(doc, "\n"+heading):
		start = strings.Index(doc, "\n"+heading) + 1
	default:
		return -1, -1
	}
	next := strings.Index(doc[start:], "\n## ")
	if next < 0 {
		return start, len(doc)
	}
	return start, start + next + 1
}
