package ssa

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/statusapply/statusapply/conflicts"
)

// Metric names, labels and their meaning are documented in
// docs/observability.md.

// metrics holds, per field manager and kind, what applies did. The collectors
// are registered with the Registerer given to NewApplier (controller-runtime's
// metrics registry by default); several Appliers in one process share them.
type metrics struct {
	applies   *prometheus.CounterVec
	skipped   *prometheus.CounterVec
	conflicts *prometheus.CounterVec // also labelled by class
	retries   *prometheus.CounterVec
	reads     *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	pending   *prometheus.GaugeVec
}

// Conflict classes, the values of statusapply_conflicts_total's class label.
const (
	conflictClassFieldManager = "field-manager"
	conflictClassStale        = "stale-resource-version"
	conflictClassOther        = "other"
)

var (
	objectLabels   = []string{"manager", "group", "kind"}
	conflictLabels = []string{"manager", "group", "kind", "class"}
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		applies:   counter("statusapply_applies_total", "Server-side applies sent.", objectLabels),
		skipped:   counter("statusapply_noop_skips_total", "Applies not sent because they would change nothing.", objectLabels),
		conflicts: counter("statusapply_conflicts_total", "Applies answered with 409 Conflict, by class.", conflictLabels),
		retries:   counter("statusapply_retries_total", "Guarded applies sent again after a stale resourceVersion.", objectLabels),
		reads:     counter("statusapply_reads_total", "Objects read from the API server (guarded retries, missing managedFields).", objectLabels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "statusapply_apply_duration_seconds",
			Help:    "Latency of one server-side apply request, from sending it to its answer, whatever the answer.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14), // 1 ms to about 8 s
		}, objectLabels),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "statusapply_pending_entries",
			Help: "Entries the last Flush that wrote for a manager and kind left queued (failed or held back).",
		}, objectLabels),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.applies, err = register(reg, m.applies); err != nil {
		return nil, err
	}
	if m.skipped, err = register(reg, m.skipped); err != nil {
		return nil, err
	}
	if m.conflicts, err = register(reg, m.conflicts); err != nil {
		return nil, err
	}
	if m.retries, err = register(reg, m.retries); err != nil {
		return nil, err
	}
	if m.reads, err = register(reg, m.reads); err != nil {
		return nil, err
	}
	if m.latency, err = register(reg, m.latency); err != nil {
		return nil, err
	}
	if m.pending, err = register(reg, m.pending); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c with reg, or returns the collector of the same
// description another Applier registered first, so that Appliers share them.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

func counter(name, help string, labels []string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func (m *metrics) labels(t Target) prometheus.Labels {
	return prometheus.Labels{"manager": t.Manager, "group": t.GVK.Group, "kind": t.GVK.Kind}
}

// conflict counts a 409 of t in its class.
func (m *metrics) conflict(t Target, err error) {
	class := conflictClassOther
	switch conflicts.Classify(err) {
	case conflicts.ClassFieldManagerConflict:
		class = conflictClassFieldManager
	case conflicts.ClassStale:
		class = conflictClassStale
	}
	m.conflicts.With(prometheus.Labels{"manager": t.Manager, "group": t.GVK.Group, "kind": t.GVK.Kind, "class": class}).Inc()
}

// RecordPending sets statusapply_pending_entries for every field manager and
// kind among flushed, the targets a Flush tried to write: how many of them it
// left queued (failed or held back) in pending. Batches call it after each
// Flush.
func (a *Applier) RecordPending(flushed, pending []Target) {
	counts := map[[3]string]int{}
	for _, t := range flushed {
		counts[[3]string{t.Manager, t.GVK.Group, t.GVK.Kind}] += 0
	}
	for _, t := range pending {
		counts[[3]string{t.Manager, t.GVK.Group, t.GVK.Kind}]++
	}
	for k, n := range counts {
		a.metrics.pending.With(prometheus.Labels{"manager": k[0], "group": k[1], "kind": k[2]}).Set(float64(n))
	}
}
