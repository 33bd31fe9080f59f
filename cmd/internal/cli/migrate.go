package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/fleet"
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
  --stale-versions           rewrite every entry recorded in an API version the
                             CRD no longer serves to the storage version,
                             keeping its owner: with such an entry every
                             server-side apply to the object fails; fields that
                             do not translate refuse the object, unless
                             --drop-untranslatable drops them

Fields recorded in one API version move to a manager applying through another
where the CRD gives them the same paths (conversion None, or identical
schemas): a legacy entry is first translated to its destination's version. An
atomic list owned whole through one version is, in a version where it is a
map list, every item it holds. Fields that do not translate refuse the object,
naming them and what to do; nothing is ever dropped but by
--drop-untranslatable.

Only managedFields are rewritten, guarded by the object's resourceVersion as
listed: each object is rewritten as the list returned it, without reading it
again, and one that changed since is refused by the API server, read again
and retried. An object without managedFields is seeded first. The default is
a dry run that writes nothing; --apply writes. Running it again is a no-op.
Every object is attempted, up to --concurrency at a time, as fast as --qps
and --burst let the requests go: failures are reported per object, once
each. An object that fails because the API server cannot be reached
(connection refused or reset, a timeout) or refused it (Forbidden) stops the
run: the objects after it are not attempted, unless --continue-on-error.

Before the first object, the permissions --apply needs (patch on the
resource, and on its status subresource for objects without managedFields)
are checked with SelfSubjectAccessReviews: --apply refuses to start without
them; a dry run runs, then fails naming them.

Ctrl-C (SIGINT) or SIGTERM stops the run: the objects not finished are
counted as not attempted, not failed, and one line says how to resume (the
same command again: what was migrated is found unchanged).

Output: for named objects, the ownership before and after each one; for
lists, the failures; -o wide prints one line per object, then every object's
ownership before and after. -o json and -o yaml print a MigrationList
(cli.statusapply.io/v1alpha1); -o name prints the objects that changed (or
would, in a dry run). The summary line and progress go to stderr, so that
stdout holds only the output asked for; progress redraws one line when
stderr is a terminal and objects are listed, or prints a line per object
with --progress.

The plan is checked against the selected objects before anything is written.
Refused as a usage error: a --from manager that is a legacy writer on none of
them while legacy writers still hold status fields there (the error names
them; --allow-missing-source accepts it), a --condition type no legacy writer
holds (the same), and a destination that is a legacy writer's name. A
destination that is an apply manager on none of them is a new field manager
or a misspelling: a warning, refused under --exit-code, unless named with
--new-destination.

A legacy writer the plan takes fields from that wrote some of the objects
within --window (default 24h, as audit counts active legacy writers) makes
--apply refuse, unless --allow-active: its next write would take the fields
back, and the migration removes the managedFields entry that showed it
active, so an audit afterwards could not tell. A dry run, and --apply with
--allow-active, say so after the summary line.

