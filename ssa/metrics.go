package ssa

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/statusapply/statusapply/conflicts"
)

// Metric names, labels and meanings are documented in docs/observability.md.

// metrics counts what applies did per field manager and kind; the Appliers of
// one process share its collectors (see register).
type metrics struct {
	applies   *prometheus.CounterVec
	skipped   *prometheus.CounterVec
	conflicts *prometheus.CounterVec // also labelled by class
	retries   *prometheus.CounterVec
	reads     *prometheus.CounterVec
	// recoveries counts fields taken back from before-first-apply.
	recoveries *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	pending    *prometheus.GaugeVec

	// targets caches series per (manager, group, kind), as With hashes labels
	// on every call; the map is replaced, never modified, so reads take no lock.
	targets   atomic.Pointer[map[[3]string]*targetMetrics]
	targetsMu sync.Mutex
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
		recoveries: counter("statusapply_ownership_recoveries_total",
			"managedFields rewrites by which a manager took back from before-first-apply the fields of its intent.", objectLabels),
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
	register(reg, &m.applies, &err)
	register(reg, &m.skipped, &err)
	register(reg, &m.conflicts, &err)
	register(reg, &m.retries, &err)
	register(reg, &m.reads, &err)
	register(reg, &m.recoveries, &err)
	register(reg, &m.latency, &err)
	register(reg, &m.pending, &err)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// register registers *c with reg, or takes the collector of the same
// description another Applier registered first, so that Appliers share them.
// It does nothing once *err is set, and sets it on a failure.
func register[C prometheus.Collector](reg prometheus.Registerer, c *C, err *error) {
	if *err != nil {
		return
	}
	e := reg.Register(*c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(e, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			*c, e = existing, nil
		}
	}
	*err = e
}

func counter(name, help string, labels []string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// targetMetrics are the series of one (manager, group, kind).
type targetMetrics struct {
	labels                           prometheus.Labels // callers must not modify it
	applies, skipped, retries, reads lazySeries[prometheus.Counter]
	recoveries                       lazySeries[prometheus.Counter]
	latency                          lazySeries[prometheus.Observer]
	pending                          lazySeries[prometheus.Gauge]
}

// lazySeries is one series of a vector, created on first use as With would.
type lazySeries[T any] struct {
	with   func(prometheus.Labels) T
	labels prometheus.Labels
	series atomic.Pointer[T]
}

func (s *lazySeries[T]) get() T {
	if p := s.series.Load(); p != nil {
		return *p
	}
	v := s.with(s.labels) // the same series for every caller
	s.series.Store(&v)
	return v
}

// of returns the series of key: manager, group, kind.
func (m *metrics) of(key [3]string) *targetMetrics {
	if known := m.targets.Load(); known != nil {
		if tm := (*known)[key]; tm != nil {
			return tm
		}
	}
	m.targetsMu.Lock()
	defer m.targetsMu.Unlock()
	var known map[[3]string]*targetMetrics
	if p := m.targets.Load(); p != nil {
		if tm := (*p)[key]; tm != nil {
			return tm // added since the look above
		}
		known = *p
	}
	next := make(map[[3]string]*targetMetrics, len(known)+1)
	for k, v := range known {
		next[k] = v
	}
	l := prometheus.Labels{"manager": key[0], "group": key[1], "kind": key[2]}
	tm := &targetMetrics{
		labels:     l,
		applies:    lazySeries[prometheus.Counter]{with: m.applies.With, labels: l},
		skipped:    lazySeries[prometheus.Counter]{with: m.skipped.With, labels: l},
		retries:    lazySeries[prometheus.Counter]{with: m.retries.With, labels: l},
		reads:      lazySeries[prometheus.Counter]{with: m.reads.With, labels: l},
		recoveries: lazySeries[prometheus.Counter]{with: m.recoveries.With, labels: l},
		latency:    lazySeries[prometheus.Observer]{with: m.latency.With, labels: l},
		pending:    lazySeries[prometheus.Gauge]{with: m.pending.With, labels: l},
	}
	next[key] = tm
	m.targets.Store(&next)
	return tm
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

// Pending tallies, per field manager and kind, the entries one Flush of a
// batch wrote and how many of them it left queued, for Applier.RecordPending.
// The zero value is empty; a Flush of a few managers and kinds allocates nothing.
type Pending struct {
	first [4]pendingSeries // most Flushes touch a series or three
	n     int
	more  []pendingSeries
}

type pendingSeries struct {
	key  [3]string // manager, group, kind
	left int
}

// Add counts one entry of t, left queued or not.
func (p *Pending) Add(t *Target, queued bool) {
	key := [3]string{t.Manager, t.GVK.Group, t.GVK.Kind}
	var c *pendingSeries
	for i := range p.n {
		if p.first[i].key == key {
			c = &p.first[i]
			break
		}
	}
	for i := 0; c == nil && i < len(p.more); i++ {
		if p.more[i].key == key {
			c = &p.more[i]
		}
	}
	if c == nil {
		if p.n < len(p.first) {
			p.first[p.n] = pendingSeries{key: key}
			c = &p.first[p.n]
			p.n++
		} else {
			p.more = append(p.more, pendingSeries{key: key})
			c = &p.more[len(p.more)-1]
		}
	}
	if queued {
		c.left++
	}
}

// RecordPending sets statusapply_pending_entries of every field manager and
// kind p counted to the entries p says were left queued. A batch's Flush
// calls it once it is done.
func (a *Applier) RecordPending(p *Pending) {
	set := func(c *pendingSeries) { a.metrics.of(c.key).pending.get().Set(float64(c.left)) }
	for i := range p.n {
		set(&p.first[i])
	}
	for i := range p.more {
		set(&p.more[i])
	}
}
