package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
)

// noManagedFieldsNote explains an object without managedFields. Saying
// "nobody owns anything" would be wrong: the server simply recorded nothing,
// and its first apply will attribute every existing field to
// before-first-apply.
const noManagedFieldsNote = "no managedFields: the API server recorded no field ownership for this object " +
	"(written without tracking, or cleared), so who owns its status is unknown, which is not the same as owned by nobody; " +
	"the first apply attributes every existing field to " + ownership.BeforeFirstApplyManager +
	" (migrate seeds that and hands the fields over)"

// noManagedFieldsCell marks an object without managedFields in a table;
// the note after the table (untrackedNote) explains it once, so that a long
// cell does not widen every row past the terminal.
const noManagedFieldsCell = "no managedFields (see the note below)"

// untrackedNote explains, on stderr after a table, the n objects marked with
// noManagedFieldsCell.
func untrackedNote(n int) string {
	return fmt.Sprintf("note: %s without managedFields: who owns its status is unknown, which is not the same as owned by nobody; "+
		"the first apply attributes every existing field to %s (migrate seeds that and hands the fields over)",
		plural(n, "object", "objects"), ownership.BeforeFirstApplyManager)
}

const ownersLong = `For each object, show which field manager owns which status condition type
and which other status fields: one row per object, managedFields entry, and
condition type or field, as kubectl get prints objects. The operation is
Apply for server-side apply and Update for create, update and patches.

Legacy writers (an Update on the status subresource, or the API server's
before-first-apply attribution) are marked in NOTES: their fields are what
"migrate" hands to apply managers. Writes by Kubernetes' own components
(kube-apiserver, kube-controller-manager, ...) are not legacy writers. A
condition or field owned by more than one manager says with whom it is
shared. Objects are read from the API server, never from a cache, and an
object without managedFields is reported as such.

An entry recorded in an API version the kind's CRD no longer serves is
marked, whether or not it owns status fields: once the version is removed
from the CRD, every server-side apply to the object fails. The note after
the table says which "migrate --stale-versions" command rewrites such
entries to the storage version.

Other entries that own no status field (typically whoever created the
object) are left out of tables and counted on stderr; --all-managers lists
them. -o json
and -o yaml print a StatusOwnershipList (cli.statusapply.io/v1alpha1) with
every entry.`

const ownersExample = `  statusapply owners widget/w1 -n shop
  statusapply owners widgets -A -o wide
  statusapply owners widgets -l app=web -o yaml
  statusapply owners widgets -o jsonpath='{.items[*].object.name}'
  kubectl statusapply owners widgets.demo.statusapply.io -l app=web`

// ownersList is the document of the owners command.
type ownersList struct {
	typeMeta `json:",inline"`
	Items    []objectOwnersView `json:"items"`
	// Errors are the named objects that could not be read or decoded.
	Errors []objectErrorView `json:"errors,omitempty"`
}

// objectOwnersView is one object in the owners document.
type objectOwnersView struct {
	typeMeta `json:",inline"`
	Object   objectRefView `json:"object"`
	// ManagedFields is false for an object that carries none; Note then
	// explains what that means.
	ManagedFields bool   `json:"managedFields"`
	Note          string `json:"note,omitempty"`
	ownershipView `json:",inline"`

	obj runtime.Object
}

// objectErrorView is an object the command could not handle.
type objectErrorView struct {
	Object string `json:"object"`
	Error  string `json:"error"`
}