Exit codes: 0 done (or a dry run); 1 with --exit-code, a dry run that would
change something, or no object selected at all (unless --allow-empty); 2
usage errors, --apply from an active legacy writer without --allow-active,
plans that match nothing, destinations that apply nowhere under --exit-code,
objects that failed to migrate, a run stopped because the API server could
not be reached or refused an object, missing permissions (the dry run too),
an interrupted run, and every other error.`

const migrateExample = `  # see what would change
  statusapply migrate widgets -n shop --from legacy-controller=readiness
  # split a legacy writer by condition type, clean up the rest, and write
  statusapply migrate widget/w1 --condition Ready=readiness --condition Reachable=networking \
      --release-shared --apply
  # a fleet, eight objects at a time, one line per object and every object's ownership
  statusapply migrate widgets -A --from legacy-controller=readiness --apply --concurrency 8 -o wide
  # hand a legacy writer to a field manager that has not applied yet
  statusapply migrate widgets -A --from legacy-controller=readiness --new-destination readiness --apply
  # rewrite entries recorded in versions the CRD no longer serves, keeping every owner
  statusapply migrate machines -A --stale-versions --apply
  # in CI: fail while something is left to migrate
  statusapply migrate widgets -A --from legacy-controller=readiness --exit-code -o name`

// migrateFlags are the migrate command's own flags besides the plan,
// selection and output ones.
type migrateFlags struct {
	apply              bool
	exitCode           bool
	attempts           int
	concurrency        int
	progress           bool
	continueOnError    bool
	allowMissingSource bool
	newDestinations    []string
	allowEmpty         bool
	allowActive        bool
	window             time.Duration
}

// newMigrateCommand returns the migrate command.
func newMigrateCommand(cluster *clusterAccess) *cobra.Command {
	var (
		sel objectFlags
		pf  planFlags
		mf  migrateFlags
	)
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:               "migrate TYPE[/NAME] [NAME...]",
		Short:             "Hand status ownership from legacy writers to server-side-apply managers (dry run unless --apply)",
		Long:              migrateLong,
		Example:           migrateExample,
		Args:              resourceArgs,
		ValidArgsFunction: completeObjects(cluster),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := pf.plan()
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if err := checkNewDestinationFlags(plan, mf.newDestinations); err != nil {
				return withExitCode(exitUsage, err)
			}
			if err := out.check(); err != nil {
				return err
			}
			if mf.concurrency < 1 {
				return withExitCode(exitUsage, fmt.Errorf("--concurrency %d: must be 1 or more", mf.concurrency))
			}
			if mf.window <= 0 {
				return withExitCode(exitUsage, fmt.Errorf("--window %s: must be positive", mf.window))
			}
			s, err := sel.selectObjects(cluster, args)
			if err != nil {
				return err
			}
			if s.ListErr != nil {
				return fmt.Errorf("not migrating part of a selection: %w", s.ListErr)
			}
			stderr := cmd.ErrOrStderr()
			if len(s.targets()) == 0 {
				fmt.Fprintln(stderr, s.describeEmpty())
				if mf.exitCode && !mf.allowEmpty {
					return withExitCode(exitFindings, fmt.Errorf("nothing to migrate or check: %s; %s", s.describeEmpty(), allowEmptyHint))
				}
			}
			for _, line := range s.emptyLists() {
				fmt.Fprintln(stderr, line)
			}
			// Each object's managedFields converted once, for the checks and
			// the Migrator; the checks look at the objects read, not at the
			// stubs of named objects that could not be.
			given := migrationObjects(s.targets())
			read := slices.DeleteFunc(slices.Clone(given), func(o client.Object) bool { return o.GetResourceVersion() == "" })
			var checks []fleet.CheckOption
			if mf.allowMissingSource {
				checks = append(checks, fleet.AllowMissingSources())
			}
			if err := fleet.CheckPlan(plan, read, checks...); err != nil {
				return withExitCode(exitUsage, err)
			}
			if msg := newDestinationsMessage(plan, read, mf.newDestinations); msg != "" {
				if mf.exitCode {
					return withExitCode(exitUsage, errors.New(msg+" (refused under --exit-code)"))
				}
				fmt.Fprintln(stderr, "warning: "+msg)
			}
			now := time.Now()
			active := activeLegacyWriters(plan, read, now, mf.window)
			if mf.apply && !mf.allowActive {
				if err := activeSourcesError(active, mf.window, now); err != nil {
					return withExitCode(exitUsage, err)
				}
			}
			c, err := cluster.client()
			if err != nil {
				return err
			}
			versions, err := kindVersions(cmd.Context(), c, s.targets())
			if err != nil && plan.RewriteStaleVersions {
				return withExitCode(exitUsage, fmt.Errorf("--stale-versions: %w", err))
			}
			progress := newProgressPrinter(stderr)
			if !cmd.Flags().Changed("progress") {
				mf.progress = progress.terminal && !s.Named
			}
			err = runMigration(cmd, c, plan, versions, s, given, mf, out, progress)
			// After the summary line: the outcome stands, and these say what
			// may undo it.
			if errors.Is(err, errNothingWritten) {
				return err // nothing was migrated from anyone
			}
			for _, line := range activeWarnings(active, mf.window, now, !mf.apply, mf.allowActive) {
				fmt.Fprintln(stderr, line)
			}
			return err
		},
	}
	sel.addFlags(cmd)
	out.addFlags(cmd)
	f := cmd.Flags()
	f.StringArrayVar(&pf.from, "from", nil, "LEGACY=MANAGER: hand the legacy manager's status fields to the apply manager (repeatable)")
	f.StringArrayVar(&pf.conditions, "condition", nil, "TYPE=MANAGER: hand condition TYPE from the legacy writers to the apply manager (repeatable)")
	f.BoolVar(&pf.releaseShared, "release-shared", false, "legacy writers give up the status fields another manager also owns")
	f.BoolVar(&pf.staleVersions, "stale-versions", false,
		"rewrite entries recorded in API versions the CRD no longer serves to its storage version, keeping their owners")
	f.BoolVar(&pf.dropUntranslatable, "drop-untranslatable", false,
		"with --stale-versions, drop the fields of stale entries that do not translate to the storage version")
	f.BoolVar(&mf.apply, "apply", false, "write the new ownership (the default is a dry run)")
	f.BoolVar(&mf.exitCode, "exit-code", false,
		"with a dry run, exit 1 when some object would change (as git diff --exit-code); refuse destinations that apply nowhere")
	f.IntVar(&mf.attempts, "attempts", fleet.DefaultAttempts, "read-rewrite-write rounds per object when it keeps changing")
	f.IntVar(&mf.concurrency, "concurrency", 1, "objects migrated at the same time")
	f.BoolVar(&mf.progress, "progress", false,
		"report progress per object on stderr, with the rate and the time left (default: when stderr is a terminal and objects are listed)")
	f.BoolVar(&mf.continueOnError, "continue-on-error", false,
		"keep attempting the remaining objects after the API server could not be reached (refused, reset, timed out) or refused an object (Forbidden)")
	f.BoolVar(&mf.allowMissingSource, "allow-missing-source", false,
		"accept a --from manager or --condition type that no legacy writer holds while other legacy writers are left")
	f.StringArrayVar(&mf.newDestinations, "new-destination", nil,
		"MANAGER: a destination that applies on none of the objects yet, named on purpose (repeatable)")
	f.BoolVar(&mf.allowActive, "allow-active", false,
		"with --apply, take fields from legacy writers that wrote within --window (refused by default: their next write takes them back)")
	f.DurationVar(&mf.window, "window", fleet.DefaultAuditWindow,
		"a legacy writer whose last write is this recent counts as still active (as in audit)")
	addAllowEmptyFlag(cmd, &mf.allowEmpty, "--exit-code selects no object")
	for flag, fn := range map[string]cobra.CompletionFunc{
		"from":            completePairs(cluster, &sel, legacyWriters, applyManagersOf),
		"condition":       completePairs(cluster, &sel, legacyConditionTypes, applyManagersOf),
		"new-destination": pf.completeDestinations,
	} {
		_ = cmd.RegisterFlagCompletionFunc(flag, fn) // fails only for a missing flag
	}
	return cmd
}

// runMigration migrates the selected objects, given as migrationObjects
// returns them, and prints the outcome.
//
// Before anything is sent it asks the API server (SelfSubjectAccessReview)
// whether the user may write what --apply writes: --apply refuses to start
// without, a dry run runs and then fails, naming the permissions.
//
// The first object that fails because the API server cannot be reached or
// refused it (Forbidden) stops the run (unless --continue-on-error): the
// objects after it are not attempted, rather than each failing the same
// way. A run interrupted (its context cancelled: Ctrl-C, SIGTERM) counts
// the objects it did not finish as not attempted, not failed, and returns
// one error that says how to resume.
func runMigration(cmd *cobra.Command, c client.Client, plan fleet.Plan, versions map[schema.GroupKind]*fleet.Versions,
	s *selection, given []client.Object, mf migrateFlags,
	out *outputFlags, progress *progressPrinter) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	objs := s.targets()
	parent := cmd.Context()
	needs, err := migrationNeeds(c.RESTMapper(), plan, versions, given)
	if err != nil {
		return err
	}
	missing, err := missingPermissions(parent, c, needs)
	if err != nil && parent.Err() == nil {
		fmt.Fprintf(stderr, "warning: permissions not checked: %v\n", err)
	}
	if mf.apply && len(missing) > 0 {
		return fmt.Errorf("%w: %s", errNothingWritten, permissionsMessage(missing))
	}

	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	var stopped *runStop // why the run stopped early, and at which object
	result := newMigrateOutput(plan, !mf.apply)
	eta := newRateClock(time.Now)
	m, err := fleet.NewMigrator(c, plan,
		fleet.WithDryRun(!mf.apply),
		fleet.WithAttempts(mf.attempts),
		fleet.WithVersions(versions),
		// The selection read every object moments ago: the first round
		// rewrites it as listed, guarded by its resourceVersion.
		fleet.WithObjectsAsRead(),
		fleet.WithProgress(func(p fleet.Progress) {
			if p.Err != nil && ctx.Err() != nil && (errors.Is(p.Err, context.Canceled) || errors.Is(p.Err, context.Cause(ctx))) {
				// Cut off by the interruption or the stop, not failed (the
				// HTTP client reports the context's cause, such as the
				// signal, rather than context.Canceled).
				result.skip()
				return
			}
			v := result.record(p, objs[p.Done-1])
			if mf.progress {
				progress.print(progressLine(p, v) + eta.left(p.Done, p.Total))
			}
			if p.Err != nil && stopped == nil && !mf.continueOnError {
				if why := stopReason(p.Err); why != "" {
					stopped = &runStop{object: v, why: why}
					stop(errStopped)
				}
			}
		}))
	if err != nil {
		return err
	}
	report := fleet.MigrateAllConcurrently(ctx, m, given, mf.concurrency)
	progress.clear()
	if err := writeMigrateOutput(stdout, stderr, out, result, s.Named, s.allNamespaces); err != nil {
		return err
	}
	sum := result.Summary
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("interrupted by %w: %d of %s not attempted; %s", context.Cause(parent),
			sum.NotAttempted, plural(sum.Total, "object", "objects"), resumeHint(mf.apply))
	case stopped != nil:
		hint := resumeHint(mf.apply)
		if len(missing) > 0 {
			hint = permissionsMessage(missing) + "; " + hint
		}
		return fmt.Errorf("stopped: %s %s, %d of %s not attempted (--continue-on-error attempts every object); %s",
			stopped.object.Object.ref(), stopped.why, sum.NotAttempted, plural(sum.Total, "object", "objects"), hint)
	case sum.Failed > 0:
		// Each failure was printed once, with the object; the error counts them.
		return fmt.Errorf("%d of %s failed to migrate", sum.Failed, plural(sum.Total, "object", "objects"))
	case len(missing) > 0:
		return fmt.Errorf("--apply would be refused: %s", permissionsMessage(missing))
	case mf.exitCode && !mf.apply && report.Changed() > 0:
		return withExitCode(exitFindings, nil)
	}
	return nil
}

// errNothingWritten is wrapped by the refusal to start a migration.
var errNothingWritten = errors.New("not migrating, nothing was written")

// migrationObjects are objs as the Migrator is given them: each object's
// metadata, managedFields included, as a typed object (an unstructured
// object converts its managedFields on every read of them, and a migration
// reads them several times per object), or the whole object where an entry
// was recorded in another API version than the one it was listed in:
// translating such an entry may need the object's content (an atomic list
// owned whole through one version becomes the items it holds). The
// Migrator reads and writes metadata through the API server's metadata
// interface, at the same paths.
func migrationObjects(objs []*unstructured.Unstructured) []client.Object {
	out := make([]client.Object, len(objs))
	for i, u := range objs {
		m := &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
			ObjectMeta: metav1.ObjectMeta{
				Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID(),
				ResourceVersion: u.GetResourceVersion(), ManagedFields: u.GetManagedFields(),
			},
		}
		out[i] = m
		for _, e := range m.ManagedFields {
			if e.APIVersion != u.GetAPIVersion() {
				out[i] = u
				break
			}
		}
	}
	return out
}

// runStop is the object whose failure stopped a run, and why.
type runStop struct {
	object migrateObjectView
	why    string
}

// errStopped is the cause of the context of a run stopped after the API
// server could not be reached or refused an object.
var errStopped = errors.New("stopped after the API server could not be reached or refused an object")

// stopReason says why err stops a run ("could not reach the API server",
// "was refused (forbidden)"), or "" when the other objects are worth
// attempting.
func stopReason(err error) string {
	switch {
	case connectionLost(err):
		return "could not reach the API server"
	case apierrors.IsForbidden(err):
		return "was refused by the API server (forbidden)"
	}
	return ""
}

// connectionLost reports whether err says the API server could not be
// reached or stopped answering: connection refused or reset, a connection
// that ended early, a timeout, a failed dial, or the server's own timeout
// answers. Every further request would most likely fail the same way.
func connectionLost(err error) bool {
	if utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsTimeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// kindVersions reads the CRD versions of each kind among objs. A kind whose
// CRD cannot be read is left out, and named in the error.
func kindVersions(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) (map[schema.GroupKind]*fleet.Versions, error) {
	out := map[schema.GroupKind]*fleet.Versions{}
	var errs []error
	for _, obj := range objs {
		gk := obj.GroupVersionKind().GroupKind()
		if _, done := out[gk]; done {
			continue
		}
		out[gk] = nil
		mapping, err := c.RESTMapper().RESTMapping(gk)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", gk, err))
			continue
		}
		crd, unavailable := kindCRD(ctx, c, mapping)
		if crd == nil {
			errs = append(errs, errors.New(unavailable))
			continue
		}
		v, err := fleet.VersionsOf(crd)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[gk] = v
	}
	return out, errors.Join(errs...)
}

// resumeHint says how to finish an interrupted or stopped run.
func resumeHint(apply bool) string {
	if !apply {
		return "nothing was written; run the same command again for the whole dry run"
	}
	return "to finish, run the same command again: the objects migrated so far are found unchanged and left as they are"
}

// checkNewDestinationFlags refuses a --new-destination that is no
// destination of the plan: it would declare nothing.
func checkNewDestinationFlags(plan fleet.Plan, names []string) error {
	for _, name := range names {
		if len(destinationFlags(plan, name)) == 0 {
			return fmt.Errorf("--new-destination %s: no --from or --condition hands fields to %s", name, name)
		}
	}
	return nil
}

// destinationFlags lists, sorted, the flags of plan that hand fields to
// manager.
func destinationFlags(plan fleet.Plan, manager string) []string {
	var out []string
	for from, to := range plan.Managers {
		if to == manager {
			out = append(out, "--from "+from+"="+to)
		}
	}
	for condType, to := range plan.Conditions {
		if to == manager {
			out = append(out, "--condition "+condType+"="+to)
		}
	}
	slices.Sort(out)
	return out
}

// newDestinationsMessage says which destinations of plan apply on none of
// objs and were not named with --new-destination: a new field manager or a
// misspelling, which would own fields nobody writes. "" when there are none.
func newDestinationsMessage[T metav1.Object](plan fleet.Plan, objs []T, declared []string) string {
	var parts []string
	for _, to := range fleet.NewDestinations(plan, objs) {
		if slices.Contains(declared, to) {
			continue
		}
		verdict := fmt.Sprintf("applies on none of the %d objects", len(objs))
		if len(objs) == 1 {
			verdict = "does not apply on the object"
		}
		parts = append(parts, fmt.Sprintf("%s: %s %s", strings.Join(destinationFlags(plan, to), ", "), to, verdict))
	}
	if len(parts) == 0 {
		return ""
	}
	present := "no apply manager is there yet"
	if names := applyManagers(objs); len(names) > 0 {
		present = "apply managers there: " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s (%s); a misspelled destination would own fields nobody writes: "+
		"if it is a new field manager, say so with --new-destination NAME", strings.Join(parts, "; "), present)
}

// applyManagers lists, sorted, the managers that apply on some of objs.
func applyManagers[T metav1.Object](objs []T) []string {
	seen := map[string]bool{}
	for _, obj := range objs {
		for _, mf := range obj.GetManagedFields() {
			if mf.Operation == metav1.ManagedFieldsOperationApply {
				seen[mf.Manager] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
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

// writeMigrateOutput prints the migration in the format the flags ask for
// on stdout, and the summary line on stderr, so that stdout holds only what
// was asked for (a document, names, a table). named prints every object's
// ownership before and after in table output; for lists only failed
// objects are listed there. -o wide prints one line per object, then every
// object's ownership before and after. A failed object is printed once: in
// the table, or on stderr for -o name and documents.
func writeMigrateOutput(stdout, stderr io.Writer, out *outputFlags, o *migrateOutput, named, allNamespaces bool) error {
	if mode := out.mode(); mode == modeDocument || mode == modeWide || named {
		o.fillViews()
	}
	switch out.mode() {
	case modeDocument:
		if err := out.printDocument(stdout, o); err != nil {
			return err
		}
		writeMigrateFailures(stderr, o)
		return nil
	case modeName:
		if err := printNames(stdout, o.changed()); err != nil {
			return err
		}
		writeMigrateFailures(stderr, o)
	case modeWide:
		if err := writeMigrateLines(stdout, out, o, allNamespaces); err != nil {
			return err
		}
		if details := o.withoutFailures(); len(details.Items) > 0 {
			fmt.Fprintln(stdout)
			if err := writeMigrateTable(stdout, details, true); err != nil {
				return err
			}
		}
	default:
		if err := writeMigrateTable(stdout, o, named); err != nil {
			return err
		}
	}
	fmt.Fprintln(stderr, o.summaryLine())
	return nil
}
