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
	"github.com/statusapply/statusapply/test/testenv"
)

// Env is what the steps need: a way to make clients that count their requests.
type Env interface {
	CountingClient() (client.Client, *testenv.Requests, error)
}

// Step is one claim the demo shows.
type Step struct {
	Title string
	Run   func(ctx context.Context, s *Walkthrough) (summary string, err error)
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
		{"Three writers, one object, through statusapply", stepStatusapplyWriters},
		{"The same three writers with whole-array merge patches", stepMergePatchWriters},
		{"Who owns which condition", stepOwnership},
		{"A legacy merge-patch writer's conditions migrated to apply managers", stepMigration},
		{"A field-manager conflict resolved by each policy", stepPolicies},
		{"The plan-creation race: blind apply versus guarded apply", stepPlanRace},
	}
}

// Run starts an embedded API server (envtest: etcd and kube-apiserver), runs
// every step and prints a summary. It returns an error if the server cannot
// start or any step fails to show what it claims.
func Run(ctx context.Context, out io.Writer) error {
	start := time.Now()
	fmt.Fprintln(out, "statusapply demo: starting an embedded kube-apiserver and etcd ...")
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
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
	scheme, err := testenv.NewScheme()
	if err != nil {
		return err
	}
	env := &testenv.Env{Config: cfg, Scheme: scheme}
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
// summary, and joins the errors of the steps that failed.
func RunSteps(ctx context.Context, s *Walkthrough, steps []Step) error {
	var errs []error
	var summary []string
	for i, step := range steps {
		fmt.Fprintf(s.Out, "[%d/%d] %s\n", i+1, len(steps), step.Title)
		line, err := step.Run(ctx, s)
		mark := "ok  "
		if err != nil {
			mark = "FAIL"
			errs = append(errs, fmt.Errorf("step %d (%s): %w", i+1, step.Title, err))
			line = err.Error()
		}
		fmt.Fprintf(s.Out, "      %s %s\n\n", mark, line)
		summary = append(summary, fmt.Sprintf("  %s %d. %s: %s", mark, i+1, step.Title, line))
	}
	fmt.Fprintln(s.Out, "Summary")
	fmt.Fprintln(s.Out, strings.Join(summary, "\n"))
	return errors.Join(errs...)
}

func conditionTypes(w *v1alpha1.Widget) []string {
	out := make([]string, 0, len(w.Status.Conditions))
	for _, c := range w.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status))
	}
	return out
}