// newOwnersCommand returns the owners command.
func newOwnersCommand(cluster *clusterAccess) *cobra.Command {
	var (
		sel         objectFlags
		allManagers bool
	)
	out := newOutputFlags()
	cmd := &cobra.Command{
		Use:               "owners TYPE[/NAME] [NAME...]",
		Short:             "Show who owns which status condition type and field of objects",
		Long:              ownersLong,
		Example:           ownersExample,
		Args:              resourceArgs,
		ValidArgsFunction: completeObjects(cluster),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			s, err := sel.selectObjects(cluster, args)
			if err != nil {
				return err
			}
			result, errs := inspectAll(s.Objects, s.Errs)
			if out.mode() != modeName && len(result.Items) > 0 {
				c, err := cluster.client()
				if err != nil {
					return err
				}
				for _, why := range markStale(cmd.Context(), c, &result) {
					if out.mode() != modeDocument {
						fmt.Fprintln(cmd.ErrOrStderr(), why)
					}
				}
			}
			if s.ListErr != nil {
				errs = append(errs, s.ListErr)
				result.Errors = append(result.Errors, errorView(s.ListErr))
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if out.mode() != modeDocument && !s.Named {
				if len(s.Objects) == 0 {
					fmt.Fprintln(stderr, s.describeEmpty())
				}
				for _, line := range s.emptyLists() {
					fmt.Fprintln(stderr, line)
				}
			}
			switch out.mode() {
			case modeDocument:
				err = out.printDocument(stdout, result)
			case modeName:
				err = printNames(stdout, objects(s.Objects))
			default:
				var hidden int
				hidden, err = writeOwnersTable(stdout, out, result, allManagers, sel.allNamespaces)
				if n := untracked(result); n > 0 {
					fmt.Fprintln(stderr, untrackedNote(n))
				}
				if note := staleNote(displayName(cmd), args, s, result); note != "" {
					fmt.Fprintln(stderr, note)
				}
				switch {
				case hidden == 1:
					fmt.Fprintln(stderr, "1 managedFields entry owns no status field and is not shown; --all-managers lists it")
				case hidden > 1:
					fmt.Fprintf(stderr, "%d managedFields entries own no status field and are not shown; --all-managers lists them\n", hidden)
				}
			}
			if err != nil {
				return err
			}
			return errors.Join(errs...)
		},
	}
	sel.addFlags(cmd)
	out.addFlags(cmd)
	cmd.Flags().BoolVar(&allManagers, "all-managers", false,
		"also list managedFields entries that own no status field (tables; documents always list all)")
	return cmd
}

// objects converts unstructured objects for the printers.
func objects(us []*unstructured.Unstructured) []runtime.Object {
	out := make([]runtime.Object, 0, len(us))
	for _, u := range us {
		out = append(out, u)
	}
	return out
}

// untracked counts the objects of result without managedFields.
func untracked(result ownersList) int {
	n := 0
	for _, item := range result.Items {
		if !item.ManagedFields {
			n++
		}
	}
	return n
}

// inspectAll decodes every object's managedFields. An object without any is
// reported with a note, not as an error. Read and decode failures become
// error entries of the output and are returned, for the exit code.
func inspectAll(objs []*unstructured.Unstructured, readErrs []error) (ownersList, []error) {
	result := ownersList{typeMeta: documentType("StatusOwnershipList"), Items: []objectOwnersView{}}
	errs := slices.Clone(readErrs)
	for _, u := range objs {
		o, err := ownership.Inspect(u)
		item := objectOwnersView{typeMeta: documentType("StatusOwnership"), Object: refView(u), obj: u}
		switch {
		case errors.Is(err, ownership.ErrNoManagedFields):
			item.Note, item.ownershipView = noManagedFieldsNote, viewOf(nil)
		case err != nil:
			errs = append(errs, err)
			continue
		default:
			item.ManagedFields, item.ownershipView = true, viewOf(o)
		}
		result.Items = append(result.Items, item)
	}
	for _, err := range errs {
		result.Errors = append(result.Errors, errorView(err))
	}
	return result, errs
}

// errorView names the object of an *ownership.ObjectError when there is one.
func errorView(err error) objectErrorView {
	if oe, ok := errors.AsType[*ownership.ObjectError](err); ok {
		return objectErrorView{Object: oe.Object.String(), Error: err.Error()}
	}
	return objectErrorView{Error: err.Error()}
}

