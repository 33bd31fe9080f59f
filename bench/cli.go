package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/apiserver"
)

// CLIConfig sizes the command-line scenario.
type CLIConfig struct {
	// Objects is the fleet the statusapply binary of this tree works on.
	Objects int `json:"objects"`
	// BaselineObjects is the fleet a baseline binary (an earlier build,
	// BENCH_CLI_BASELINE) works on, smaller when it is slow; 0 runs none.
	BaselineObjects int `json:"baselineObjects,omitempty"`
	// Baseline names the baseline build, such as a commit.
	Baseline string `json:"baseline,omitempty"`
}

// CLI steps, in the order they run on a fleet.
const (
	StepList   = "list (client-go, as kubectl get -o json)"
	StepAudit  = "audit"
	StepDryRun = "migrate (dry run)"
	StepApply  = "migrate --apply"
	StepRerun  = "migrate --apply again (no-op)"
)

// cliSteps are the steps that run the binary, after the list baseline.
var cliSteps = []string{StepAudit, StepDryRun, StepApply, StepRerun}

// cliGoals are the longest each step may take on cliGoalObjects objects.
var cliGoals = map[string]time.Duration{
	StepAudit:  15 * time.Second,
	StepDryRun: 30 * time.Second,
	StepApply:  2 * time.Minute,
	StepRerun:  30 * time.Second,
}

// cliGoalObjects is the fleet size the goals are set for.
const cliGoalObjects = 10000

// thisTree is the Build of the binary built from this tree.
const thisTree = "this tree"

// CLIResult is one step on one fleet.
type CLIResult struct {
	// Build is thisTree or the baseline's name.
	Build   string        `json:"build"`
	Step    string        `json:"step"`
	Objects int           `json:"objects"`
	Wall    time.Duration `json:"wall"`
	// Requests counts the API server's requests for the fleet's resource
	// during the step, by verb, as the API server's own metrics count them
	// (apiserver_request_total), so that the binary needs no instrumenting.
	Requests map[string]int `json:"requests"`
	// Summary is the last line the command printed on stderr.
	Summary string `json:"summary,omitempty"`
}

// cliMigrateFlags is the plan every migrate step carries out on the audit
// fleet: the legacy writer's conditions and phase go to readiness, which
// already applies there.
var cliMigrateFlags = []string{"--from", "legacy-controller=readiness"}

// RunCLI creates a fleet of cfg.Objects Widgets (and one of
// cfg.BaselineObjects when baseline is set) and times each step of a
// migration campaign with the statusapply binary at bin, and the baseline
// binary, beside a client-go list of the same objects.
func RunCLI(ctx context.Context, env *apiserver.Env, bin, baseline string, cfg CLIConfig, logf func(string, ...any)) ([]CLIResult, error) {
	dir, err := os.MkdirTemp("", "statusapply-bench-cli-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig, err := writeKubeconfig(env, dir)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		return nil, err
	}
	metrics := dc.RESTClient()
	type fleetRun struct {
		build, bin string
		objects    int
	}
	runs := []fleetRun{{thisTree, bin, cfg.Objects}}
	if baseline != "" && cfg.BaselineObjects > 0 {
		runs = append(runs, fleetRun{cfg.Baseline, baseline, cfg.BaselineObjects})
	}
	var out []CLIResult
	for _, fr := range runs {
		ns, err := env.CreateNamespace(ctx, "cli")
		if err != nil {
			return nil, err
		}
		created := time.Now()
		if err := CreateAuditFleet(ctx, env.Client, ns, fr.objects, 8); err != nil {
			return nil, err
		}
		logf("cli: created %d objects for %s in %v", fr.objects, fr.build, time.Since(created).Round(time.Millisecond))
		r, err := timeList(ctx, env, metrics, ns, fr.objects)
		if err != nil {
			return nil, err
		}
		r.Build = fr.build
		logf("cli %s: %s of %d objects: %v %v", fr.build, r.Step, r.Objects, r.Wall.Round(time.Millisecond), r.Requests)
		out = append(out, r)
		apply, err := applyFlags(ctx, fr.bin)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fr.build, err)
		}
		for _, step := range cliSteps {
			args := []string{"audit", "widgets", "-n", ns}
			switch step {
			case StepDryRun:
				args = append([]string{"migrate", "widgets", "-n", ns}, cliMigrateFlags...)
			case StepApply, StepRerun:
				args = append(append([]string{"migrate", "widgets", "-n", ns}, cliMigrateFlags...), apply...)
			}
			args = append(args, "--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache"))
			r, err := timeCommand(ctx, metrics, fr.bin, args)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", fr.build, step, err)
			}
			r.Build, r.Step, r.Objects = fr.build, step, fr.objects
			logf("cli %s: %s of %d objects: %v %v; %s", fr.build, step, fr.objects, r.Wall.Round(time.Millisecond), r.Requests, r.Summary)
			out = append(out, r)
		}
	}
	return out, nil
}

