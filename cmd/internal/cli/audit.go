package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/internal/durations"
	"github.com/statusapply/statusapply/ownership"
)

const auditLong = `Audit every object of one kind: who writes what in their status, and what a
migration to server-side-apply managers must still cover. Objects are listed
from the API server in pages of --chunk-size and summarised as they arrive,
so the whole list is never held in memory.

It reports, across the objects:
  - every field manager with its operation, subresource and API version, the
    condition types and other status fields it owns and on how many objects,
    on how many objects it appears, and when it last wrote;
  - legacy writers still active: Update writers on the status subresource
    whose last write lies within --window;
  - objects never tracked (no managedFields) and objects carrying
    before-first-apply;
  - status fields owned by more than one manager, with the managers;
  - atomic lists and maps in the kind's CRD schema (as lint does); a CRD that
    cannot be read is reported, not an error;
  - entries recorded in API versions the CRD no longer serves: once a version
    is removed from the CRD, every server-side apply to an object with an
    entry in it fails ("request to convert CR to an invalid group/version");
    "migrate --stale-versions" rewrites them to the storage version;
  - writers owning an atomic list whole through a served version (such as a
    deprecated version without list markers): each condition in the list
    counts as theirs;
  - the verdict: the "migrate" flags that hand the legacy ownership to the
    apply managers already writing the same fields, and what is left to
    decide. Destinations are never guessed: a field nobody applies yet is
    listed as unresolved. Fields moving to a manager that applies through
    another API version are proposed only where the CRD gives them the same
    paths in both (and noted); every command proposed is one migrate accepts.

--writer MANAGER=TYPE[,TYPE...] (repeatable) names a new status writer and
the condition types it writes from now on (status fields as paths, such as
.status.phase): the verdict counts it as an apply manager of them. Declare
the writers you switched to apply: while their applies restate the legacy
values they send nothing, so managedFields never show them, and an apply
that changes a legacy value conflicts; migrate must hand them the fields.

The tables (managers, shared fields, schema findings) go to stdout, the other
lines to stderr: the count of objects before the tables, and the schema, the
objects never tracked or unreadable, and the verdict (the migrate command,
unresolved decisions, notes) after them. -o json and -o yaml print all of it
as a StatusAudit (cli.statusapply.io/v1alpha1): the fields of
fleet.AuditReport, plus resource and migrateCommand.

Exit codes: 0 done; 1 with --exit-code, when the audit has findings (legacy
ownership left to migrate, before-first-apply included, entries in versions
the CRD no longer serves, active legacy writers, unreadable managedFields, or
an atomic conditions list), or when it found no object at all unless
--allow-empty (a gate pointed at the wrong namespace must not pass); 2 usage
errors and every other error.`

const auditExample = `  statusapply audit widgets -A
  statusapply audit widgets -n shop --window 1h -o yaml
  statusapply audit widgets -A -o jsonpath='{.verdict.flags}'
  # after the switch: the new writers, by field manager and condition types
  statusapply audit machines -A --writer machine-health=HealthCheckSucceeded,OwnerRemediated
  # in CI: fail while a legacy writer or legacy ownership is left
  statusapply audit widgets -A --exit-code`

// auditOutput is the document of the audit command.
type auditOutput struct {
	typeMeta `json:",inline"`
	// Resource is the audited resource, such as widgets.demo.statusapply.io.
	Resource string `json:"resource"`
	// Namespace is where objects were listed; empty with -A and for
	// cluster-scoped resources.
	Namespace string `json:"namespace,omitempty"`
	// Selector is the -l label selector, if any.
	Selector          string `json:"selector,omitempty"`
	fleet.AuditReport `json:",inline"`
	// MigrateCommand is the verdict as a command line; empty when the
	// verdict has no flags.
	MigrateCommand string `json:"migrateCommand,omitempty"`
}

