package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/internal/apiserver"
)

// fixturePath is the client-cost fixture the plain Benchmark functions use, so
// that `go test -bench .` needs no API server.
const fixturePath = "testdata/observed-widget.json"

// runConfig reads the run's sizes from the environment: BENCH_QUICK=1 for the
// quick subset, BENCH_SCENARIOS to pick scenarios.
func runConfig() (cfg Config, quick bool, scenarios []string) {
	quick = os.Getenv("BENCH_QUICK") == "1"
	scenarios = []string{"client", "reconcile", "contention", "scale", "cli"}
	if s := os.Getenv("BENCH_SCENARIOS"); s != "" {
		scenarios = strings.Split(s, ",")
	}
	if quick {
		// W=8 is in, so that scenario 2's goal is judged at one of its writer counts.
		return Config{
			Reconcile:    ReconcileConfig{Mutators: 20, Managers: []int{1, 3}, Reconciles: 10, SlowReconciles: 3, Rounds: 1},
			Contention:   ContentionConfig{Writers: []int{1, 2, 4, 8}, Updates: 10, Rounds: 1, GoalRounds: 1},
			Scale:        ScaleConfig{Objects: 100, Concurrency: 8, Rounds: 2},
			RoundTrips:   30,
			ClientRounds: 1,
			CLI:          cliConfig(500, 100),
		}, true, scenarios
	}
	return Config{
		Reconcile:    ReconcileConfig{Mutators: 20, Managers: []int{1, 3}, Reconciles: 80, SlowReconciles: 10, SteadyReconciles: 1000, Rounds: 4},
		Contention:   ContentionConfig{Writers: []int{1, 2, 4, 8, 16}, Updates: 20, Rounds: 2, GoalRounds: 6},
		Scale:        ScaleConfig{Objects: 1000, Concurrency: 8, Rounds: 4},
		RoundTrips:   100,
		ClientRounds: 3,
		CLI:          cliConfig(10000, 1000),
	}, false, scenarios
}

// TestBenchmarks runs the envtest scenarios and writes the results. It only
// runs when BENCH=1, so that `go test ./...` in this module stays quick.
func TestBenchmarks(t *testing.T) {
	if os.Getenv("BENCH") != "1" {
		t.Skip("set BENCH=1 (make bench) to run the envtest benchmarks")
	}
	cfg, quick, scenarios := runConfig()
	began := time.Now()
	ctx, env := startEnv(t, 55*time.Minute)
	h, err := NewHarness(env)
	if err != nil {
		t.Fatal(err)
	}
	res := &Results{Config: cfg, Machine: machine(t, env, quick)}
	namespace := func(prefix string) string {
		ns, err := env.CreateNamespace(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	for _, s := range scenarios {
		start := time.Now()
		switch s {
		case "client":
			f, rt, err := PrepareClientFixture(ctx, h, namespace("client"), cfg.RoundTrips)
			if err != nil {
				t.Fatal(err)
			}
			res.RoundTrip = &rt
			t.Logf("apply round trip: p50 %v, mean %v", rt.P50, rt.Mean)
			if _, err := os.Stat(fixturePath); err != nil || os.Getenv("BENCH_UPDATE_FIXTURE") == "1" {
				if err := SaveClientFixture(fixturePath, f); err != nil {
					t.Fatal(err)
				}
			}
			res.Client = RunClientCost(f, cfg.ClientRounds, t.Logf)
		case "reconcile":
			if res.Reconcile, err = RunReconcile(ctx, h, namespace("reconcile"), cfg.Reconcile, t.Logf); err != nil {
				t.Fatal(err)
			}
		case "contention":
			if res.Contention, err = RunContention(ctx, h, namespace("contention"), cfg.Contention, t.Logf); err != nil {
				t.Fatal(err)
			}
		case "scale":
			ns := namespace("scale")
			created := time.Now()
			if err := CreateScaleObjects(ctx, h, ns, cfg.Scale.Objects, 8); err != nil {
				t.Fatal(err)
			}
			t.Logf("created %d objects in %v", cfg.Scale.Objects, time.Since(created).Round(time.Millisecond))
			if res.Scale, err = RunScale(ctx, h, ns, cfg.Scale, t.Logf); err != nil {
				t.Fatal(err)
			}
		case "cli":
			if res.CLI, err = RunCLI(ctx, env, buildCLI(t), os.Getenv("BENCH_CLI_BASELINE"), cfg.CLI, t.Logf); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unknown scenario %q (want client, reconcile, contention, scale or cli)", s)
		}
		t.Logf("scenario %s took %v", s, time.Since(start).Round(time.Second))
	}
	res.Machine.Duration = time.Since(began).Round(time.Second).String()
	// A run of some scenarios at full size puts them into the document.
	if err := write(res, quick, !quick && os.Getenv("BENCH_SCENARIOS") != ""); err != nil {
		t.Fatal(err)
	}
	t.Logf("goals:\n\n%s", res.GoalsTable())
}

// cliConfig sizes scenario 5: objects for the binary of this tree, and
// baselineObjects for the one BENCH_CLI_BASELINE names (a statusapply
// binary built elsewhere, such as from an earlier commit, which
// BENCH_CLI_BASELINE_NAME names in the document), when set.
// BENCH_CLI_OBJECTS=N,M replaces both.
func cliConfig(objects, baselineObjects int) CLIConfig {
	if s := os.Getenv("BENCH_CLI_OBJECTS"); s != "" {
		if _, err := fmt.Sscanf(s, "%d,%d", &objects, &baselineObjects); err != nil {
			panic(fmt.Sprintf("BENCH_CLI_OBJECTS=%q: want N,M", s))
		}
	}
	c := CLIConfig{Objects: objects}
	if os.Getenv("BENCH_CLI_BASELINE") != "" {
		c.BaselineObjects = baselineObjects
		c.Baseline = os.Getenv("BENCH_CLI_BASELINE_NAME")
		if c.Baseline == "" {
			c.Baseline = "baseline"
		}
	}
	return c
}

// buildCLI builds the statusapply binary of this tree into a temporary
// directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "statusapply")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/statusapply")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/statusapply: %v\n%s", err, out)
	}
	return bin
}

