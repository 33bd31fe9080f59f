package fleet

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/statusapply/statusapply/internal/fieldsets"
	"github.com/statusapply/statusapply/ownership"
)

// rewriteStale moves every entry recorded in a version the CRD does not
// serve to the storage version (see Plan.RewriteStaleVersions).
func (p Plan) rewriteStale(mfs []metav1.ManagedFieldsEntry, content map[string]any) ([]metav1.ManagedFieldsEntry, error) {
	ds, err := decodeAll(mfs)
	if err != nil {
		return nil, err
	}
	storage := p.Versions.storageAPIVersion()
	var refused []string
	stale := false
	for i := range ds {
		e := &ds[i].entry
		if p.Versions.Staleness(e.APIVersion) == "" {
			continue
		}
		stale = true
		tr, untr := p.Versions.Translate(e.Fields, e.APIVersion, storage, content)
		if !untr.Empty() && !p.DropUntranslatable {
			refused = append(refused, fmt.Sprintf("%s recorded in %s: %s", e, e.APIVersion, untr))
			continue
		}
		e.Fields, e.APIVersion, ds[i].raw.APIVersion = tr, storage, storage
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("%w to the storage version %s: %s; nothing was written: those fields are not "+
			"at the same paths in %s (a field removed or retyped, or a conversion webhook); give "+
			"--drop-untranslatable (Plan.DropUntranslatable) to drop them, their owners losing them, once the "+
			"writers that own them write them again through %s",
			ErrUntranslatable, storage, strings.Join(refused, "; "), storage, storage)
	}
	if !stale {
		return mfs, nil
	}
	return encodeAll(mergeDuplicates(ds))
}

// alignVersions brings each legacy entry the plan takes fields from to the
// API version its destinations apply through (see Plan.Versions), so that
// the moves that follow union field sets of one version.
func (p Plan) alignVersions(mfs []metav1.ManagedFieldsEntry, content map[string]any) ([]metav1.ManagedFieldsEntry, error) {
	if len(p.Conditions) == 0 && len(p.Managers) == 0 {
		return mfs, nil
	}
	ds, err := decodeAll(mfs)
	if err != nil {
		return nil, err
	}
	applyVersion := map[string]string{} // manager -> version of its status Apply entry
	fromVersions := map[string]sets.Set[string]{}
	for _, d := range ds {
		e := d.entry
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ownership.StatusSubresource {
			applyVersion[e.Manager] = e.APIVersion
		}
		if e.Legacy() {
			if _, ok := p.Managers[e.Manager]; ok {
				addTo(fromVersions, e.Manager, e.APIVersion)
			}
		}
	}
	condTypes := sets.New(statusConditionTypesOf(content)...)
	var errs []string
	moved := false
	for i := range ds {
		e := &ds[i].entry
		if !e.Legacy() {
			continue
		}
		// An entry owning the list with nothing below it owns it whole,
		// unless its version's schema makes the list a map list (what a
		// move of its last condition leaves).
		wholeList := ownership.OwnedWhole(e.Fields, ownership.ConditionsPath()) &&
			!p.Versions.mapList(ownership.ConditionsPath(), e.APIVersion)
		dests := p.destinationsOf(*e, wholeList, condTypes)
		_, handed := p.Managers[e.Manager]
		if dests.Len() == 0 || !handed && !wholeList &&
			(p.Versions == nil || p.Versions.Staleness(e.APIVersion) == "") {
			// Conditions moving out of a map list of a served version are
			// translated as they move (mergeIntoApply); the rest of the
			// entry stays in the version its writer writes through.
			continue
		}
		targets := sets.New[string]()
		for _, d := range sets.List(dests) {
			if v, ok := applyVersion[d]; ok {
				targets.Insert(v)
			}
		}
		target := e.APIVersion
		switch {
		case targets.Len() > 1:
			errs = append(errs, fmt.Sprintf("%s holds fields for %s, which apply through several versions (%s): "+
				"hand them over in separate runs, one destination version at a time",
				e, strings.Join(sets.List(dests), ", "), strings.Join(sets.List(targets), ", ")))
			continue
		case targets.Len() == 1:
			target = sets.List(targets)[0]
		case p.Versions != nil && (p.Versions.Staleness(e.APIVersion) != "" || fromVersions[e.Manager].Len() > 1 ||
			wholeList && p.Versions.expands(ownership.ConditionsPath(), e.APIVersion, p.Versions.storageAPIVersion())):
			// No destination applies yet: the storage version is where a
			// new writer applies, and the one place a stale entry, entries
			// of several versions, or an atomic list can all go.
			target = p.Versions.storageAPIVersion()
		}
		if target == e.APIVersion {
			continue
		}
		if p.Versions == nil {
			errs = append(errs, fmt.Sprintf("%s holds fields recorded in %s for %s, which applies through %s: "+
				"the CRD's versions are needed to translate them (the CLI reads the CRD; Plan.Versions)",
				e, e.APIVersion, strings.Join(sets.List(dests), ", "), target))
			continue
		}
		tr, untr := p.Versions.Translate(e.Fields, e.APIVersion, target, content)
		if !untr.Empty() {
			errs = append(errs, fmt.Sprintf("%s holds %s recorded in %s, which does not translate to %s, where %s "+
				"applies: nothing was written; hand those fields to a writer that applies through %s, or have %s "+
				"write through %s first",
				e, untr, e.APIVersion, target, strings.Join(sets.List(dests), ", "), e.APIVersion, e.Manager, target))
			continue
		}
		e.Fields, e.APIVersion, ds[i].raw.APIVersion = tr, target, target
		moved = true
	}
	if len(errs) > 0 {
		sentinel := ErrUntranslatable
		if p.Versions == nil {
			sentinel = ErrAPIVersionMismatch
		}
		return nil, fmt.Errorf("%w: %s", sentinel, strings.Join(errs, "; "))
	}
	if !moved {
		return mfs, nil
	}
	return encodeAll(mergeDuplicates(ds))
}