// newAuditCommand returns the audit command; now is its clock, for the
// activity window and the ages it prints.
func newAuditCommand(cluster *clusterAccess, now func() time.Time) *cobra.Command {
	var (
		sel        objectFlags
		window     time.Duration
		exitCode   bool
		allowEmpty bool
		writers    []string
	)
	out := newOutputFlags()
	out.noNames = true
	cmd := &cobra.Command{
		Use:               "audit TYPE",
		Short:             "Summarise who writes what in the status of every object of a kind, and the migrate flags still needed",
		Long:              auditLong,
		Example:           auditExample,
		Args:              oneResourceType,
		ValidArgsFunction: completeTypes(cluster),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if out.mode() == modeName {
				return withExitCode(exitUsage, errors.New("audit prints a summary, not objects: -o name is not supported"))
			}
			if window <= 0 {
				return withExitCode(exitUsage, fmt.Errorf("--window %s: must be positive", window))
			}
			declared, err := parseWriters(writers)
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			named, err := sel.check(args)
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			if named {
				return withExitCode(exitUsage, fmt.Errorf("%q: audit takes a resource type, not objects; "+
					"narrow it with -n or -l", args[0]))
			}
			r, ns, err := sel.result(cluster, args)
			if err != nil {
				return err
			}
			mapping, err := r.ResourceMapping()
			if err != nil {
				return withExitCode(exitUsage, fmt.Errorf("%q: audit one resource type at a time: %w", args[0], err))
			}
			c, err := cluster.client()
			if err != nil {
				return err
			}
			crd, unavailable := kindCRD(cmd.Context(), c, mapping)
			report, err := fleet.Audit(visitObjects(r), fleet.AuditOptions{
				Now: now(), Window: window, CRD: crd, SchemaUnavailable: unavailable, Writers: declared,
			})
			if err != nil {
				return err
			}
			doc := auditOutput{
				typeMeta:    documentType("StatusAudit"),
				Resource:    mapping.Resource.GroupResource().String(),
				Selector:    sel.selector,
				AuditReport: *report,
			}
			if namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace; namespaced && !sel.allNamespaces {
				doc.Namespace = ns
			}
			doc.MigrateCommand = migrateCommand(displayName(cmd), args[0], doc, sel.allNamespaces)
			s := &selection{lists: []*meta.RESTMapping{mapping}, namespace: ns, allNamespaces: sel.allNamespaces,
				selector: sel.selector}
			if report.Objects == 0 && out.mode() != modeDocument {
				fmt.Fprintln(cmd.ErrOrStderr(), s.describeEmpty())
			}
			if err := writeAuditOutput(cmd.OutOrStdout(), cmd.ErrOrStderr(), out, doc, now()); err != nil {
				return err
			}
			switch {
			case exitCode && report.HasFindings():
				return withExitCode(exitFindings, nil)
			case exitCode && report.Objects == 0 && !allowEmpty:
				return withExitCode(exitFindings, fmt.Errorf("nothing audited: %s; %s", s.describeEmpty(), allowEmptyHint))
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	out.addFlags(cmd)
	cmd.Flags().DurationVar(&window, "window", fleet.DefaultAuditWindow,
		"a legacy writer whose last write is this recent counts as still active")
	cmd.Flags().StringArrayVar(&writers, "writer", nil,
		"MANAGER=TYPE[,TYPE...]: a new status writer and the condition types (or .status. fields) it writes from now on, "+
			"for the verdict to hand them to it (repeatable)")
	cmd.Flags().BoolVar(&exitCode, "exit-code", false,
		"exit 1 when the audit has findings: legacy ownership, entries in versions no longer served, active legacy writers, "+
			"unreadable objects, an atomic conditions list; or when it found no object (unless --allow-empty)")
	addAllowEmptyFlag(cmd, &allowEmpty, "--exit-code finds no object to audit")
	_ = cmd.RegisterFlagCompletionFunc("writer", completePairs(cluster, &sel, applyManagersOf, legacyConditionTypes))
	return cmd
}

// parseWriters parses --writer MANAGER=TYPE[,TYPE...] flags into
// AuditOptions.Writers; a manager named twice writes the union.
func parseWriters(flags []string) (map[string][]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, f := range flags {
		manager, list, ok := strings.Cut(f, "=")
		if !ok || manager == "" || list == "" {
			return nil, fmt.Errorf("--writer %q: want MANAGER=TYPE[,TYPE...]", f)
		}
		for w := range strings.SplitSeq(list, ",") {
			if w == "" {
				return nil, fmt.Errorf("--writer %q: an empty condition type", f)
			}
			if !slices.Contains(out[manager], w) {
				out[manager] = append(out[manager], w)
			}
		}
	}
	if err := fleet.ValidateWriters(out); err != nil {
		return nil, fmt.Errorf("--writer: %w", err)
	}
	return out, nil
}

// visitObjects yields the objects of a resource builder result one at a
// time: the builder lists one --chunk-size page per visit, and no page is
// kept after it was yielded.
func visitObjects(r *resource.Result) iter.Seq2[metav1.Object, error] {
	return func(yield func(metav1.Object, error) bool) {
		stopped := errors.New("the caller stopped")
		err := r.Visit(func(info *resource.Info, err error) error {
			if err != nil {
				return err
			}
			each := func(obj runtime.Object) error {
				m, err := meta.Accessor(obj)
				if err != nil {
					return err
				}
				if !yield(m, nil) {
					return stopped
				}
				return nil
			}
			if meta.IsListType(info.Object) {
				return meta.EachListItem(info.Object, each)
			}
			return each(info.Object)
		})
		if err != nil && !errors.Is(err, stopped) {
			yield(nil, err)
		}
	}
}

// kindCRD reads the CustomResourceDefinition of mapping's resource, or says
// why there is none to check; it never fails the audit.
func kindCRD(ctx context.Context, c client.Client, mapping *meta.RESTMapping) (*apiextensionsv1.CustomResourceDefinition, string) {
	crd, err := readCRD(ctx, c, mapping)
	if err != nil {
		return nil, err.Error()
	}
	return crd, ""
}

// notCustomError says a resource has no CustomResourceDefinition: it is
// built in, or served by an aggregated API server.
type notCustomError struct{ msg string }

func (e *notCustomError) Error() string { return e.msg }

// readCRD reads the CustomResourceDefinition of mapping's resource; the
// error is a *notCustomError when the resource has none.
func readCRD(ctx context.Context, c client.Client, mapping *meta.RESTMapping) (*apiextensionsv1.CustomResourceDefinition, error) {
	gr := mapping.Resource.GroupResource()
	if !strings.Contains(gr.Group, ".") {
		return nil, &notCustomError{fmt.Sprintf("%s is a built-in resource: it has no CustomResourceDefinition", gr)}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: gr.String()}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &notCustomError{fmt.Sprintf("no CustomResourceDefinition %s: the resource is not a custom resource", gr)}
		}
		return nil, fmt.Errorf("reading CustomResourceDefinition %s: %w", gr, err)
	}
	return crd, nil
}

