// Package demo is the walk-through `make demo` runs: on a real API server, it
// shows side by side what statusapply changes for objects with several status
// writers, and fails when a step does not show what it claims.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/apiserver"
)

// Env is what the steps need: a way to make clients that count their requests.
type Env interface {
	CountingClient() (client.Client, *apiserver.Requests, error)
}

// Step is one claim the demo shows.
type Step struct {
	Title string
	// Read names the files that show how the step is done, relative to the
	// repository root.
	Read string
	Run  func(ctx context.Context, s *Walkthrough) (summary string, err error)
}

// Walkthrough is one run of the demo in one namespace.
type Walkthrough struct {
	Env       Env
	Namespace string
	Out       io.Writer
}

// Steps are the demo's steps, in order.
func Steps() []Step {
	return []Step{
		{"Three writers, one object, through statusapply",
			"cmd/internal/demo/writers.go (stepStatusapplyWriters); as controllers: examples/widgets/", stepStatusapplyWriters},
		{"The same three writers with whole-array merge patches",
			"cmd/internal/demo/writers.go (stepMergePatchWriters)", stepMergePatchWriters},
		{"Who owns which condition",
			"cmd/internal/demo/writers.go (stepOwnership); on a cluster: statusapply owners", stepOwnership},
		{"A legacy merge-patch writer's conditions migrated to apply managers",
			"cmd/internal/demo/migration.go; on a cluster: statusapply migrate, docs/migration.md", stepMigration},
		{"A field-manager conflict resolved by each policy",
			"cmd/internal/demo/policies.go; docs/conflicts.md", stepPolicies},
		{"The plan-creation race: blind apply versus guarded apply",
			"cmd/internal/demo/plan.go; in a controller: examples/widgets/planner.go", stepPlanRace},
	}
}

// Run starts an embedded API server (envtest: etcd and kube-apiserver), runs
// every step and prints a summary. It returns an error if the server cannot
// start or any step fails to show what it claims. When ctx ends (the user
// interrupts or terminates the demo) it stops after the current step; in
// every case it stops the API server and etcd and removes their data and
// certificate directories before it returns.
func Run(ctx context.Context, out io.Writer) (err error) {
	start := time.Now()
	fmt.Fprintln(out, "statusapply demo: starting an embedded kube-apiserver and etcd ...")
	env, err := apiserver.Start(apiserver.Options{})
	if err != nil {
		return err
	}
	defer func() {
		if ctx.Err() != nil {
			fmt.Fprintln(out, "stopping the embedded kube-apiserver and etcd, removing their data ...")
		}
		if stopErr := env.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the embedded API server: %w", stopErr))
		}
	}()
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while the API server started: %w", context.Cause(ctx))
	}
	fmt.Fprintf(out, "API server ready in %s\n\n", time.Since(start).Round(100*time.Millisecond))

	ns, err := env.CreateNamespace(ctx, "statusapply-demo")
	if err != nil {
		return err
	}
	return RunSteps(ctx, &Walkthrough{Env: env, Namespace: ns, Out: out}, Steps())
}

// RunAgainst runs the same steps on an existing cluster: it installs the
// example CRDs if they are missing (and removes the ones it installed), and
// works in a namespace it creates and deletes.
func RunAgainst(ctx context.Context, out io.Writer, cfg *rest.Config) (err error) {
	scheme, err := apiserver.NewScheme()
	if err != nil {
		return err
	}
	env := &apiserver.Env{Config: cfg, Scheme: scheme}
	if env.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	fmt.Fprintf(out, "statusapply demo against %s\n", cfg.Host)
	installed, err := installCRDs(ctx, env.Client)
	defer func() { err = errors.Join(err, removeCRDs(context.WithoutCancel(ctx), env.Client, installed)) }()
	if err != nil {
		return err
	}
	ns, err := env.CreateNamespace(ctx, "statusapply-demo")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "working in namespace %s\n\n", ns)
	defer func() { err = errors.Join(err, env.DeleteNamespace(context.WithoutCancel(ctx), ns)) }()
	return RunSteps(ctx, &Walkthrough{Env: env, Namespace: ns, Out: out}, Steps())
}

// RunSteps runs steps in order in one walkthrough, printing a line per step and a
// summary, and joins the errors of the steps that failed. When ctx ends it
// stops: the step that was running is reported as interrupted, the rest as
// not run, and the error says so once.
func RunSteps(ctx context.Context, s *Walkthrough, steps []Step) error {
	var errs []error
	var summary []string
	interrupted := -1
	for i, step := range steps {
		if interrupted >= 0 || ctx.Err() != nil {
			if interrupted < 0 {
				interrupted = i
			}
			summary = append(summary, fmt.Sprintf("  ---- %d. %s: not run", i+1, step.Title))
			continue
		}
		fmt.Fprintf(s.Out, "[%d/%d] %s\n", i+1, len(steps), step.Title)
		if step.Read != "" {
			fmt.Fprintf(s.Out, "      read: %s\n", step.Read)
		}
		line, err := step.Run(ctx, s)
		mark := "ok  "
		switch {
		case err != nil && ctx.Err() != nil:
			interrupted, mark, line = i, "----", "interrupted"
		case err != nil:
			mark = "FAIL"
			errs = append(errs, fmt.Errorf("step %d (%s): %w", i+1, step.Title, err))
			line = err.Error()
		}
		fmt.Fprintf(s.Out, "      %s %s\n\n", mark, indent(line, "           "))
		summary = append(summary, fmt.Sprintf("  %s %d. %s: %s", mark, i+1, step.Title, indent(line, "       ")))
	}
	fmt.Fprintln(s.Out, "Summary")
	fmt.Fprintln(s.Out, strings.Join(summary, "\n"))
	if interrupted >= 0 {
		errs = append(errs, fmt.Errorf("interrupted at step %d of %d: %w", interrupted+1, len(steps), context.Cause(ctx)))
	}
	return errors.Join(errs...)
}

// indent prefixes every line of text but the first with prefix, so that a
// multi-line message keeps its own indentation under the column it starts in.
func indent(text, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n"+prefix)
}

func conditionTypes(w *v1alpha1.Widget) []string {
	out := make([]string, 0, len(w.Status.Conditions))
	for _, c := range w.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status))
	}
	return out
}
