package shadow

import (
	"errors"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// Metric names, labels and meanings are documented in docs/observability.md.

// metrics count compared entries by outcome, and what diverged.
type metrics struct {
	entries, divergences *prometheus.CounterVec
}

// outcome is what comparing one entry came to.
type outcome string

const (
	agreed   outcome = "agreed"
	diverged outcome = "diverged"
	failed   outcome = "failed"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		entries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "statusapply_shadow_entries_total",
			Help: "Shadow-mode entries compared with the live object by a dry run, by outcome: agreed, diverged or failed."},
			[]string{"manager", "group", "kind", "outcome"}),
		divergences: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "statusapply_shadow_divergences_total",
			Help: "Conditions and fields shadow-mode entries would change on the live object, once per compared entry and label set."},
			[]string{"manager", "group", "kind", "condition_type", "field", "change"}),
	}
	for _, c := range []**prometheus.CounterVec{&m.entries, &m.divergences} {
		err := reg.Register(*c)
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			// Another Mode registered it first: share it.
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				*c, err = existing, nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// entry counts one compared entry of t.
func (m *metrics) entry(t ssa.Target, o outcome) {
	m.entries.With(prometheus.Labels{"manager": t.Manager, "group": t.GVK.Group, "kind": t.GVK.Kind, "outcome": string(o)}).Inc()
}

// diverged counts one diverging entry of t and each of d's label sets once.
func (m *metrics) diverged(t ssa.Target, d batcher.Divergence) {
	m.entry(t, diverged)
	for _, l := range labels(d) {
		m.divergences.With(prometheus.Labels{"manager": t.Manager, "group": t.GVK.Group, "kind": t.GVK.Kind,
			"condition_type": l.conditionType, "field": l.field, "change": l.change}).Inc()
	}
}

// divergenceLabels are the labels of one divergence besides manager, group and
// kind. Values come from the schema or condition types, never field values, so
// the series stay bounded. For a condition, conditionType is its type and field
// is "" when the whole condition would be added or removed, else one differing
// field ("status", "reason", ...). For any other field, conditionType is "" and
// field is its path cut after the second field name and before any list key or
// value (".status.phase", ".metadata.labels").
type divergenceLabels struct {
	conditionType, field, change string
}

// labels are the metric labels of d's items, once each.
func labels(d batcher.Divergence) []divergenceLabels {
	var out []divergenceLabels
	add := func(l divergenceLabels) {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	for _, c := range d.Conditions {
		if c.Change != batcher.Changed {
			add(divergenceLabels{conditionType: c.Type, change: string(c.Change)})
			continue
		}
		for _, f := range c.Fields {
			add(divergenceLabels{conditionType: c.Type, field: f, change: string(batcher.Changed)})
		}
	}
	for _, f := range d.Fields {
		add(divergenceLabels{field: labelPath(f.Path), change: string(f.Change)})
	}
	return out
}

// labelPath cuts p after its second field name and before any list key or
// value, so that the schema bounds the label, whatever the data.
func labelPath(p fieldpath.Path) string {
	var cut fieldpath.Path
	for _, pe := range p {
		if pe.FieldName == nil || len(cut) == 2 {
			break
		}
		cut = append(cut, pe)
	}
	return cut.String()
}
