package ssa

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts, per field manager and kind, what applies did. The counters
// are registered with the Registerer given to NewApplier (controller-runtime's
// metrics registry by default); several Appliers in one process share them.
type metrics struct {
	applies   *prometheus.CounterVec
	skipped   *prometheus.CounterVec
	conflicts *prometheus.CounterVec
	retries   *prometheus.CounterVec
	reads     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		applies:   counter("statusapply_applies_total", "Server-side applies sent."),
		skipped:   counter("statusapply_noop_skips_total", "Applies not sent because they would change nothing."),
		conflicts: counter("statusapply_conflicts_total", "Applies answered with 409 Conflict."),
		retries:   counter("statusapply_retries_total", "Guarded applies sent again after a stale resourceVersion."),
		reads:     counter("statusapply_reads_total", "Objects read from the API server (guarded retries, missing managedFields)."),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []**prometheus.CounterVec{&m.applies, &m.skipped, &m.conflicts, &m.retries, &m.reads} {
		if err := reg.Register(*c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, err
			}
			*c = existing
		}
	}
	return m, nil
}

func counter(name, help string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"manager", "group", "kind"})
}

func (m *metrics) labels(t Target) prometheus.Labels {
	return prometheus.Labels{"manager": t.Manager, "group": t.GVK.Group, "kind": t.GVK.Kind}
}
