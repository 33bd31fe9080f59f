// Package shadow runs a new apply-based status writer beside the legacy
// writer it will replace, until the two agree: a batch in shadow mode writes
// nothing and reports how each entry would change the live object. It is
// built on the public API of packages batcher and ssa alone.
package shadow

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ssa"
)

// ReasonDivergence is the reason of the Event shadow mode records, with
// Options.Recorder, on an object its writer diverges on.
const ReasonDivergence = "StatusShadowDivergence"

// Options configure shadow mode. The zero value reports through the log and
// the metrics only.
type Options struct {
	// OnDivergence, when set, is called once for every entry whose dry run
	// diverges from the live object, and never for one that agrees. It is
	// called from Flush's goroutines and must be safe for concurrent use.
	OnDivergence func(context.Context, batcher.Divergence)
	// Recorder, when set, records a Normal Event of reason ReasonDivergence
	// on the object for every diverging entry: one per reconcile for a writer
	// that always diverges, so leave it unset for busy kinds.
	Recorder conflicts.EventRecorder
	// Logger, when set, is where the line of a diverging entry goes; else
	// the Flush context's logger (logr.FromContext), else nowhere: never
	// controller-runtime's global logger.
	Logger *logr.Logger
	// Registerer registers the shadow metrics; nil means
	// controller-runtime's metrics registry, as ssa.WithRegisterer's default
	// (a prometheus.NewRegistry() of its own keeps them off /metrics).
	// Modes sharing a registry share the metrics.
	Registerer prometheus.Registerer
}

// Mode is shadow mode, made by New. Make one per process (it registers its
// metrics) and give every batch that is to compare instead of writing its
// Option. It is safe for concurrent use.
type Mode struct {
	opts    Options
	metrics *metrics
}

// New returns shadow mode configured by o.
func New(o Options) (*Mode, error) {
	reg := o.Registerer
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("registering metrics: %w", err)
	}
	return &Mode{opts: o, metrics: m}, nil
}

// Option puts a batch in shadow mode: its Flush (and FlushInto) writes
// nothing and reports how each entry would change the live object.
//
// Each entry Flush would send goes as a dry run, guarded (a stale observation
// is read again, the mutators rerun) and as the owner of its fields
// (ssa.DryRunAsOwner), so that fields another manager owns are compared too
// and the conflict the real apply would meet is listed in
// Divergence.Contested rather than failing the entry. batcher.Compare judges
// the answer against the live object. An entry whose intent changes nothing
// the manager owns sends nothing and agrees.
//
// A diverging entry is reported once per Flush: a V(0) log line ("shadow
// apply diverges from the live object", with the target and one string per
// condition and field), the metrics statusapply_shadow_entries_total and
// statusapply_shadow_divergences_total, Options.OnDivergence and, with
// Options.Recorder, an Event. An agreeing entry is only counted, as "agreed".
//
// Nothing is written, the batch keeps its observation, the Applier remembers
// nothing and the result hook is not called. A compared entry is cleared, so
// a deferred FlushInto does not report it twice; one that could not be
// compared stays queued and its error is returned as Flush's are. Such
// errors are the shadow writer's own (mutators, invalid input, an unreachable
// API server, a guarded dry run that kept finding the object changed), never
// a field-manager conflict. Entries are compared independently (see
// batcher.Batch.Consume): a status entry is built on the batch's observation,
// and compared, even when a main-resource entry of the same object precedes
// it or fails. Dry runs store nothing and wake no watch; each sent entry costs
// one, one more on a conflict, and a read and one more on a stale observation.
func (m *Mode) Option() batcher.Option {
	return batcher.WithFlushFunc(func(ctx context.Context, b *batcher.Batch) error {
		a := b.Applier()
		return b.Consume(ctx, func(ctx context.Context, e batcher.Entry) error {
			// Dry-run e as its owner, guarded, and report how it diverges.
			opts := e.Options
			opts.Guarded = true
			res, err := a.Apply(ctx, e.Target, e.Observed, e.Build, &opts, ssa.DryRunAsOwner)
			return m.report(ctx, a, e.Target, res, err)
		})
	})
}

// report compares one entry's dry run through a with the live object and
// reports the divergence, or returns why it could not be compared.
func (m *Mode) report(ctx context.Context, a *ssa.Applier, t ssa.Target, res ssa.Result, err error) error {
	if err != nil {
		m.metrics.entry(t, failed)
		return err
	}
	if !res.Sent {
		m.metrics.entry(t, agreed)
		return nil
	}
	d, err := batcher.Compare(a.TypeConverter(), t, res.Observed, res.Object)
	if err != nil {
		m.metrics.entry(t, failed)
		return &ssa.Error{Target: t, Attempts: res.Attempts, Err: fmt.Errorf("comparing the dry run with the live object: %w", err)}
	}
	if d.Empty() {
		m.metrics.entry(t, agreed)
		return nil
	}
	d.Contested = res.Taken
	m.metrics.diverged(t, d)
	m.log(ctx, d)
	if rec := m.opts.Recorder; rec != nil {
		note := fmt.Sprintf("manager %s would change %s", t.Manager, d)
		if len(note) > maxEventNote {
			note = strings.ToValidUTF8(note[:maxEventNote-3], "") + "..."
		}
		rec.Eventf(res.Observed, nil, corev1.EventTypeNormal, ReasonDivergence, "ShadowApply", "%s", note)
	}
	if m.opts.OnDivergence != nil {
		m.opts.OnDivergence(ctx, d)
	}
	return nil
}

// maxEventNote keeps Event notes under the events.k8s.io note limit.
const maxEventNote = 1000

// log writes the one log line of a diverging entry.
func (m *Mode) log(ctx context.Context, d batcher.Divergence) {
	conds := make([]string, 0, len(d.Conditions))
	for _, c := range d.Conditions {
		conds = append(conds, c.String())
	}
	fields := make([]string, 0, len(d.Fields))
	for _, f := range d.Fields {
		fields = append(fields, f.String())
	}
	kv := []any{"target", d.Target.String(), "manager", d.Target.Manager, "kind", d.Target.GVK.Kind,
		"object", d.Target.Object().String(), "resourceVersion", d.ResourceVersion,
		"conditions", conds, "fields", fields}
	if len(d.Contested) > 0 {
		contested := make([]string, 0, len(d.Contested))
		for _, c := range d.Contested {
			contested = append(contested, c.String())
		}
		kv = append(kv, "contested", contested)
	}
	l := logr.FromContextOrDiscard(ctx)
	if m.opts.Logger != nil {
		l = *m.opts.Logger
	}
	l.Info("shadow apply diverges from the live object", kv...)
}
