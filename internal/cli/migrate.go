package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
managedFields is seeded first. The default is a dry run that prints the
ownership before and after for each object and writes nothing; --apply
writes. Running it again is a no-op. Every object is attempted: failures are
reported per object and make the command exit non-zero. For lists, progress
lines go to stderr.

The plan is checked against the selected objects before anything is written:
a --from manager that is a legacy writer on none of them, a --condition type
none of them has, or a destination that is a legacy writer's name is refused
with exit code 2. Exit codes: 0 done (or a dry run), 1 some object failed, or
with --exit-code a dry run that would change something, 2 usage errors and
plans that match nothing.`

const migrateExample = `  # see what would change
  statusapply migrate widgets -n shop --from legacy-controller=readiness
  # split a legacy writer by condition type, clean up the rest, and write
  statusapply migrate widget/w1 --condition Ready=readiness --condition Reachable=networking \
      --release-shared --apply`

// newMigrateCommand returns the migrate command.
func newMigrateCommand(cluster *clusterAccess) *cobra.Command {
	var (
		sel      selectionFlags
		pf       planFlags
		out      outputFormat
		apply    bool
		exitCode bool
		attempts int
	)
	cmd := &cobra.Command{
		Use:     "migrate TYPE[/NAME] [NAME...]",
		Short:   "Hand status ownership from legacy writers to server-side-apply managers (dry run unless --apply)",
		Long:    migrateLong,
		Example: migrateExample,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := pf.plan()
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			s, err := sel.resolve(cluster, args)
			if err != nil {
				return err
			}
			objs, readable, err := migrationObjects(cmd.Context(), s)
			if err != nil {
				return err
			}
			if len(objs) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), s.scope.describe(s.mapping))
			}
			if err := ownership.CheckPlan(plan, readable); err != nil {
				return withExitCode(exitUsage, err)
			}
			result := newMigrateOutput(plan, !apply)
			showProgress := len(s.target.Names) == 0
			m, err := ownership.NewMigrator(s.client, plan,
				ownership.WithDryRun(!apply),
				ownership.WithAttempts(attempts),
				ownership.WithProgress(func(p ownership.Progress) {
					v := result.record(p)
					if showProgress {
						fmt.Fprintln(cmd.ErrOrStderr(), progressLine(p, v))
					}
				}))
			if err != nil {
				return err
			}
			report := ownership.MigrateAll(cmd.Context(), m, objs)
			if out == outputJSON {
				err = writeJSON(cmd.OutOrStdout(), result)
			} else {
				err = writeMigrateTable(cmd.OutOrStdout(), result)
			}
			if err != nil {
				return err
			}
			if n := len(report.Errors); n > 0 {
				return fmt.Errorf("%d of %s failed to migrate", n, plural(len(objs), "object", "objects"))
			}
			if exitCode && !apply && report.Changed() > 0 {
				return withExitCode(exitFindings, nil)
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	addOutputFlag(cmd, &out)
	f := cmd.Flags()
	f.StringArrayVar(&pf.from, "from", nil, "LEGACY=MANAGER: hand the legacy manager's status fields to the apply manager (repeatable)")
	f.StringArrayVar(&pf.conditions, "condition", nil, "TYPE=MANAGER: hand condition TYPE from the legacy writers to the apply manager (repeatable)")
	f.BoolVar(&pf.releaseShared, "release-shared", false, "legacy writers give up the status fields another manager also owns")
	f.BoolVar(&apply, "apply", false, "write the new ownership (the default is a dry run)")
	f.BoolVar(&exitCode, "exit-code", false, "with a dry run, exit 1 when some object would change (as git diff --exit-code)")
	f.IntVar(&attempts, "attempts", ownership.DefaultAttempts, "read-rewrite-write rounds per object when it keeps changing")
	return cmd
}

// migrationObjects returns the objects to migrate and, of those, the ones
// read in full for checking the plan. Named objects are read one by one; one
// that cannot be read is still migrated, so that its failure is reported with
// the others.
func migrationObjects(ctx context.Context, s *selection) (all, readable []*unstructured.Unstructured, err error) {
	if len(s.target.Names) == 0 {
		objs, err := list(ctx, s.client, s.mapping, s.scope)
		return objs, objs, err
	}
	readable, _ = readObjects(ctx, s)
	for _, name := range s.target.Names {
		all = append(all, stub(s.mapping, s.scope, name))
	}
	return all, readable, nil
}
