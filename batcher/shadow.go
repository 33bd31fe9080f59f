package batcher

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/batching"
	"github.com/statusapply/statusapply/internal/kindschema"
	"github.com/statusapply/statusapply/ssa"
)

// ReasonShadowDivergence is the reason of the Event a shadow-mode batch with
// Shadow.Events records on an object its writer diverges on.
const ReasonShadowDivergence = "StatusShadowDivergence"

// Shadow configures shadow mode (see WithShadow). The zero value reports
// through the log and the metrics only.
type Shadow struct {
	// OnDivergence, when set, is called once for every entry whose dry run
	// diverges from the live object, and never for one that agrees. It is
	// called from Flush's goroutines and must be safe for concurrent use.
	OnDivergence func(context.Context, Divergence)
	// Events records a Normal Event of reason ReasonShadowDivergence on the
	// object for every diverging entry, through the Applier's event recorder
	// (ssa.WithEventRecorder), if any: one per reconcile for a writer that
	// always diverges, so leave it off for busy kinds.
	Events bool
}

// WithShadow puts the batch in shadow mode, to run a new apply-based status
// writer beside the legacy writer it will replace until the two agree: Flush
// writes nothing and reports how each entry would change the live object.
//
// Each entry Flush would send goes as a dry run (as Batch.DryRun), guarded (a
// stale observation is read again, the mutators rerun) and as the owner of its
// fields (batching.Extras.AsOwner), so that fields another manager owns are
// compared too and the conflict the real apply would meet is listed in
// Divergence.Contested rather than failing the entry. Compare judges the
// answer against the live object. An entry whose intent changes nothing the
// manager owns sends nothing and agrees.
//
// A diverging entry is reported once per Flush: a V(0) log line on the
// context's logger ("shadow apply diverges from the live object", with the
// target and one string per condition and field), the Applier's metrics
// statusapply_shadow_entries_total and statusapply_shadow_divergences_total,
// Shadow.OnDivergence and, with Shadow.Events, an Event. An agreeing entry is
// only counted, as "agreed".
//
// Nothing is written, the batch keeps its observation, the Applier remembers
// nothing and the result hook is not called. A compared entry is cleared, so
// a deferred FlushInto does not report it twice; one that could not be
// compared stays queued and its error is returned as Flush's are.
// Such errors are the shadow writer's own (mutators, invalid input, an
// unreachable API server, a guarded dry run that kept finding the object
// changed), never a field-manager conflict. Entries are compared
// independently: a status entry is built on the batch's observation, and
// compared, even when a main-resource entry of the same object precedes it or
// fails. Dry runs store nothing and wake no watch; each sent entry costs one,
// one more on a conflict, and a read and one more on a stale observation.
func WithShadow(s Shadow) Option {
	return func(b *Batch) { b.shadow = &s }
}

// Change says how a diverging condition or field would change.
type Change string

const (
	// Added is a condition or field absent on the live object and present in
	// the dry run's answer.
	Added Change = "added"
	// Removed is one present on the live object and absent in the answer.
	Removed Change = "removed"
	// Changed is one present on both, with different values.
	Changed Change = "changed"
)

// Divergence is what one entry's apply would change on the live object's
// subresource: the dry run's answer against the object it merged into.
type Divergence struct {
	// Target is the entry.
	Target ssa.Target
	// ResourceVersion is the live object's, the one compared with.
	ResourceVersion string
	// Conditions are the conditions (.status.conditions, by type) the apply
	// would add, remove or change, sorted by type.
	Conditions []ConditionDivergence
	// Fields are the other fields it would change, sorted by path.
	Fields []FieldDivergence
	// Contested are the fields another manager owns that the apply would
	// change, with their owners: the conflicts the real apply would meet now.
	// While a legacy writer owns fields, every diverging one is contested;
	// after handover (fleet.Migrator) none should be. A conflict on a field
	// that is not divergence (a condition's lastTransitionTime) is listed only
	// when something else diverges.
	Contested []conflicts.Conflict
}

