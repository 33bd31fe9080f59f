package cli

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/statusapply/statusapply/fleet"
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

// activeLegacyWriters audits objs as the audit command does, with window
// before now, and returns the legacy writers active within it, sources of
// plan first. The audit reads nothing: objs are in memory.
func activeLegacyWriters(plan fleet.Plan, objs []*unstructured.Unstructured, now time.Time, window time.Duration) ([]activeSource, error) {
	report, err := fleet.Audit(objectsOf(objs), fleet.AuditOptions{Now: now, Window: window})
	if err != nil {
		return nil, err
	}
	var out []activeSource
	for _, w := range report.ActiveLegacyWriters {
		out = append(out, activeSource{ActiveWriter: w, Source: isSource(plan, report, w.Manager)})
	}
	slices.SortStableFunc(out, func(a, b activeSource) int {
		switch {
		case a.Source == b.Source:
			return 0
		case a.Source:
			return -1
		}
		return 1
	})
	return out, nil
}

// isSource reports whether plan takes status fields from the legacy writer
// manager on some of the audited objects.
func isSource(plan fleet.Plan, report *fleet.AuditReport, manager string) bool {
	if _, ok := plan.Managers[manager]; ok {
		return true
	}
	for _, m := range report.Managers {
		if m.Manager != manager || !m.Legacy {
			continue
		}
		for _, c := range m.Conditions {
			if _, ok := plan.Conditions[c.Name]; ok {
				return true
			}
		}
	}
	if plan.ReleaseShared {
		for _, s := range report.SharedFields {
			if slices.Contains(s.Managers, manager) {
				return true
			}
		}
	}
	return false
}

// objectsOf yields objs for fleet.Audit.
func objectsOf(objs []*unstructured.Unstructured) iter.Seq2[metav1.Object, error] {
	return func(yield func(metav1.Object, error) bool) {
		for _, o := range objs {
			if !yield(o, nil) {
				return
			}
		}
	}
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
		fleet.ShortDuration(window), duration.HumanDuration(now.Sub(a.LastWrite.Time)))
}