// migrateCommand renders the verdict's flags as a command line for the same
// objects, run as name (displayName: "statusapply", or "kubectl statusapply"
// for the plugin, printed as it is); empty when there are no flags.
func migrateCommand(name, resourceArg string, doc auditOutput, allNamespaces bool) string {
	if len(doc.Verdict.Flags) == 0 {
		return ""
	}
	parts := []string{"migrate", resourceArg}
	switch {
	case allNamespaces:
		parts = append(parts, "-A")
	case doc.Namespace != "":
		parts = append(parts, "-n", doc.Namespace)
	}
	if doc.Selector != "" {
		parts = append(parts, "-l", doc.Selector)
	}
	// The flags name declared writers with --new-destination already.
	parts = append(parts, doc.Verdict.Flags...)
	for i, p := range parts {
		parts[i] = shellQuote(p)
	}
	return name + " " + strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but letters,
// digits and -_.,/=:@.
func shellQuote(s string) string {
	plain := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,/=:@", r)
	}
	safe := s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !plain(r) })
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeAuditOutput prints the audit as a document on stdout, or as tables on
// stdout with the lines around them (the count of objects, the schema, the
// verdict, the notes) on stderr, so that stdout holds only what was asked
// for; now dates the ages of last writes.
func writeAuditOutput(stdout, stderr io.Writer, out *outputFlags, doc auditOutput, now time.Time) error {
	if out.mode() == modeDocument {
		return out.printDocument(stdout, doc)
	}
	r := doc.AuditReport
	where := ""
	if doc.Namespace != "" {
		where = " in namespace " + doc.Namespace
	}
	if doc.Selector != "" {
		where += " matching " + doc.Selector
	}
	// The blank lines that set the tables apart go to stderr too: on a
	// terminal the output reads as one, and stdout holds the tables alone.
	fmt.Fprintf(stderr, "%s%s: %s, %d never tracked (no managedFields), %d with %s\n\n", doc.Resource, where,
		plural(r.Objects, "object", "objects"), r.Untracked.Objects, r.BeforeFirstApply.Objects, ownership.BeforeFirstApplyManager)

	active := map[string]bool{}
	for _, a := range r.ActiveLegacyWriters {
		active[a.Manager+"\x00"+a.Subresource] = true
	}
	managers := newTable(schema.GroupKind{},
		column("Manager", false, "the field manager"),
		column("Operation", false, "Apply (server-side apply) or Update (create, update, patches)"),
		column("Subresource", false, "status for writes through /status"),
		column("API Version", true, "the version its fields are recorded in"),
		column("Objects", false, "on how many objects it has an entry"),
		column("Conditions", false, "condition types it owns, with the number of objects"),
		column("Other Status Fields", false, "other status fields it owns, with the number of objects"),
		column("Last Write", false, "how long ago it last changed one of its fields on any object"),
		column("Notes", false, "legacy writer, still active within the window"),
	)
	for _, m := range r.Managers {
		conds := counted(m.Conditions)
		if m.WholeConditionsList > 0 {
			conds = append(conds, fmt.Sprintf("(whole list)(%d)", m.WholeConditionsList))
		}
		last := ""
		if m.LastWrite != nil {
			last = duration.HumanDuration(now.Sub(m.LastWrite.Time))
		}
		var notes []string
		if m.Legacy {
			notes = append(notes, "legacy writer")
			if active[m.Manager+"\x00"+m.Subresource] {
				notes = append(notes, "active within "+durations.Short(r.Window.Duration))
			}
		}
		managers.row(nil, m.Manager, m.Operation, m.Subresource, m.APIVersion, fmt.Sprint(m.Objects),
			strings.Join(conds, ","), strings.Join(counted(m.OtherStatusFields), ","), last, strings.Join(notes, "; "))
	}

	shared := newTable(schema.GroupKind{},
		column("Shared Field", false, "a status field, or all fields of a condition, owned by several managers"),
		column("Managers", false, "its owners"),
		column("Objects", false, "on how many objects these managers share it"),
	)
	for _, s := range groupShared(r.SharedFields) {
		shared.row(nil, s.Path, strings.Join(s.Managers, ","), fmt.Sprint(s.Objects))
	}

	schemaTable := newTable(schema.GroupKind{},
		column("Schema Finding", false, "an atomic list or map under status in the CRD"),
		column("Version", false, "the served version"),
		column("Severity", false, "error: conditions cannot be owned per type; warning: two writers would conflict"),
	)
	for _, f := range r.Schema.Findings {
		schemaTable.row(nil, f.Path, f.Version, f.Severity)
	}
	if err := out.printTables(stdout, tableOptions{}, managers, shared, schemaTable); err != nil {
		return err
	}
	if len(r.Managers) > 0 || len(r.SharedFields) > 0 || len(r.Schema.Findings) > 0 {
		fmt.Fprintln(stderr)
	}

	switch {
	case !r.Schema.Checked:
		fmt.Fprintf(stderr, "schema: not checked: %s\n", r.Schema.Unavailable)
	case len(r.Schema.Findings) == 0:
		fmt.Fprintf(stderr, "schema: %s has no atomic list or map under status\n", r.Schema.CRD)
	}
	group := func(what string, g fleet.ObjectGroup) {
		if g.Objects == 0 {
			return
		}
		fmt.Fprintf(stderr, "%s: %s", what, plural(g.Objects, "object", "objects"))
		if len(g.Examples) > 0 {
			fmt.Fprintf(stderr, ", such as %s", strings.Join(g.Examples, ", "))
		}
		fmt.Fprintln(stderr)
	}
	group("never tracked", r.Untracked)
	group("with "+ownership.BeforeFirstApplyManager, r.BeforeFirstApply)
	for _, u := range r.Unreadable {
		fmt.Fprintf(stderr, "unreadable: %s: %s\n", u.Object, u.Error)
	}
	for _, sv := range r.StaleVersions {
		fmt.Fprintf(stderr, "stale version: %s (%s): entries of %s on %s", sv.APIVersion, sv.Reason,
			strings.Join(sv.Managers, ", "), plural(sv.Objects, "object", "objects"))
		if len(sv.Examples) > 0 {
			fmt.Fprintf(stderr, ", such as %s", strings.Join(sv.Examples, ", "))
		}
		if sv.ApplyError != "" {
			fmt.Fprintf(stderr, "; every server-side apply to them fails: %s", sv.ApplyError)
		}
		fmt.Fprintln(stderr)
	}

	v := r.Verdict
	for _, m := range slices.Sorted(maps.Keys(v.Writers)) {
		fmt.Fprintf(stderr, "declared writer: %s writes %s\n", m, strings.Join(v.Writers[m], ", "))
	}
	switch {
	case !v.MigrationNeeded:
		fmt.Fprintln(stderr, "migrate: nothing to migrate: no legacy writer, no before-first-apply, no untracked object")
	case doc.MigrateCommand != "":
		fmt.Fprintf(stderr, "migrate: %s\n", doc.MigrateCommand)
	default:
		fmt.Fprintln(stderr, "migrate: no flags can be inferred yet: see unresolved")
	}
	for _, u := range v.Unresolved {
		fmt.Fprintf(stderr, "unresolved: %s\n", u)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	return nil
}

// counted renders field counts as name(objects).
func counted(fs []fleet.FieldCount) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s(%d)", f.Name, f.Objects))
	}
	return out
}

// groupShared folds the fields of one condition shared by the same
// managers into one "condition X" row, counting the objects of its most
// shared field; other fields stay as they are.
func groupShared(fields []fleet.SharedFieldAudit) []fleet.SharedFieldAudit {
	var out []fleet.SharedFieldAudit
	for _, f := range fields {
		if f.Condition == "" {
			out = append(out, f)
			continue
		}
		label := "condition " + f.Condition
		i := slices.IndexFunc(out, func(g fleet.SharedFieldAudit) bool {
			return g.Path == label && slices.Equal(g.Managers, f.Managers)
		})
		if i < 0 {
			out = append(out, fleet.SharedFieldAudit{Path: label, Condition: f.Condition, Managers: f.Managers, Objects: f.Objects})
			continue
		}
		out[i].Objects = max(out[i].Objects, f.Objects)
	}
	return out
}
