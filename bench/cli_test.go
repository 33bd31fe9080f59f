package bench

import (
	"maps"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCLIBenchmark runs scenario 5 (the command line on a fleet) alone, at
// the full run's sizes (BENCH_CLI_OBJECTS replaces them), writes
// results/cli-latest.json and puts the scenario into docs/benchmarks.md in
// place of the one there (Splice). It runs only when BENCH_CLI=1 (make
// bench-cli).
func TestCLIBenchmark(t *testing.T) {
	if os.Getenv("BENCH_CLI") != "1" {
		t.Skip("set BENCH_CLI=1 (make bench-cli) to measure the command line on a fleet")
	}
	began := time.Now()
	ctx, env := startEnv(t, 55*time.Minute)
	res := &Results{Config: Config{CLI: cliConfig(10000, 1000)}, Machine: machine(t, env, false)}
	var err error
	if res.CLI, err = RunCLI(ctx, env, buildCLI(t), os.Getenv("BENCH_CLI_BASELINE"), res.Config.CLI, t.Logf); err != nil {
		t.Fatal(err)
	}
	res.Machine.Duration = time.Since(began).Round(time.Second).String()
	if err := saveJSON(res, "cli-latest.json"); err != nil {
		t.Fatal(err)
	}
	if err := render(res, false, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("goals:\n\n%s", res.GoalsTable())
}

// TestSpliceCLI puts scenario 5 into a document that has none, and again
// into the result, which must not change.
func TestSpliceCLI(t *testing.T) {
	full := &Results{Machine: Machine{Command: "make bench"}, Config: Config{CLI: CLIConfig{Objects: 10000}}}
	doc := full.Markdown("")
	res := &Results{
		Machine: Machine{Command: "make bench-cli", Date: "2026-11-28 09:00 UTC", Commit: "abc1234"},
		Config:  Config{CLI: CLIConfig{Objects: 10000, BaselineObjects: 1000, Baseline: "main at abc0000"}},
		CLI: []CLIResult{
			{Build: thisTree, Step: StepList, Objects: 10000, Wall: 2 * time.Second},
			{Build: thisTree, Step: StepAudit, Objects: 10000, Wall: 5 * time.Second},
			{Build: thisTree, Step: StepDryRun, Objects: 10000, Wall: 40 * time.Second},
			{Build: "main at abc0000", Step: StepList, Objects: 1000, Wall: time.Second},
			{Build: "main at abc0000", Step: StepAudit, Objects: 1000, Wall: 30 * time.Second},
			{Build: "main at abc0000", Step: StepDryRun, Objects: 1000, Wall: 60 * time.Second},
		},
	}
	once, err := Splice(doc, res, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 5 | 10000 objects, `audit` ≤ 15s | 5.0 s (2000 objects/s); the list of the same objects 2.0 s | met |\n",
		"| 5 | 10000 objects, `migrate (dry run)` ≤ 30s | 40.0 s (250 objects/s); the list of the same objects 2.0 s | **missed** |\n",
		"\n1 goals met, 1 missed; 0 rows reported without a goal.\n",
		"## 5. The command line on a fleet\n\nMeasured on its own (`make bench-cli`) on 2026-11-28 09:00 UTC, at commit `abc1234`",
		"| this tree | audit | 10000 | 5.0 s | 2000 | - |\n",
		"| main at abc0000 | audit | 1000 | 30.0 s | 33 | - |\n",
		"at its pace the\nsteps on 10000 objects would take it about 15 minutes); objects/s",
	} {
		if !strings.Contains(once, want) {
			t.Errorf("the spliced document misses %q:\n%s", want, once)
		}
	}
	if strings.Index(once, "## 5. ") > strings.Index(once, "## How it was measured") {
		t.Error("scenario 5 comes after the method section")
	}
	twice, err := Splice(once, res, "")
	if err != nil || twice != once {
		t.Errorf("splicing again changed the document (%v)", err)
	}
}

// TestWidgetCounts sums the API server's request counter over the series
// for widgets, by verb, and leaves other resources and metrics out.
func TestWidgetCounts(t *testing.T) {
	metrics := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",group="demo.statusapply.io",resource="widgets",scope="namespace",subresource="",verb="LIST",version="v1alpha1"} 20
apiserver_request_total{code="200",component="apiserver",group="demo.statusapply.io",resource="widgets",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 9998
apiserver_request_total{code="409",component="apiserver",group="demo.statusapply.io",resource="widgets",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 2
apiserver_request_total{code="200",component="apiserver",group="",resource="namespaces",scope="resource",subresource="",verb="GET",version="v1"} 7
# HELP apiserver_request_duration_seconds Response latency.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{resource="widgets",verb="LIST",le="+Inf"} 20
apiserver_request_duration_seconds_sum{resource="widgets",verb="LIST"} 1.5
apiserver_request_duration_seconds_count{resource="widgets",verb="LIST"} 20
`
	got, err := widgetCounts([]byte(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"list": 20, "patch": 10000}; !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	if _, err := widgetCounts([]byte("apiserver_request_total{resource=\"widgets\" 1\n")); err == nil {
		t.Error("a malformed line was read without an error")
	}
}

// TestSplice puts one scenario into a document of several: the result is the
// document of both runs' results, with the spliced section saying when it
// was measured.
func TestSplice(t *testing.T) {
	scale := func(heap uint64) []ScaleResult {
		return []ScaleResult{
			{Approach: RawApply, Objects: 10, Managers: 3, Wall: time.Second, PeakHeap: 10 << 20},
			{Approach: Statusapply, Objects: 10, Managers: 3, Wall: time.Second, PeakHeap: heap},
		}
	}
	cli := []CLIResult{{Build: thisTree, Step: StepAudit, Objects: 10000, Wall: 5 * time.Second}}
	cfg := Config{Scale: ScaleConfig{Objects: 10}, CLI: CLIConfig{Objects: 10000}}
	full := &Results{Machine: Machine{Command: "make bench"}, Config: cfg, Scale: scale(30 << 20), CLI: cli}
	focused := &Results{Machine: Machine{Command: "make bench", Date: "2026-11-28 10:00 UTC", Commit: "abc1234"},
		Config: cfg, Scale: scale(15 << 20)}
	got, err := Splice(full.Markdown(""), focused, "")
	if err != nil {
		t.Fatal(err)
	}
	want := (&Results{Machine: full.Machine, Config: cfg, Scale: focused.Scale, CLI: cli}).Markdown("")
	at := strings.Index(want, "## 3. ")
	at += strings.Index(want[at:], "\n\n")
	want = want[:at] + "\n\nMeasured on its own (`make bench`) on 2026-11-28 10:00 UTC, at commit `abc1234`, on the machine above.\n\n" + want[at+2:]
	if got != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", got, want)
	}
	if got == full.Markdown("") {
		t.Error("the focused run changed nothing in the document")
	}
}
