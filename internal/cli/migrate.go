package cli

import (
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
  --release-unmapped         status fields legacy writers still hold afterwards
                             become unowned (they stay on the object)

Only managedFields are rewritten, guarded by the object's resourceVersion;
objects that change meanwhile are read again and retried. An object without
managedFields is seeded first. The default is a dry run that prints the
ownership before and after for each object and writes nothing; --apply
writes. Running it again is a no-op. Every object is attempted: failures are
reported per object and make the command exit non-zero. For lists, progress
lines go to stderr.`

const migrateExample = `  # see what would change
  statusapply migrate widgets -n shop --from legacy-controller=readiness
  # split a legacy writer by condition type, clean up the rest, and write
  statusapply migrate widget/w1 --condition Ready=readiness --condition Reachable=networking \
      --release-unmapped --apply`

// newMigrateCommand returns the migrate command.
func newMigrateCommand(cluster *clusterAccess) *cobra.Command {
	var (
		sel      selectionFlags
		pf       planFlags
		out      outputFormat
		apply    bool
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
				return err
			}
			s, err := sel.resolve(cluster, args)
			if err != nil {
				return err
			}
			var objs []*unstructured.Unstructured
			if len(s.target.Names) > 0 {
				for _, name := range s.target.Names {
					objs = append(objs, stub(s.mapping, s.scope, name))
				}
			} else {
				if objs, err = list(cmd.Context(), s.client, s.mapping, s.scope); err != nil {
					return err
				}
				if len(objs) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), s.scope.describe(s.mapping))
				}
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
			return nil
		},
	}
	sel.addFlags(cmd)
	addOutputFlag(cmd, &out)
	f := cmd.Flags()
	f.StringArrayVar(&pf.from, "from", nil, "LEGACY=MANAGER: hand the legacy manager's status fields to the apply manager (repeatable)")
	f.StringArrayVar(&pf.conditions, "condition", nil, "TYPE=MANAGER: hand condition TYPE from the legacy writers to the apply manager (repeatable)")
	f.BoolVar(&pf.releaseUnmapped, "release-unmapped", false, "leave status fields that legacy writers still hold unowned")
	f.BoolVar(&apply, "apply", false, "write the new ownership (the default is a dry run)")
	f.IntVar(&attempts, "attempts", ownership.DefaultAttempts, "read-rewrite-write rounds per object when it keeps changing")
	return cmd
}
