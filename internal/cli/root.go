package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// pluginName is how kubectl shows the plugin: kubectl runs a binary named
// kubectl-statusapply found on PATH when told `kubectl statusapply`.
const pluginName = "kubectl statusapply"

// rootLong explains the tool and how to install it as a kubectl plugin; the
// root help is the only place a user of the bare binary learns the latter.
const rootLong = `statusapply shows and manages who writes which part of an object's status,
for controllers whose objects have several status writers, each applying its
own fields with server-side apply.

  owners   who owns which condition type and status field, legacy writers marked
  lint     CRD schemas that make status writers conflict (CI-friendly exit code)
  migrate  hand status ownership from legacy writers to apply managers
  demo     a walk-through on an embedded API server

Cluster commands take the usual kubeconfig flags (--kubeconfig, --context,
-n/--namespace, ...) and resource arguments as kubectl does: widgets,
widget/w1, widgets.demo.statusapply.io.

kubectl plugin: put a binary named kubectl-statusapply on PATH, for example
  go install github.com/statusapply/statusapply/cmd/kubectl-statusapply@latest
and run it as "kubectl statusapply owners widgets".`

// NewRootCommand returns the command tree of the statusapply binary.
func NewRootCommand() *cobra.Command {
	cluster := newClusterAccess()
	root := &cobra.Command{
		Use:           "statusapply",
		Short:         "Several status writers, one object: server-side apply per field manager",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(exitUsage, err) })
	cluster.addFlags(root.PersistentFlags())
	root.AddCommand(
		newDemoCommand(),
		newOwnersCommand(cluster),
		newLintCommand(cluster),
		newMigrateCommand(cluster),
	)
	return root
}

// NewPluginCommand returns the same command tree as NewRootCommand, with help
// and usage spelled "kubectl statusapply", for the kubectl-statusapply binary.
func NewPluginCommand() *cobra.Command {
	root := NewRootCommand()
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: pluginName}
	return root
}

// Exit codes, the same for every command.
const (
	exitOK       = 0
	exitFindings = 1 // lint findings, failed objects, or changes under --exit-code
	exitUsage    = 2 // bad flags or arguments, or a plan that matches nothing
)

// exitError carries an exit code other than 1; a nil err exits silently.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withExitCode makes err end the process with code.
func withExitCode(code int, err error) error { return &exitError{code: code, err: err} }

// ExitCode is the process exit code for what a command returned: 0 for nil,
// the code an error carries, else 1.
func ExitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if ee, ok := errors.AsType[*exitError](err); ok {
		return ee.code
	}
	return exitFindings
}

// Execute runs root with the process arguments until it finishes or the user
// interrupts it, prints a failure to stderr and returns the exit code, so
// that every main is a one-liner.
func Execute(root *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := root.ExecuteContext(ctx)
	if ee, ok := errors.AsType[*exitError](err); !ok || ee.err != nil {
		if err != nil {
			fmt.Fprintln(root.ErrOrStderr(), "error:", err)
		}
	}
	return ExitCode(err)
}