// allowActiveRE finds --allow-active among the flags migrate --help lists.
var allowActiveRE = regexp.MustCompile(`(?m)^\s+--allow-active\b`)

// applyFlags are the flags of the --apply steps for the binary at bin. The
// fleet's legacy writer wrote every object moments before, so a build that
// refuses an active legacy writer gets --allow-active; a build from before
// that refusal has no such flag and needs none.
func applyFlags(ctx context.Context, bin string) ([]string, error) {
	help, err := exec.CommandContext(ctx, bin, "migrate", "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s migrate --help: %w\n%s", filepath.Base(bin), err, help)
	}
	if allowActiveRE.Match(help) {
		return []string{"--apply", "--allow-active"}, nil
	}
	return []string{"--apply"}, nil
}

// writeKubeconfig writes a kubeconfig file for a cluster administrator of
// env into dir.
func writeKubeconfig(env *apiserver.Env, dir string) (string, error) {
	user, err := env.Environment().ControlPlane.AddUser(envtest.User{Name: "bench-cli", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// timeList lists the fleet in pages of 500, as kubectl get -o json does,
// decoding every object.
func timeList(ctx context.Context, env *apiserver.Env, metrics rest.Interface, ns string, want int) (CLIResult, error) {
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		return CLIResult{}, err
	}
	wall, requests, err := counted(ctx, metrics, func() error {
		n, cont := 0, ""
		for {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("WidgetList"))
			if err := c.List(ctx, list, client.InNamespace(ns), client.Limit(500), client.Continue(cont)); err != nil {
				return err
			}
			n += len(list.Items)
			if cont = list.GetContinue(); cont == "" {
				break
			}
		}
		if n != want {
			return fmt.Errorf("listed %d objects, want %d", n, want)
		}
		return nil
	})
	return CLIResult{Step: StepList, Objects: want, Wall: wall, Requests: requests}, err
}

// timeCommand runs the binary with args and times it; a non-zero exit is
// an error.
func timeCommand(ctx context.Context, metrics rest.Interface, bin string, args []string) (CLIResult, error) {
	var stderr bytes.Buffer
	wall, requests, err := counted(ctx, metrics, func() error {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
		}
		return nil
	})
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	return CLIResult{Wall: wall, Requests: requests, Summary: lines[len(lines)-1]}, err
}

// counted times step and returns the requests for widgets the API server
// counted meanwhile, by verb, leaving out verbs that did not move.
func counted(ctx context.Context, metrics rest.Interface, step func() error) (time.Duration, map[string]int, error) {
	before, err := widgetRequests(ctx, metrics)
	if err != nil {
		return 0, nil, err
	}
	began := time.Now()
	if err := step(); err != nil {
		return 0, nil, err
	}
	wall := time.Since(began)
	after, err := widgetRequests(ctx, metrics)
	if err != nil {
		return 0, nil, err
	}
	requests := map[string]int{}
	for v, n := range after {
		if d := n - before[v]; d > 0 {
			requests[v] = d
		}
	}
	return wall, requests, nil
}

