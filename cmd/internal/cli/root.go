package cli

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// pluginName is how kubectl shows the plugin: kubectl runs a binary named
// kubectl-statusapply found on PATH when told `kubectl statusapply`.
const pluginName = "kubectl statusapply"

// rootLong explains the tool and how to install it as a kubectl plugin; the
// root help is the only place a user of the bare binary learns the latter.
const rootLong = `statusapply shows and manages who writes which part of an object's status,
for controllers whose objects have several status writers, each applying its
own fields with server-side apply.

  owners      who owns which condition type and status field, legacy writers marked
  audit       who writes what across every object of a kind, and the migrate flags still needed
  lint        CRD schemas that make status writers conflict (CI-friendly exit code)
  migrate     hand status ownership from legacy writers to apply managers
  vet         go vet analyzers: status writes to move to statusapply, status functions with side effects
  demo        a walk-through on an embedded API server, or on a cluster
  version     the module version and commit this binary was built from
  completion  shell completion for bash, zsh and fish

Cluster commands take the usual kubeconfig flags (--kubeconfig, --context,
-n/--namespace, ...) and resource arguments as kubectl does: widgets,
widget/w1, widgets.demo.statusapply.io, -l app=web, -A.

Output: -o json|yaml|name|wide|jsonpath=...|go-template=... as in kubectl get;
-o wide for more detail. Summary lines, notes and warnings go to stderr, so that
stdout holds only the output asked for. -v=N is kubectl's log verbosity (6 logs
every request).
Exit codes, the same for every command: 0 clean, 1 findings (lint; audit under
--exit-code) or changes under --exit-code (migrate), and a gate that examined
nothing (no CRD, no object, no package) unless --allow-empty, 2 usage and tool
errors.

kubectl plugin: put a binary named kubectl-statusapply on PATH, for example
  go install github.com/statusapply/statusapply/cmd/kubectl-statusapply@latest
and run it as "kubectl statusapply owners widgets". Shell completion for the
plugin comes from the kubectl_complete-statusapply script installed next to it.`

// NewRootCommand returns the command tree of the statusapply binary.
func NewRootCommand() *cobra.Command {
	cluster := newClusterAccess()
	root := &cobra.Command{
		Use:           "statusapply",
		Short:         "Several status writers, one object: server-side apply per field manager",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		// The completion command below replaces cobra's default one, so that
		// it is documented and listed like every other command.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if msg := err.Error(); strings.Contains(msg, "'v' in -v") || strings.Contains(msg, `for "-v, --v" flag`) {
			err = fmt.Errorf("%w (-v=N is the log verbosity, as in kubectl; -o wide prints more detail)", err)
		}
		return withExitCode(exitUsage, err)
	})
	// client-go's log lines stay hidden (see Execute) unless -v asks for them.
	root.PersistentPreRun = func(*cobra.Command, []string) {
		if klog.V(1).Enabled() {
			klog.ClearLogger()
		}
	}
	cluster.addFlags(root.PersistentFlags())
	registerConnectionCompletions(root, cluster)
	addVerbosityFlag(root.PersistentFlags())
	root.AddCommand(
		newOwnersCommand(cluster),
		newAuditCommand(cluster, time.Now),
		newLintCommand(cluster),
		newMigrateCommand(cluster),
		newVetCommand(),
		newDemoCommand(cluster),
		newVersionCommand(),
		newCompletionCommand(),
	)
	return root
}

// NewPluginCommand returns the same command tree as NewRootCommand, with help
// and usage spelled "kubectl statusapply", for the kubectl-statusapply binary.
// Its name is the binary's, so that the scripts of its completion command
// call kubectl-statusapply.
func NewPluginCommand() *cobra.Command {
	root := NewRootCommand()
	root.Use = "kubectl-statusapply"
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: pluginName}
	var spell func(*cobra.Command)
	spell = func(c *cobra.Command) {
		c.Example = commandLine.ReplaceAllString(c.Example, "${1}"+pluginName+" ")
		for _, sub := range c.Commands() {
			spell(sub)
		}
	}
	spell(root)
	return root
}

// displayName is what the command tree calls itself in what it prints for
// people to run or read: "statusapply", or "kubectl statusapply" under
// NewPluginCommand, which sets the root's display name.
func displayName(cmd *cobra.Command) string { return cmd.Root().DisplayName() }

// commandLine matches "statusapply " where an example's command line starts.
var commandLine = regexp.MustCompile(`(?m)^(\s*)statusapply `)

// addVerbosityFlag registers kubectl's -v/--v: klog's verbosity, which
// client-go's log lines (6 shows every request, 8 their bodies) follow.
func addVerbosityFlag(fs *pflag.FlagSet) {
	klogFlags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(klogFlags)
	v := pflag.PFlagFromGoFlag(klogFlags.Lookup("v"))
	v.Shorthand = "v"
	v.Usage = "log verbosity, as in kubectl: 0 prints no client-go log lines, 6 every request, 8 their bodies"
	fs.AddFlag(v)
}

// Exit codes, the same for every command.
const (
	exitOK       = 0
	exitFindings = 1 // lint error findings, audit findings under --exit-code, or changes a dry run would make under --exit-code
	exitUsage    = 2 // bad flags or arguments, plans that match nothing, and every other failure
)

// exitError carries an exit code; a nil err exits without a message.
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
// the code an error carries (1 for findings and changes), else 2: an error
// that is not a finding is a usage or tool error.
func ExitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if ee, ok := errors.AsType[*exitError](err); ok {
		return ee.code
	}
	return exitUsage
}

// unreachableHint follows an error that says the API server could not be
// reached, as kubectl's "did you specify the right host or port?" does.
const unreachableHint = "is the API server reachable? check --kubeconfig, --context or --server"

// unreachable reports whether err says the API server could not be reached:
// a connection that failed or broke (connectionLost), or a name that did
// not resolve. Discovery errors carry the cause as text only, so the text
// is checked too.
func unreachable(err error) bool {
	if connectionLost(err) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "no such host", "i/o timeout", "network is unreachable",
		"no route to host", "connection reset by peer", "TLS handshake timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Execute runs root with the process arguments until it finishes or is
// interrupted (SIGINT) or terminated (SIGTERM), prints a failure to stderr as
// one "error: ..." line and returns the exit code, so that every main is a
// one-liner. A signal cancels the command's context: the command stops and
// cleans up (the demo stops its API server) before Execute returns.
func Execute(root *cobra.Command) int {
	// client-go logs through klog, and its discovery cache repeats the same
	// failure several times; the command's error says it once. -v=1 and
	// above bring the log lines back (the root's PersistentPreRun).
	klog.SetSlogLogger(slog.New(slog.DiscardHandler))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	if err != nil && ctx.Err() != nil && !strings.Contains(err.Error(), "interrupted") {
		// A signal stopped the command wherever it was; say so, whatever
		// failed because of it.
		err = fmt.Errorf("interrupted by %w: %w", context.Cause(ctx), err)
	}
	if err != nil && ctx.Err() == nil && unreachable(err) {
		err = fmt.Errorf("%w (%s)", err, unreachableHint)
	}
	if ee, ok := errors.AsType[*exitError](err); !ok || ee.err != nil {
		if err != nil {
			fmt.Fprintln(root.ErrOrStderr(), "error:", err)
		}
	}
	return ExitCode(err)
}
