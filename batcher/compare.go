package batcher

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/internal/kindschema"
	"github.com/statusapply/statusapply/ssa"
)

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
	// when something else diverges. Compare leaves it empty: package shadow
	// sets it from its DryRunAsOwner dry run's Result.Taken.
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
// answer in package shadow), making no request; tc provides the kind's schema, and
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