// widgetRequests reads the API server's count of requests for widgets, by
// lower-case verb, from its metrics.
func widgetRequests(ctx context.Context, rc rest.Interface) (map[string]int, error) {
	raw, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return widgetCounts(raw)
}

// widgetCounts sums apiserver_request_total in metrics, the Prometheus text
// format, over the series for widgets, by lower-case verb.
func widgetCounts(metrics []byte) (map[string]int, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(metrics))
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	counts := map[string]int{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		var resource, verb string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "resource":
				resource = l.GetValue()
			case "verb":
				verb = l.GetValue()
			}
		}
		if resource == "widgets" {
			counts[strings.ToLower(verb)] += int(m.GetCounter().GetValue())
		}
	}
	return counts, nil
}

// cliGoals are the scenario's goals: each step of this tree's build on
// cliGoalObjects objects within its time; the baseline and the list are
// reported in the section only.
func (r *Results) cliGoals() []Goal {
	var list time.Duration
	for _, c := range r.CLI {
		if c.Build == thisTree && c.Step == StepList {
			list = c.Wall
		}
	}
	var goals []Goal
	for _, c := range r.CLI {
		limit, ok := cliGoals[c.Step]
		if !ok || c.Build != thisTree {
			continue
		}
		g := Goal{Scenario: "5", Goal: fmt.Sprintf("%d objects, `%s` ≤ %s", cliGoalObjects, c.Step, limit),
			Measured: fmt.Sprintf("%s (%.0f objects/s); the list of the same objects %s", secs(c.Wall),
				float64(c.Objects)/c.Wall.Seconds(), secs(list))}
		if c.Objects < cliGoalObjects {
			g.Unmeasured = true
		} else {
			g.Met = c.Wall <= limit
		}
		goals = append(goals, g)
	}
	return goals
}

// secs prints a duration in seconds with one decimal.
func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// cliSection renders the scenario's table.
func (r *Results) cliSection(p func(string, ...any)) {
	if len(r.CLI) == 0 {
		return
	}
	c := r.Config.CLI
	p("## 5. The command line on a fleet\n\n")
	p("The `statusapply` binary built from this tree, run as a user would (a separate process, a kubeconfig file, its\n")
	p("default flags), over %d Widgets in one namespace: each created by a client, with three conditions and the phase\n", c.Objects)
	p("merge-patched by a legacy writer and two apply managers with a condition each. The steps are a campaign's:\n")
	p("`audit widgets`, `migrate widgets --from legacy-controller=readiness` (a dry run), the same with `--apply`, and\n")
	p("`--apply` again, which finds nothing left to change. Beside them, the same objects listed through client-go in pages\n")
	p("of 500, as `kubectl get widgets -o json` lists them: the least any command that reads every object costs.\n")
	p("Requests are the API server's own count for the resource (`apiserver_request_total`), by verb; a list is a\n")
	p("GET of the collection.\n\n")
	if c.Baseline != "" && c.BaselineObjects > 0 {
		var took time.Duration
		for _, res := range r.CLI {
			if res.Build == c.Baseline && res.Step != StepList {
				took += res.Wall
			}
		}
		p("The baseline, %s, ran the same steps in the same run on a fleet of its own of %d objects (at its pace the\n", c.Baseline, c.BaselineObjects)
		p("steps on %d objects would take it about %.0f minutes); objects/s is the figure to compare.\n\n",
			c.Objects, took.Minutes()*float64(c.Objects)/float64(c.BaselineObjects))
	}
	p("| build | step | objects | wall time | objects/s | requests |\n|---|---|---:|---:|---:|---|\n")
	for _, res := range r.CLI {
		p("| %s | %s | %d | %s | %.0f | %s |\n", res.Build, res.Step, res.Objects, secs(res.Wall),
			float64(res.Objects)/res.Wall.Seconds(), requestsCell(res.Requests))
	}
	p("\n")
}

// requestsCell prints requests by verb, "1 list, 20 get, 10000 patch" style.
func requestsCell(counts map[string]int) string {
	var parts []string
	for _, v := range []string{"list", "get", "patch", "apply", "update", "create"} {
		if n := counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