// destinationsOf returns the managers the plan hands some of e's fields to.
// An entry owning an atomic conditions list whole (wholeList) holds every
// condition type the object has.
func (p Plan) destinationsOf(e ownership.Entry, wholeList bool, condTypes sets.Set[string]) sets.Set[string] {
	out := sets.New[string]()
	if to, ok := p.Managers[e.Manager]; ok && !e.StatusFields().Empty() {
		out.Insert(to)
	}
	for t, to := range p.Conditions {
		if !fieldsets.Subtree(e.Fields, ownership.ConditionPath(t)).Empty() || wholeList && condTypes.Has(t) {
			out.Insert(to)
		}
	}
	return out
}

// mergeDuplicates unions entries that name the same manager, operation,
// subresource and API version (as rewriting versions can make them) into
// the first of them.
func mergeDuplicates(ds []decoded) []decoded {
	out := make([]decoded, 0, len(ds))
	for _, d := range ds {
		i := slices.IndexFunc(out, func(o decoded) bool {
			return o.entry.Manager == d.entry.Manager && o.entry.Operation == d.entry.Operation &&
				o.entry.Subresource == d.entry.Subresource && o.entry.APIVersion == d.entry.APIVersion
		})
		if i < 0 {
			out = append(out, d)
			continue
		}
		out[i].entry.Fields = out[i].entry.Fields.Union(d.entry.Fields)
		if d.raw.Time != nil && (out[i].raw.Time == nil || out[i].raw.Time.Before(d.raw.Time)) {
			out[i].raw.Time = d.raw.Time
		}
	}
	return out
}

// statusConditionTypesOf lists the condition types in content's
// status.conditions.
func statusConditionTypesOf(content map[string]any) []string {
	status, _ := content["status"].(map[string]any)
	list, _ := status["conditions"].([]any)
	var out []string
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			if t, ok := m["type"].(string); ok {
				out = append(out, t)
			}
		}
	}
	return out
}