// Empty reports whether nothing diverges.
func (d Divergence) Empty() bool { return len(d.Conditions) == 0 && len(d.Fields) == 0 }

// String lists the divergence in one line, conditions first.
func (d Divergence) String() string {
	items := make([]string, 0, len(d.Conditions)+len(d.Fields))
	for _, c := range d.Conditions {
		items = append(items, c.String())
	}
	for _, f := range d.Fields {
		items = append(items, f.String())
	}
	return strings.Join(items, "; ")
}

// labels are the metric labels of d's items, once each.
func (d Divergence) labels() []batching.DivergenceLabels {
	var out []batching.DivergenceLabels
	add := func(l batching.DivergenceLabels) {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	for _, c := range d.Conditions {
		if c.Change != Changed {
			add(batching.DivergenceLabels{ConditionType: c.Type, Change: string(c.Change)})
			continue
		}
		for _, f := range c.Fields {
			add(batching.DivergenceLabels{ConditionType: c.Type, Field: f, Change: string(Changed)})
		}
	}
	for _, f := range d.Fields {
		add(batching.DivergenceLabels{Field: labelPath(f.Path), Change: string(f.Change)})
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

// ConditionDivergence is one condition type the apply would change.
type ConditionDivergence struct {
	// Type is the condition's type.
	Type string
	// Change is Added (absent on the live object, present after the apply),
	// Removed (the reverse) or Changed (fields differ).
	Change Change
	// Fields names the fields that differ when Change is Changed, sorted:
	// "status", "reason", "message", "observedGeneration" or any other field
	// the condition type has, never "lastTransitionTime" or "type".
	Fields []string
	// Live and Shadow are the condition on the live object and after the
	// apply, as JSON objects; nil on the side where it is absent.
	Live, Shadow map[string]any
}

// String is the condition's divergence for people, e.g.
// `condition Ready: reason "Up" -> "Degraded"`.
func (c ConditionDivergence) String() string {
	switch c.Change {
	case Added:
		return fmt.Sprintf("condition %s: absent -> present (%s)", c.Type, describeCondition(c.Shadow))
	case Removed:
		return fmt.Sprintf("condition %s: present -> absent (was %s)", c.Type, describeCondition(c.Live))
	}
	parts := make([]string, 0, len(c.Fields))
	for _, f := range c.Fields {
		lv, lok := c.Live[f]
		sv, sok := c.Shadow[f]
		parts = append(parts, fmt.Sprintf("%s %s -> %s", f, jsonOrAbsent(lv, lok), jsonOrAbsent(sv, sok)))
	}
	return fmt.Sprintf("condition %s: %s", c.Type, strings.Join(parts, ", "))
}

func describeCondition(c map[string]any) string {
	var parts []string
	for _, f := range []string{"status", "reason", "message"} {
		if v, ok := c[f]; ok {
			parts = append(parts, f+" "+jsonOrAbsent(v, true))
		}
	}
	return strings.Join(parts, ", ")
}

// FieldDivergence is one field, not a condition, the apply would change.
type FieldDivergence struct {
	// Path is the field, e.g. .status.phase or .status.plan: the field whole
	// where one side lacks it, else every differing field below it (by name,
	// by list key for map lists; atomic lists whole).
	Path fieldpath.Path
	// Change is Added, Removed or Changed.
	Change Change
	// Live and Shadow are the field's values (JSON values) on the live object
	// and after the apply; nil on the side where it is absent.
	Live, Shadow any
}

// String is the field's divergence for people, e.g.
// `.status.phase: "Running" -> "Done"`.
func (f FieldDivergence) String() string {
	return fmt.Sprintf("%s: %s -> %s", f.Path, jsonOrAbsent(f.Live, f.Change != Added), jsonOrAbsent(f.Shadow, f.Change != Removed))
}

func jsonOrAbsent(v any, present bool) string {
	if !present {
		return "absent"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Compare returns what an apply for t changes between live, the object the API
// server merged it into, and result, the object it answered with (a dry run's
// answer in shadow mode), making no request; tc provides the kind's schema, and
// live and result may be typed or unstructured. Only t's subresource is
// compared: .status, or for the main resource spec and the metadata a manager
// can own (labels, annotations, finalizers, ownerReferences). Conditions are
// compared by type, field by field, other fields by the schema's rules; a
// condition's lastTransitionTime and system metadata are never divergence. A
// field the apply does not state (another writer's condition) is the same on
// both sides, as the answer holds every manager's fields, so it is not reported.
func Compare(tc managedfields.TypeConverter, t ssa.Target, live, result client.Object) (Divergence, error) {
	d := Divergence{Target: t, ResourceVersion: live.GetResourceVersion()}
	before, err := subresourceContent(live, t.Subresource)
	if err != nil {
		return d, fmt.Errorf("the live object: %w", err)
	}
	after, err := subresourceContent(result, t.Subresource)
	if err != nil {
		return d, fmt.Errorf("the result: %w", err)
	}
	if t.Subresource == ssa.StatusSubresource {
		d.Conditions = compareConditions(takeConditions(before), takeConditions(after))
	}
	ks, err := kindschema.Lookup(tc, t.GVK)
	if err != nil {
		return d, fmt.Errorf("the schema of %s: %w", t.GVK, err)
	}
	changed, removed := fieldpath.NewSet(), fieldpath.NewSet()
	diffContent(ks.Schema, ks.TypeRef, before, after, nil, changed, removed)
	subresourcePaths(t.Subresource, changed.Union(removed)).Iterate(func(p fieldpath.Path) {
		lv, lok := valueAt(before, p)
		sv, sok := valueAt(after, p)
		if len(p) == 1 && lok != sok {
			// A section only one side has: report its fields one by one.
			m, _ := lv.(map[string]any)
			if sok {
				m, _ = sv.(map[string]any)
			}
			for k, v := range m {
				fp := append(p.Copy(), fieldpath.PathElement{FieldName: &k})
				d.Fields = append(d.Fields, fieldDivergence(fp, lv, lok, sv, sok, v))
			}
			return
		}
		d.Fields = append(d.Fields, fieldDivergence(p, lv, lok, sv, sok, nil))
	})
	sort.Slice(d.Fields, func(i, j int) bool { return d.Fields[i].Path.String() < d.Fields[j].Path.String() })
	return d, nil
}

// fieldDivergence is the divergence at p given both sides' values there; v is
// a field's value inside a section only one side has.
func fieldDivergence(p fieldpath.Path, lv any, lok bool, sv any, sok bool, v any) FieldDivergence {
	switch {
	case lok && sok:
		return FieldDivergence{Path: p, Change: Changed, Live: lv, Shadow: sv}
	case sok:
		if v == nil {
			v = sv
		}
		return FieldDivergence{Path: p, Change: Added, Shadow: v}
	default:
		if v == nil {
			v = lv
		}
		return FieldDivergence{Path: p, Change: Removed, Live: v}
	}
}

// takeConditions removes .status.conditions from content and returns them by
// type; items without a string type are left out (the API server has none).
func takeConditions(content map[string]any) map[string]map[string]any {
	items, _, _ := unstructured.NestedFieldNoCopy(content, "status", "conditions")
	unstructured.RemoveNestedField(content, "status", "conditions")
	list, _ := items.([]any)
	out := make(map[string]map[string]any, len(list))
	for _, item := range list {
		c, _ := item.(map[string]any)
		if t, ok := c["type"].(string); ok {
			out[t] = c
		}
	}
	return out
}

// notDivergence are the condition fields ignored: the key, and the transition
// time, which two writers agreeing on the status set a second apart.
var notDivergence = map[string]bool{"type": true, "lastTransitionTime": true}

func compareConditions(live, shadow map[string]map[string]any) []ConditionDivergence {
	types := make([]string, 0, len(live)+len(shadow))
	for t := range live {
		types = append(types, t)
	}
	for t := range shadow {
		if _, ok := live[t]; !ok {
			types = append(types, t)
		}
	}
	sort.Strings(types)
	var out []ConditionDivergence
	for _, t := range types {
		l, inLive := live[t]
		s, inShadow := shadow[t]
		switch {
		case !inLive:
			out = append(out, ConditionDivergence{Type: t, Change: Added, Shadow: s})
		case !inShadow:
			out = append(out, ConditionDivergence{Type: t, Change: Removed, Live: l})
		default:
			var fields []string
			for f, lv := range l {
				if sv, ok := s[f]; !notDivergence[f] && (!ok || !equalJSON(lv, sv)) {
					fields = append(fields, f)
				}
			}
			for f := range s {
				if _, ok := l[f]; !ok && !notDivergence[f] {
					fields = append(fields, f)
				}
			}
			if len(fields) > 0 {
				sort.Strings(fields)
				out = append(out, ConditionDivergence{Type: t, Change: Changed, Fields: fields, Live: l, Shadow: s})
			}
		}
	}
	return out
}

func valueAt(content any, p fieldpath.Path) (any, bool) {
	node := content
	for _, pe := range p {
		if pe.FieldName != nil {
			m, ok := node.(map[string]any)
			if !ok {
				return nil, false
			}
			if node, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		} else if pe.Key != nil || pe.Value != nil {
			l, _ := node.([]any)
			i := indexOf(l, pe)
			if i < 0 {
				return nil, false
			}
			node = l[i]
		} else {
			return nil, false
		}
	}
	return node, true
}

// shadowEntry compares one entry's dry run with the live object and reports
// the divergence, or returns why it could not be compared.
func (b *Batch) shadowEntry(ctx context.Context, t ssa.Target, res ssa.Result, err error) error {
	if err != nil {
		b.applier.ForBatches().RecordShadow(t, batching.ShadowFailed, nil)
		return err
	}
	if !res.Sent {
		b.applier.ForBatches().RecordShadow(t, batching.ShadowAgreed, nil)
		return nil
	}
	d, err := Compare(b.applier.TypeConverter(), t, res.Observed, res.Object)
	if err != nil {
		b.applier.ForBatches().RecordShadow(t, batching.ShadowFailed, nil)
		return &ssa.Error{Target: t, Attempts: res.Attempts, Err: fmt.Errorf("comparing the dry run with the live object: %w", err)}
	}
	if d.Empty() {
		b.applier.ForBatches().RecordShadow(t, batching.ShadowAgreed, nil)
		return nil
	}
	d.Contested = res.Taken
	b.applier.ForBatches().RecordShadow(t, batching.ShadowDiverged, d.labels())
	b.logDivergence(ctx, d)
	if b.shadow.Events {
		if rec := b.applier.EventRecorder(); rec != nil {
			note := fmt.Sprintf("manager %s would change %s", t.Manager, d)
			if len(note) > maxEventNote {
				note = strings.ToValidUTF8(note[:maxEventNote-3], "") + "..."
			}
			rec.Eventf(res.Observed, nil, corev1.EventTypeNormal, ReasonShadowDivergence, "ShadowApply", "%s", note)
		}
	}
	if b.shadow.OnDivergence != nil {
		b.shadow.OnDivergence(ctx, d)
	}
	return nil
}

// maxEventNote keeps Event notes under the events.k8s.io note limit.
const maxEventNote = 1000

// logDivergence writes the one log line of a diverging entry.
func (b *Batch) logDivergence(ctx context.Context, d Divergence) {
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
	b.applier.Logger(ctx).Info("shadow apply diverges from the live object", kv...)
}