// ownersColumns are the columns of the owners table.
func ownersColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		column("Name", false, "the object's name"),
		column("Manager", false, "the field manager of the managedFields entry"),
		column("Operation", false, "Apply (server-side apply) or Update (create, update, patches)"),
		column("Subresource", false, "status for writes through /status"),
		column("Owns", false, "a condition type, a status field, or the whole atomic conditions list"),
		column("API Version", true, "the version the entry's fields are recorded in"),
		column("Updated", true, "how long ago the manager last changed one of its fields"),
		column("Notes", false, "legacy writer, a version the CRD no longer serves, and with whom the condition or field is shared"),
	}
}

// writeOwnersTable prints one row per object, entry and condition type or
// status field, and returns how many entries it left out for owning no
// status field.
func writeOwnersTable(w io.Writer, out *outputFlags, result ownersList, allManagers, allNamespaces bool) (hidden int, err error) {
	tables := newTablesByKind(ownersColumns()...)
	now := time.Now()
	for _, item := range result.Items {
		t := tables.of(item.obj)
		name := item.Object.Name
		if !item.ManagedFields {
			t.row(item.obj, name, "", "", "", "<unknown>", "", "", noManagedFieldsCell)
			continue
		}
		shown := 0
		for _, m := range item.Managers {
			owned := ownedCells(m)
			if len(owned) == 0 {
				if !allManagers && m.StaleVersion == "" {
					hidden++
					continue
				}
				owned = []ownedCell{{}}
			}
			shown++
			age := ""
			if ts, err := time.Parse(time.RFC3339, m.Time); err == nil {
				age = duration.HumanDuration(now.Sub(ts))
			}
			for _, c := range owned {
				t.row(item.obj, name, m.Manager, m.Operation, m.Subresource, c.label, m.APIVersion, age,
					rowNotes(m, c, item.SharedStatusFields))
			}
		}
		if shown == 0 {
			t.row(item.obj, name, "", "", "", "", "", "", "no manager owns status fields")
		}
	}
	return hidden, tables.print(w, out, allNamespaces)
}

// ownedCell is one thing an entry owns, as a table row shows it.
type ownedCell struct {
	label string
	// condition is the condition type of a condition row.
	condition string
	// path is the field of a field row (or .status.conditions for the
	// whole atomic list).
	path string
}

// ownedCells lists what m owns in status: its condition types, the whole
// conditions list, then its other status fields.
func ownedCells(m managerView) []ownedCell {
	var out []ownedCell
	for _, c := range m.Conditions {
		out = append(out, ownedCell{label: "condition " + c, condition: c})
	}
	if m.WholeConditionsList {
		out = append(out, ownedCell{label: "conditions (whole list)", path: ownership.ConditionsPath().String()})
	}
	for _, p := range m.OtherStatusFields {
		out = append(out, ownedCell{label: p, path: p})
	}
	return out
}

// rowNotes is the NOTES cell of one row: whether the manager is a legacy
// writer, and who else owns the row's condition or field.
func rowNotes(m managerView, c ownedCell, shared []sharedView) string {
	var parts []string
	if m.Legacy {
		parts = append(parts, "legacy writer")
	}
	if m.StaleVersion != "" {
		parts = append(parts, staleCell(m))
	}
	var with []string
	for _, s := range shared {
		if !slices.Contains(s.Managers, m.Manager) {
			continue
		}
		if (c.condition != "" && s.Condition == c.condition) || (c.path != "" && s.Path == c.path) {
			for _, other := range s.Managers {
				if other != m.Manager && !slices.Contains(with, other) {
					with = append(with, other)
				}
			}
		}
	}
	if len(with) > 0 {
		slices.Sort(with)
		parts = append(parts, "shared with "+strings.Join(with, ", "))
	}
	if c == (ownedCell{}) {
		parts = append(parts, "no status field")
	}
	return strings.Join(parts, "; ")
}

