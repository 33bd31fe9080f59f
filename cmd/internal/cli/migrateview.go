package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
)

// Outcomes of one object in a migration, as the migrate output names them.
const (
	outcomeMigrated     = "migrated"
	outcomeWouldMigrate = "would migrate"
	outcomeUnchanged    = "unchanged"
	outcomeFailed       = "failed"
)

// migrateOutput is the document of the migrate command, and what its
// tables are rendered from.
type migrateOutput struct {
	typeMeta `json:",inline"`
	// DryRun is true unless --apply was given: nothing was written.
	DryRun  bool                `json:"dryRun"`
	Plan    planView            `json:"plan"`
	Summary migrateSummary      `json:"summary"`
	Items   []migrateObjectView `json:"items"`
}

// planView echoes the plan, so that saved output says what was asked for.
type planView struct {
	Managers      map[string]string `json:"managers,omitempty"`
	Conditions    map[string]string `json:"conditions,omitempty"`
	ReleaseShared bool              `json:"releaseShared"`
	// StaleVersions and DropUntranslatable are --stale-versions and
	// --drop-untranslatable.
	StaleVersions      bool `json:"staleVersions,omitempty"`
	DropUntranslatable bool `json:"dropUntranslatable,omitempty"`
}

// migrateObjectView is one object's outcome.
type migrateObjectView struct {
	typeMeta `json:",inline"`
	Object   objectRefView `json:"object"`
	// Outcome is migrated, would migrate, unchanged or failed.
	Outcome string `json:"outcome"`
	// Seeded says the object had no managedFields and the API server first
	// attributed its fields to before-first-apply.
	Seeded   bool   `json:"seeded,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	Error    string `json:"error,omitempty"`
	// Before and After are the status ownership before and after (or, in a
	// dry run, as it would be after); absent for failed objects.
	Before *ownershipView `json:"before,omitempty"`
	After  *ownershipView `json:"after,omitempty"`

	obj runtime.Object
	// result fills Before and After when an output shows them (fillViews):
	// a list's table does not, and building them for every object of a
	// fleet costs more than the rest of a dry run.
	result *fleet.Result
}

// migrateSummary counts the outcomes; Changed counts "would migrate" in a
// dry run. NotAttempted counts the objects left out after the API server
// could not be reached; they are not among the items.
type migrateSummary struct {
	Total        int `json:"total"`
	Changed      int `json:"changed"`
	Unchanged    int `json:"unchanged"`
	Failed       int `json:"failed"`
	NotAttempted int `json:"notAttempted,omitempty"`
}

// newMigrateOutput starts the output of a run of plan.
func newMigrateOutput(plan fleet.Plan, dryRun bool) *migrateOutput {
	return &migrateOutput{
		typeMeta: documentType("MigrationList"),
		DryRun:   dryRun,
		Plan: planView{Managers: plan.Managers, Conditions: plan.Conditions, ReleaseShared: plan.ReleaseShared,
			StaleVersions: plan.RewriteStaleVersions, DropUntranslatable: plan.DropUntranslatable},
		Items: []migrateObjectView{},
	}
}

// record adds the progress report of obj and returns its outcome.
func (o *migrateOutput) record(p fleet.Progress, obj runtime.Object) migrateObjectView {
	v := migrateObjectView{typeMeta: documentType("Migration"), Object: refView(obj), obj: obj}
	o.Summary.Total++
	switch {
	case p.Err != nil:
		v.Outcome, v.Error = outcomeFailed, p.Err.Error()
		o.Summary.Failed++
	case p.Result != nil:
		r := p.Result
		v.Seeded, v.Attempts, v.result = r.Seeded, r.Attempts, r
		switch {
		case r.Changed && r.DryRun:
			v.Outcome = outcomeWouldMigrate
		case r.Changed:
			v.Outcome = outcomeMigrated
		default:
			v.Outcome = outcomeUnchanged
		}
		if r.Changed {
			o.Summary.Changed++
		} else {
			o.Summary.Unchanged++
		}
	}
	o.Items = append(o.Items, v)
	return v
}

// fillViews sets every item's ownership before and after.
func (o *migrateOutput) fillViews() {
	for i := range o.Items {
		v := &o.Items[i]
		if v.result == nil || v.Before != nil {
			continue
		}
		before, after := viewOf(v.result.Before), viewOf(v.result.After)
		v.Before, v.After = &before, &after
	}
}

// skip counts an object that was not attempted.
func (o *migrateOutput) skip() {
	o.Summary.Total++
	o.Summary.NotAttempted++
}

// withoutFailures returns a copy of o without its failed objects.
func (o *migrateOutput) withoutFailures() *migrateOutput {
	c := *o
	c.Items = slices.DeleteFunc(slices.Clone(o.Items), func(v migrateObjectView) bool { return v.Error != "" })
	return &c
}

// changed returns the objects that changed, or would in a dry run, for
// -o name.
func (o *migrateOutput) changed() []runtime.Object {
	var out []runtime.Object
	for _, v := range o.Items {
		if v.Outcome == outcomeMigrated || v.Outcome == outcomeWouldMigrate {
			out = append(out, v.obj)
		}
	}
	return out
}

// progressLine is the progress report of one object; a failure's error is
// printed with the output, once.
func progressLine(p fleet.Progress, v migrateObjectView) string {
	return fmt.Sprintf("[%d/%d] %s: %s", p.Done, p.Total, v.Object.ref(), v.Outcome)
}

// writeMigrateFailures prints one line per failed object, for outputs that
// do not list them (-o name, documents: on stderr).
func writeMigrateFailures(w io.Writer, o *migrateOutput) {
	for _, v := range o.Items {
		if v.Error != "" {
			fmt.Fprintf(w, "%s: %s: %s\n", v.Object.ref(), v.Outcome, v.Error)
		}
	}
}

// writeMigrateTable prints, per object, the outcome and the ownership before
// and after (just once when unchanged), followed by a blank line. Without
// details it prints only the failed objects, one line each.
func writeMigrateTable(w io.Writer, o *migrateOutput, details bool) error {
	for _, obj := range o.Items {
		ref := obj.Object.ref()
		if obj.Error != "" {
			fmt.Fprintf(w, "%s: %s: %s\n", ref, obj.Outcome, obj.Error)
			if details {
				fmt.Fprintln(w)
			}
			continue
		}
		if !details {
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", ref, obj.Outcome)
		if obj.Seeded {
			fmt.Fprintf(w, "  (it had no managedFields: the API server attributed its fields to %s first)\n",
				ownership.BeforeFirstApplyManager)
		}
		sections := []struct {
			title string
			view  *ownershipView
		}{{"before", obj.Before}, {"after", obj.After}}
		if obj.Outcome == outcomeUnchanged {
			sections = sections[:1]
			sections[0].title = "ownership"
		}
		for _, s := range sections {
			fmt.Fprintf(w, "  %s:\n", s.title)
			if _, err := (ownershipTable{indent: "    "}).write(w, *s.view); err != nil {
				return err
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeMigrateLines prints one table row per object (-o wide): the outcome,
// the attempts, and who owned which status conditions and fields before and
// after.
func writeMigrateLines(w io.Writer, out *outputFlags, o *migrateOutput, allNamespaces bool) error {
	tables := newTablesByKind(
		column("Name", false, "the object's name"),
		column("Outcome", false, "migrated, would migrate, unchanged or failed"),
		column("Attempts", false, "read-rewrite-write rounds"),
		column("Seeded", false, "whether the object had no managedFields and was seeded first"),
		column("Before", false, "each status-owning manager with its conditions and fields, before"),
		column("After", false, "the same after the migration (or as it would be, in a dry run)"),
		column("Error", false, "why the object failed"),
	)
	for _, v := range o.Items {
		attempts, seeded := "", ""
		if v.Attempts > 0 {
			attempts = strconv.Itoa(v.Attempts)
		}
		if v.Error == "" {
			seeded = strconv.FormatBool(v.Seeded)
		}
		tables.of(v.obj).row(v.obj, v.Object.Name, v.Outcome, attempts, seeded,
			statusOwners(v.Before), statusOwners(v.After), v.Error)
	}
	return tables.print(w, out, allNamespaces)
}

// statusOwners sums up a view in one cell: each manager owning status, with
// what it owns (MANAGER=A,B,.status.phase), separated by spaces.
func statusOwners(v *ownershipView) string {
	if v == nil {
		return ""
	}
	var parts []string
	for _, m := range v.Managers {
		if !m.ownsStatus() {
			continue
		}
		owned := []string{}
		for _, c := range ownedCells(m) {
			if c.condition != "" {
				owned = append(owned, c.condition)
			} else {
				owned = append(owned, c.path)
			}
		}
		parts = append(parts, m.Manager+"="+strings.Join(owned, ","))
	}
	return strings.Join(parts, " ")
}

// summaryLine counts the outcomes and says whether anything was written.
func (o *migrateOutput) summaryLine() string {
	s := o.Summary
	skipped := ""
	if s.NotAttempted > 0 {
		skipped = fmt.Sprintf(", %d not attempted", s.NotAttempted)
	}
	if o.DryRun {
		return fmt.Sprintf("dry run: %s, %d would change, %d unchanged, %d failed%s; nothing was written (add --apply to write)",
			plural(s.Total, "object", "objects"), s.Changed, s.Unchanged, s.Failed, skipped)
	}
	return fmt.Sprintf("%s: %d migrated, %d unchanged, %d failed%s",
		plural(s.Total, "object", "objects"), s.Changed, s.Unchanged, s.Failed, skipped)
}