// startEnv starts an API server for t, stopped when t ends, and a context
// that ends after timeout.
func startEnv(t *testing.T, timeout time.Duration) (context.Context, *apiserver.Env) {
	t.Helper()
	// Without a logger controller-runtime buffers log calls for 30 s and then
	// complains; the library logs every apply at V(1), which must cost the same
	// throughout the run.
	log.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	env, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	return ctx, env
}

// saveJSON writes v as indented JSON into each named file under results/.
func saveJSON(v any, names ...string) error {
	if err := os.MkdirAll("results", 0o755); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join("results", name), raw, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestRender rewrites the document and chart from a results file
// (BENCH_RENDER=results/latest.json), without running anything.
func TestRender(t *testing.T) {
	path := os.Getenv("BENCH_RENDER")
	if path == "" {
		t.Skip("set BENCH_RENDER to a results file to render it")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := &Results{}
	if err := json.Unmarshal(raw, res); err != nil {
		t.Fatal(err)
	}
	if err := render(res, res.Machine.Quick, false); err != nil {
		t.Fatal(err)
	}
}

// write stores the results as JSON under results/ and renders them: a full
// run into docs/, a quick one next to its JSON.
func write(res *Results, quick, splice bool) error {
	name := "latest.json"
	if quick {
		name = "quick-latest.json"
	}
	if err := saveJSON(res, "results-"+time.Now().UTC().Format("20060102T150405Z")+".json", name); err != nil {
		return err
	}
	return render(res, quick, splice)
}

// render writes the document and chart of res, or with splice puts the
// scenarios res has into the document there (Splice).
func render(res *Results, quick, splice bool) error {
	doc, chart, link := filepath.Join("..", "docs", "benchmarks.md"), filepath.Join("..", "docs", "benchmarks-contention.png"), "benchmarks-contention.png"
	if quick {
		doc, chart, link = filepath.Join("results", "benchmarks-quick.md"), filepath.Join("results", "benchmarks-contention-quick.png"), "benchmarks-contention-quick.png"
	}
	if len(res.Contention) == 0 {
		link = ""
	} else if err := res.Chart(chart); err != nil {
		return fmt.Errorf("drawing %s: %w", chart, err)
	}
	md := res.Markdown(link)
	if splice {
		old, err := os.ReadFile(doc)
		if err != nil {
			return err
		}
		if md, err = Splice(string(old), res, link); err != nil {
			return fmt.Errorf("%s: %w", doc, err)
		}
	}
	return os.WriteFile(doc, []byte(md), 0o644)
}

// machine describes this machine and the API server.
func machine(t *testing.T, env *apiserver.Env, quick bool) Machine {
	m := Machine{
		CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, GoVersion: runtime.Version(), Quick: quick,
		Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), Command: os.Getenv("BENCH_COMMAND"),
		CPUModel: procField("/proc/cpuinfo", "model name"), Memory: memTotal(),
	}
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	if m.Command == "" {
		m.Command = "cd bench && BENCH=1 go test -run '^TestBenchmarks$' -v -timeout 60m ."
	}
	if dc, err := discovery.NewDiscoveryClientForConfig(env.Config); err == nil {
		if v, err := dc.ServerVersion(); err == nil {
			m.KubeVersion = v.GitVersion
			if strings.HasPrefix(v.GitVersion, "v0.0.0") {
				// Built from source without version stamping, as `make envtest` does.
				m.KubeVersion = fmt.Sprintf("v%s (built from source by `make envtest`; reports %s)", apiserver.KubernetesVersion, v.GitVersion)
			}
		}
	}
	if dir, err := apiserver.BinaryAssetsDirectory(); err == nil {
		if out, err := exec.Command(filepath.Join(dir, "etcd"), "--version").Output(); err == nil {
			for line := range strings.Lines(string(out)) {
				if v, ok := strings.CutPrefix(line, "etcd Version:"); ok {
					m.EtcdVersion = strings.TrimSpace(v)
				}
			}
		} else {
			t.Logf("etcd --version: %v", err)
		}
	}
	return m
}

// memTotal is the machine's memory in GiB.
func memTotal() string {
	var kb float64
	if _, err := fmt.Sscanf(procField("/proc/meminfo", "MemTotal"), "%f kB", &kb); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", kb/(1<<20))
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// BenchmarkClient runs scenario 4's client-side benchmarks on the committed
// fixture: `go test -run '^$' -bench . -benchmem`.
func BenchmarkClient(b *testing.B) {
	f, err := LoadClientFixture(fixturePath)
	if err != nil {
		b.Fatalf("loading %s (a BENCH=1 run writes it): %v", fixturePath, err)
	}
	for _, cb := range ClientBenchmarks(f) {
		b.Run(cb.Name, cb.Run)
	}
}

// TestRegressionTracker checks the lost-update detector on a made-up history.
func TestRegressionTracker(t *testing.T) {
	tr := newRegressionTracker(2)
	for i, ks := range [][2]int{{1, -1}, {2, 1}, {1, 1}, {1, 2}, {3, -1}} {
		tr.observe(fmt.Sprint(i), []metav1.Condition{writerCondition(0, ks[0], 1, metav1.Time{}), writerCondition(1, ks[1], 1, metav1.Time{})})
	}
	// writer 0 went 2 -> 1; writer 1 went 2 -> missing (k=-1 is written as "k=-1": counterOf reads -1).
	if got := tr.regressions(); got != 2 {
		t.Fatalf("%d regressions, want 2", got)
	}
}

// TestPercentile checks the nearest-rank percentiles the tables print.
func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if p50, p99 := Percentile(ds, 50), Percentile(ds, 99); p50 != 5 || p99 != 10 {
		t.Fatalf("p50 %v p99 %v, want 5 and 10", p50, p99)
	}
	if Percentile(nil, 50) != 0 {
		t.Fatal("no samples should give 0")
	}
}

// TestGoals judges made-up results: goals against the right peers, rows
// without a goal neither met nor missed, goals without data not measured.
func TestGoals(t *testing.T) {
	rec := func(approach string, m int, phase string, perSecond float64, requests map[string]int) ReconcileResult {
		return ReconcileResult{Approach: approach, Managers: m, Phase: phase, Reconciles: 100,
			Wall: time.Duration(100 / perSecond * float64(time.Second)), Requests: requests}
	}
	res := &Results{Config: Config{Reconcile: ReconcileConfig{Managers: []int{1, 3}}, Contention: ContentionConfig{Writers: []int{8}}, Scale: ScaleConfig{Objects: 10}}}
	for _, m := range []int{1, 3} {
		res.Reconcile = append(res.Reconcile,
			rec(Statusapply, m, PhaseChanging, 100, map[string]int{"apply": 100 * m}),
			rec(Statusapply, m, PhaseSteady, 1000, nil),
			rec(RawApply, m, PhaseChanging, 100, map[string]int{"apply": 100 * m}),
			rec(CAPIHelper, m, PhaseChanging, 50, map[string]int{"get": 100, "patch": 100}),
			rec(CAPIHelper, m, PhaseSteady, 900, nil),
			rec(CAPIHelperInMemory, m, PhaseSteady, 2000, nil),
			rec(SteadyFloor, m, PhaseSteady, 1200, nil),
			rec(Statusapply, m, PhaseBackToBack, 3000, nil),
			rec(CAPIHelper, m, PhaseBackToBack, 2000, nil))
	}
	res.Contention = []ContentionResult{
		{Approach: StatusapplyShared, Writers: 8, Updates: 100, Wall: time.Second},
		{Approach: StatusapplySep, Writers: 8, Updates: 50, Wall: time.Second},
		{Approach: RawApplySerialized, Writers: 8, Updates: 110, Wall: time.Second},
		{Approach: RawApply, Writers: 8, Updates: 40, Wall: time.Second},
	}
	res.Scale = []ScaleResult{
		{Approach: RawApply, Objects: 10, Managers: 3, Wall: time.Second, PeakHeap: 10 << 20},
		{Approach: Statusapply, Objects: 10, Managers: 3, Wall: time.Second, PeakHeap: 30 << 20},
	}
	res.Client = []ClientCostResult{{Name: "RawApplyClientSide", NsPerOp: 100e3}, {Name: "StatusapplyMutators", NsPerOp: 140e3}, {Name: "StatusapplyEdits", NsPerOp: 250e3}}
	res.RoundTrip = &RoundTrip{P50: 10 * time.Millisecond}

	want := map[string]string{
		"M=1, changing, reconciles/s: ≥ 0.95x (d) raw apply":                                                                                      "met",
		"M=1, changing, reconciles/s: ≥ 1.2x (c) Cluster API patch helper":                                                                        "met",
		"M=3, changing, reconciles/s: against (c) Cluster API patch helper (no goal at M > 1, see below)":                                         "reported, no goal",
		"M=3, steady, reconciles/s: ≥ 1.0x (c) Cluster API patch helper (reading the same informer cache), both 0 requests":                       "met",
		"M=1, steady, reconciles/s: (e) against (c') Cluster API patch helper, object in memory":                                                  "reported, no goal",
		"M=3, steady, reconciles/s: (e) against (f) steady floor, no library":                                                                     "reported, no goal",
		"M=1, steady, back to back, reconciles/s: (e) against (c) Cluster API patch helper":                                                       "reported, no goal",
		"W=8, updates/s: statusapply, one process (shared Applier) ≥ 0.95x (d') raw apply, serialized per object, with 0 lost, 0 409s, 0 failed":  "**missed**",
		"W=16, updates/s: statusapply, one process (shared Applier) ≥ 0.95x (d') raw apply, serialized per object, with 0 lost, 0 409s, 0 failed": "not measured",
		"10 objects × 3 managers in one Flush: ≥ 0.95x the raw loop in applies/s":                                                                 "met",
		"10 objects × 3 managers in one Flush: peak heap ≤ 2x the raw loop's":                                                                     "**missed**",
		"client side: StatusapplyMutators ≤ 1.5x RawApplyClientSide in µs/op":                                                                     "met",
		"client side: StatusapplyEdits ≤ 2x RawApplyClientSide in µs/op":                                                                          "**missed**",
		"client side: StatusapplyMutators < 5% of one apply's p50 on envtest":                                                                     "met",
	}
	got := map[string]string{}
	for _, g := range res.Goals() {
		got[g.Goal] = g.Verdict()
	}
	for goal, v := range want {
		if got[goal] != v {
			t.Errorf("%q: %q, want %q", goal, got[goal], v)
		}
	}
	if _, ok := got["M=3, changing, reconciles/s: ≥ 1.2x (c) Cluster API patch helper"]; ok {
		t.Error("M=3 has no goal against (c) in the changing phase")
	}
	md := res.Markdown("")
	if !strings.Contains(md, "goals met") {
		t.Error("the document has no goal count")
	}
	if !strings.Contains(md, "| (e) statusapply | steady, back to back |") {
		t.Error("the document has no back-to-back row for (e)")
	}
}

// TestRoundsStayApartUntilTheReport judges results kept per round: the
// verdict is the ratio over all rounds, and the row says how far the rounds
// spread, so that a row whose rounds straddle its goal shows it.
func TestRoundsStayApartUntilTheReport(t *testing.T) {
	rec := func(approach string, phase string, round int, perSecond float64) ReconcileResult {
		return ReconcileResult{Approach: approach, Managers: 1, Phase: phase, Round: round, Reconciles: 100,
			Wall: time.Duration(100 / perSecond * float64(time.Second))}
	}
	res := &Results{Config: Config{Reconcile: ReconcileConfig{Managers: []int{1}}, Contention: ContentionConfig{Writers: []int{8}}}}
	// Steady: 1.1x in round 1, 0.8x in round 2; over both rounds 200 reconciles
	// take 0.1/1.1 + 0.1/0.8 s against 0.2 s: 0.93x, missed.
	res.Reconcile = []ReconcileResult{
		rec(Statusapply, PhaseChanging, 1, 100), rec(Statusapply, PhaseSteady, 1, 1100),
		rec(CAPIHelper, PhaseSteady, 1, 1000),
		rec(Statusapply, PhaseChanging, 2, 100), rec(Statusapply, PhaseSteady, 2, 800),
		rec(CAPIHelper, PhaseSteady, 2, 1000),
	}
	res.Contention = []ContentionResult{
		{Approach: StatusapplyShared, Writers: 8, Updates: 100, Wall: time.Second},
		{Approach: RawApplySerialized, Writers: 8, Updates: 100, Wall: time.Second},
		{Approach: StatusapplyShared, Writers: 8, Updates: 90, Wall: time.Second},
		{Approach: RawApplySerialized, Writers: 8, Updates: 100, Wall: time.Second},
	}
	goals := map[string]Goal{}
	for _, g := range res.Goals() {
		goals[g.Goal] = g
	}
	steady := goals["M=1, steady, reconciles/s: ≥ 1.0x (c) Cluster API patch helper (reading the same informer cache), both 0 requests"]
	if steady.Met || !strings.HasPrefix(steady.Measured, "0.93x (926 vs 1000/s); per round 0.80x to 1.10x;") {
		t.Errorf("steady: met %v, %q; want missed, 0.93x over both rounds, per round 0.80x to 1.10x", steady.Met, steady.Measured)
	}
	w8 := goals["W=8, updates/s: statusapply, one process (shared Applier) ≥ 0.95x (d') raw apply, serialized per object, with 0 lost, 0 409s, 0 failed"]
	// W=8: met over both rounds (95 against 100 updates/s), though one round
	// alone would have missed.
	if !w8.Met || !strings.HasPrefix(w8.Measured, "0.95x (95 vs 100 updates/s); per round 0.90x to 1.00x;") {
		t.Errorf("W=8: met %v, %q; want met, 0.95x over both rounds, per round 0.90x to 1.00x", w8.Met, w8.Measured)
	}
	// The tables add the rounds up: one row per approach and phase.
	merged := mergedReconcile(res.Reconcile)
	if len(merged) != 3 {
		t.Fatalf("%d merged results, want 3 (statusapply changing and steady, the helper steady)", len(merged))
	}
	if st, _ := findReconcile(merged, Statusapply, 1, PhaseSteady); st.Reconciles != 200 || st.Round != 0 {
		t.Errorf("merged steady: %d reconciles, round %d; want 200 and 0", st.Reconciles, st.Round)
	}
}

// TestRoundSpread pairs two approaches' results round by round.
func TestRoundSpread(t *testing.T) {
	rate := func(x float64) float64 { return x }
	for _, tc := range []struct {
		name      string
		own, peer []float64
		want      string
	}{
		{"one round has no spread", []float64{1}, []float64{2}, ""},
		{"rounds paired in order", []float64{9, 10, 12}, []float64{10, 10, 10}, "; per round 0.90x to 1.20x"},
		{"unpaired rounds left out", []float64{5, 10, 20}, []float64{10, 10}, "; per round 0.50x to 1.00x"},
		{"a peer with no rate counts as 0", []float64{1, 1}, []float64{0, 1}, "; per round 0.00x to 1.00x"},
	} {
		if got := roundSpread(tc.own, tc.peer, rate); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
