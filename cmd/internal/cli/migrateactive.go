package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/internal/components"
	"github.com/statusapply/statusapply/internal/durations"
	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/ownership"
)

// activeSource is a legacy writer that wrote some of the selected objects
// within the window, as audit reports it (fleet.AuditReport's
// ActiveLegacyWriters).
type activeSource struct {
	fleet.ActiveWriter
	// Source says the plan takes fields from it: a --from source, the
	// holder of a --condition type, or, with --release-shared, a writer
	// sharing a field. Its next write takes them back, and a migration
	// removes the entry that showed it active: an audit after --apply
	// would no longer see it.
	Source bool
}

// activeLegacyWriters returns the legacy writers that wrote some of objs
// within window before now, as audit counts them (fleet.AuditReport's
// ActiveLegacyWriters: Update entries on the status subresource, except
// before-first-apply, whose time is the first apply's, and Kubernetes
// components), sources of plan first. It reads the managedFields
// entries' times and decodes the field sets of active entries only, and
// only while it takes that to tell whether plan takes fields from them, so
// that a fleet costs a scan, not an audit.
func activeLegacyWriters[T metav1.Object](plan fleet.Plan, objs []T, now time.Time, window time.Duration) []activeSource {
	since := now.Add(-window)
	byManager := map[string]*activeSource{}
	for _, obj := range objs {
		entries := obj.GetManagedFields()
		counted := map[string]bool{}
		for i, e := range entries {
			if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != ownership.StatusSubresource ||
				e.Manager == ownership.BeforeFirstApplyManager || components.IsKubernetes(e.Manager) ||
				e.Time == nil || e.Time.Time.Before(since) {
				continue
			}
			a := byManager[e.Manager]
			if a == nil {
				a = &activeSource{ActiveWriter: fleet.ActiveWriter{Manager: e.Manager, Subresource: ownership.StatusSubresource}}
				byManager[e.Manager] = a
			}
			if !counted[e.Manager] {
				counted[e.Manager] = true
				a.Objects++
			}
			if e.Time.After(a.LastWrite.Time) {
				a.LastWrite = *e.Time
			}
			if !a.Source {
				a.Source = takesFrom(plan, entries, i)
			}
		}
	}
	out := make([]activeSource, 0, len(byManager))
	for _, a := range byManager {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b activeSource) int {
		if a.Source != b.Source {
			if a.Source {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Manager, b.Manager)
	})
	return out
}

// takesFrom reports whether plan takes status fields from the legacy entry
// entries[i] of one object: it is a --from source, it holds a --condition
// type, or, with --release-shared, it shares a status field with another
// entry. Entries that do not decode count as a source: migrate fails on
// them anyway, and refusing is the safe side.
func takesFrom(plan fleet.Plan, entries []metav1.ManagedFieldsEntry, i int) bool {
	if _, ok := plan.Managers[entries[i].Manager]; ok {
		return true
	}
	if len(plan.Conditions) == 0 && !plan.ReleaseShared {
		return false
	}
	decoded, err := inspect.Decode(entries[i : i+1])
	if err != nil {
		return true
	}
	e := decoded[0]
	for _, t := range e.ConditionTypes() {
		if _, ok := plan.Conditions[t]; ok {
			return true
		}
	}
	if !plan.ReleaseShared {
		return false
	}
	leaves := e.StatusFields().Leaves()
	for j := range entries {
		if j == i {
			continue
		}
		other, err := inspect.Decode(entries[j : j+1])
		if err == nil && !leaves.Intersection(other[0].StatusFields()).Empty() {
			return true
		}
	}
	return false
}

// activeSourcesError refuses an --apply that takes fields from legacy
// writers that are still active: they would take them back with their next
// write, and the migration removes what showed them active. Nil when no
// writer of active is a source of the plan.
func activeSourcesError(active []activeSource, window time.Duration, now time.Time) error {
	var parts []string
	for _, a := range active {
		if a.Source {
			parts = append(parts, describeActive(a, window, now))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("not migrating from a legacy writer still active: %s; switch it to apply (or stop it) first, "+
		"or its next write takes its fields back and the audit after the migration can no longer see it; "+
		"--allow-active migrates anyway, --window narrows what counts as active", strings.Join(parts, "; "))
}

// activeWarnings are the lines migrate prints on stderr, after its summary,
// for the legacy writers active within the window: a dry run says --apply
// will refuse the sources, allowed (--allow-active) that they were migrated
// from anyway.
func activeWarnings(active []activeSource, window time.Duration, now time.Time, dryRun, allowed bool) []string {
	var out []string
	for _, a := range active {
		line := "warning: legacy writer " + describeActive(a, window, now)
		switch {
		case !a.Source:
			line += ": the plan takes none of its fields, and its writes go on"
		case allowed:
			line += ": migrated from it anyway (--allow-active); its next write takes its fields back"
		case dryRun:
			line += ": --apply refuses to take its fields until it is switched to apply or stopped (or --allow-active)"
		}
		out = append(out, line)
	}
	return out
}

// describeActive says when a writer last wrote.
func describeActive(a activeSource, window time.Duration, now time.Time) string {
	return fmt.Sprintf("%s wrote %s within %s (last %s ago)", a.Manager, plural(a.Objects, "object", "objects"),
		durations.Short(window), duration.HumanDuration(now.Sub(a.LastWrite.Time)))
}