// markStale sets StaleVersion on every entry of result recorded in an API
// version its kind's CRD no longer serves (fleet.Versions.Staleness, as
// audit and migrate --stale-versions decide). A kind without a CRD has
// nothing to mark; a CRD that cannot be read leaves its kind unmarked and is
// returned as a note, the objects being listed all the same.
func markStale(ctx context.Context, c client.Client, result *ownersList) (notes []string) {
	versions := map[schema.GroupKind]*fleet.Versions{}
	for i := range result.Items {
		item := &result.Items[i]
		gk := item.obj.GetObjectKind().GroupVersionKind().GroupKind()
		v, done := versions[gk]
		if !done {
			v, notes = kindVersionsOf(ctx, c, gk, notes)
			versions[gk] = v
		}
		if v == nil {
			continue
		}
		for j := range item.Managers {
			if m := &item.Managers[j]; m.APIVersion != "" {
				m.StaleVersion = v.Staleness(m.APIVersion)
			}
		}
	}
	return notes
}

// kindVersionsOf reads the versions of gk's CRD, or nil, adding to notes
// why when it has a CRD that cannot be read.
func kindVersionsOf(ctx context.Context, c client.Client, gk schema.GroupKind, notes []string) (*fleet.Versions, []string) {
	mapping, err := c.RESTMapper().RESTMapping(gk)
	if err == nil {
		var crd *apiextensionsv1.CustomResourceDefinition
		if crd, err = readCRD(ctx, c, mapping); err == nil {
			var v *fleet.Versions
			if v, err = fleet.VersionsOf(crd); err == nil {
				return v, notes
			}
		}
	}
	if _, notCustom := errors.AsType[*notCustomError](err); notCustom {
		return nil, notes
	}
	return nil, append(notes, fmt.Sprintf("note: API versions of %s not checked: %v", gk, err))
}

// staleCell is the NOTES part of an entry recorded in a version the CRD no
// longer serves.
func staleCell(m managerView) string {
	version := m.APIVersion[strings.LastIndex(m.APIVersion, "/")+1:]
	if m.StaleVersion == fleet.StaleRemoved {
		return "recorded in " + version + ", removed from the CRD"
	}
	return "recorded in " + version + ", no longer served"
}

// staleNote explains, on stderr after a table, the entries of result marked
// with staleCell, and gives the migrate command, run as name, that rewrites
// them for the objects args and s selected; "" when there are none.
func staleNote(name string, args []string, s *selection, result ownersList) string {
	var entries, removed int
	namespaced := false
	for _, item := range result.Items {
		for _, m := range item.Managers {
			if m.StaleVersion == "" {
				continue
			}
			entries++
			if m.StaleVersion == fleet.StaleRemoved {
				removed++
			}
			namespaced = namespaced || item.Object.Namespace != ""
		}
	}
	if entries == 0 {
		return ""
	}
	parts := append([]string{"migrate"}, args...)
	switch {
	case s.allNamespaces:
		parts = append(parts, "-A")
	case namespaced:
		parts = append(parts, "-n", s.namespace)
	}
	if s.selector != "" {
		parts = append(parts, "-l", s.selector)
	}
	parts = append(parts, "--stale-versions")
	for i, p := range parts {
		parts[i] = shellQuote(p)
	}
	what := "server-side applies work until the version is removed from the CRD, then fail"
	if removed > 0 {
		what = fmt.Sprintf("every server-side apply to an object with an entry in a removed version fails with %q", fleet.ApplyError)
	}
	return fmt.Sprintf("note: %s recorded in API versions the CRD no longer serves: %s; "+
		"to rewrite them to the storage version, keeping every owner, run %s (a dry run), then the same with --apply",
		plural(entries, "managedFields entry", "managedFields entries"), what, name+" "+strings.Join(parts, " "))
}
