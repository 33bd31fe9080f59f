package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/statusapply/statusapply/ownership"
)

const migrateLong = `Move status ownership from legacy writers (Update on the status subresource,
such as JSON merge patches, and the API server's before-first-apply) to
server-side-apply field managers, so that each apply manager can change and
remove its own conditions without conflicts and without forcing.

  --from LEGACY=MANAGER      MANAGER takes over every status field LEGACY still
                             holds (after the --condition moves)
  --condition TYPE=MANAGER   MANAGER takes over condition TYPE from every legacy
                             writer: splits one legacy writer among several
  --release-shared           legacy writers give up the status fields another
                             manager also owns after the moves; a field only a
                             legacy writer holds keeps it as its owner

Only managedFields are rewritten, guarded by the object's resourceVersion;
objects that change meanwhile are read again and retried. An object without
managedFields is seeded first. The default is a dry run that writes nothing;
--apply writes. Running it again is a no-op. Every object is attempted, up
to --concurrency at a time: failures are reported per object.

Output: for named objects, the ownership before and after each one, then a
summary line; for lists, the summary line and the failures (add -v for every
object's ownership, or -o wide for one line per object). -o json and -o yaml
print a MigrationList (cli.statusapply.io/v1alpha1); -o name prints the
objects that changed (or would, in a dry run). Progress lines go to stderr
when it is a terminal and objects are listed, or with --progress.

The plan is checked against the selected objects before anything is written:
a --from manager that is a legacy writer on none of them, a --condition type
none of them has, or a destination that is a legacy writer's name is refused
as a usage error.

Exit codes: 0 done (or a dry run); 1 with --exit-code, a dry run that would
change something; 2 usage errors, plans that match nothing, objects that
failed to migrate, and every other error.`

const migrateExample = `  # see what would change
  statusapply migrate widgets -n shop --from legacy-controller=readiness
  # split a legacy writer by condition type, clean up the rest, and write
  statusapply migrate widget/w1 --condition Ready=readiness --condition Reachable=networking \
      --release-shared --apply
  # a fleet, eight objects at a time, one line per object
  statusapply migrate widgets -A --from legacy-controller=readiness --apply --concurrency 8 -o wide
  # in CI: fail while something is left to migrate
  statusapply migrate widgets -A --from legacy-controller=readiness --exit-code -o name`

// newMigrateCommand returns the migrate command.
func newMigrateCommand(cluster *clusterAccess) *cobra.Command {
	var (
		sel         objectFlags
		pf          planFlags
		apply       bool
		exitCode    bool
		attempts    int
		concurrency int
		verbose     bool
		progress    bool
	)
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:               "migrate TYPE[/NAME] [NAME...]",
		Short:             "Hand status ownership from legacy writers to server-side-apply managers (dry run unless --apply)",
		Long:              migrateLong,
		Example:           migrateExample,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeObjects(cluster),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := pf.plan()
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if err := out.check(); err != nil {
				return err
			}
			if concurrency < 1 {
				return withExitCode(exitUsage, fmt.Errorf("--concurrency %d: must be 1 or more", concurrency))
			}
			s, err := sel.selectObjects(cluster, args)
			if err != nil {
				return err
			}
			if s.ListErr != nil {
				return fmt.Errorf("not migrating part of a selection: %w", s.ListErr)
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			objs := s.targets()
			if len(objs) == 0 {
				fmt.Fprintln(stderr, s.describeEmpty())
			}
			if err := ownership.CheckPlan(plan, s.Objects); err != nil {
				return withExitCode(exitUsage, err)
			}
			c, err := cluster.client()
			if err != nil {
				return err
			}
			showProgress := printers.IsTerminal(stderr) && !s.Named
			if cmd.Flags().Changed("progress") {
				showProgress = progress
			}
			result := newMigrateOutput(plan, !apply)
			m, err := ownership.NewMigrator(c, plan,
				ownership.WithDryRun(!apply),
				ownership.WithAttempts(attempts),
				ownership.WithProgress(func(p ownership.Progress) {
					v := result.record(p, objs[p.Done-1])
					if showProgress {
						fmt.Fprintln(stderr, progressLine(p, v))
					}
				}))
			if err != nil {
				return err
			}
			report := ownership.MigrateAllConcurrently(cmd.Context(), m, objs, concurrency)
			if err := writeMigrateOutput(stdout, out, result, s.Named || verbose, sel.allNamespaces); err != nil {
				return err
			}
			if n := len(report.Errors); n > 0 {
				return fmt.Errorf("%d of %s failed to migrate: %w", n, plural(len(objs), "object", "objects"),
					errors.Join(report.Errors...))
			}
			if exitCode && !apply && report.Changed() > 0 {
				return withExitCode(exitFindings, nil)
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	out.addFlags(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&pf.from, "from", nil, "LEGACY=MANAGER: hand the legacy manager's status fields to the apply manager (repeatable)")
	f.StringArrayVar(&pf.conditions, "condition", nil, "TYPE=MANAGER: hand condition TYPE from the legacy writers to the apply manager (repeatable)")
	f.BoolVar(&pf.releaseShared, "release-shared", false, "legacy writers give up the status fields another manager also owns")
	f.BoolVar(&apply, "apply", false, "write the new ownership (the default is a dry run)")
	f.BoolVar(&exitCode, "exit-code", false, "with a dry run, exit 1 when some object would change (as git diff --exit-code)")
	f.IntVar(&attempts, "attempts", ownership.DefaultAttempts, "read-rewrite-write rounds per object when it keeps changing")
	f.IntVar(&concurrency, "concurrency", 1, "objects migrated at the same time")
	f.BoolVarP(&verbose, "verbose", "v", false, "for lists too, print every object's ownership before and after")
	f.BoolVar(&progress, "progress", false,
		"print a progress line per object on stderr (default: when stderr is a terminal and objects are listed)")
	return cmd
}

// targets are the objects to migrate: the named ones in argument order,
// those that could not be read included (they fail again, and are reported
// with the others), or the listed ones.
func (s *selection) targets() []*unstructured.Unstructured {
	if !s.Named {
		return s.Objects
	}
	return s.named
}

// writeMigrateOutput prints the migration in the format the flags ask for.
// details prints every object's ownership before and after in table output;
// otherwise only failed objects are listed there.
func writeMigrateOutput(w io.Writer, out *outputFlags, o *migrateOutput, details, allNamespaces bool) error {
	switch out.mode() {
	case modeDocument:
		return out.printDocument(w, o)
	case modeName:
		return printNames(w, o.changed())
	case modeWide:
		if err := writeMigrateLines(w, out, o, allNamespaces); err != nil {
			return err
		}
	default:
		if err := writeMigrateTable(w, o, details); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, o.summaryLine())
	return nil
}
