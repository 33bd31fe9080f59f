package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/statusapply/statusapply/ownership"
)

// Outcomes of one object in a migration, as the migrate output names them.
const (
	outcomeMigrated     = "migrated"
	outcomeWouldMigrate = "would migrate"
	outcomeUnchanged    = "unchanged"
	outcomeFailed       = "failed"
)

// migrateOutput is the JSON document of the migrate command, and what its
// table output is rendered from.
type migrateOutput struct {
	// DryRun is true unless --apply was given: nothing was written.
	DryRun  bool                `json:"dryRun"`
	Plan    planView            `json:"plan"`
	Objects []migrateObjectView `json:"objects"`
	Summary migrateSummary      `json:"summary"`
}

// planView echoes the plan, so that saved output says what was asked for.
type planView struct {
	Managers      map[string]string `json:"managers,omitempty"`
	Conditions    map[string]string `json:"conditions,omitempty"`
	ReleaseShared bool              `json:"releaseShared"`
}

// migrateObjectView is one object's outcome.
type migrateObjectView struct {
	objectRefView
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
}

// migrateSummary counts the outcomes; Changed counts "would migrate" in a
// dry run.
type migrateSummary struct {
	Total     int `json:"total"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
}

// newMigrateOutput starts the output of a run of plan.
func newMigrateOutput(plan ownership.Plan, dryRun bool) *migrateOutput {
	return &migrateOutput{
		DryRun:  dryRun,
		Plan:    planView{Managers: plan.Managers, Conditions: plan.Conditions, ReleaseShared: plan.ReleaseShared},
		Objects: []migrateObjectView{},
	}
}

// record adds one object's progress report and returns its outcome.
func (o *migrateOutput) record(p ownership.Progress) migrateObjectView {
	v := migrateObjectView{objectRefView: refView(p.Object)}
	o.Summary.Total++
	switch {
	case p.Err != nil:
		v.Outcome, v.Error = outcomeFailed, p.Err.Error()
		var oe *ownership.ObjectError
		if errors.As(p.Err, &oe) {
			v.objectRefView = refView(oe.Object)
		}
		o.Summary.Failed++
	case p.Result != nil:
		r := p.Result
		v.Seeded, v.Attempts = r.Seeded, r.Attempts
		before, after := viewOf(r.Before), viewOf(r.After)
		v.Before, v.After = &before, &after
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
	o.Objects = append(o.Objects, v)
	return v
}

// progressLine is the stderr line for one object of a list.
func progressLine(p ownership.Progress, v migrateObjectView) string {
	line := fmt.Sprintf("[%d/%d] %s: %s", p.Done, p.Total, p.Object, v.Outcome)
	if v.Error != "" {
		line += ": " + v.Error
	}
	return line
}

// writeMigrateTable prints, per object, the outcome and the ownership before
// and after (just once when unchanged), then a summary line.
func writeMigrateTable(w io.Writer, o *migrateOutput) error {
	for i, obj := range o.Objects {
		if i > 0 {
			fmt.Fprintln(w)
		}
		ref := ownership.ObjectRef{Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name}
		if obj.Error != "" {
			fmt.Fprintf(w, "%s: %s: %s\n", ref, obj.Outcome, obj.Error)
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
	}
	if len(o.Objects) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, o.summaryLine())
	return nil
}

// summaryLine counts the outcomes and says whether anything was written.
func (o *migrateOutput) summaryLine() string {
	s := o.Summary
	if o.DryRun {
		return fmt.Sprintf("dry run: %s, %d would change, %d unchanged, %d failed; nothing was written (add --apply to write)",
			plural(s.Total, "object", "objects"), s.Changed, s.Unchanged, s.Failed)
	}
	return fmt.Sprintf("%s: %d migrated, %d unchanged, %d failed",
		plural(s.Total, "object", "objects"), s.Changed, s.Unchanged, s.Failed)
}
