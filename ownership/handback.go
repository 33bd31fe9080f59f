package ownership

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/fieldsets"
)

// NewApplyEntry returns a new Apply entry of manager on subresource, recorded
// in apiVersion and stamped at now to the second, as the API server stamps
// its entries, owning fields.
func NewApplyEntry(manager, subresource, apiVersion string, fields *fieldpath.Set, now time.Time) Entry {
	return Entry{
		Manager: manager, Operation: metav1.ManagedFieldsOperationApply, Subresource: subresource,
		APIVersion: apiVersion, Time: now.UTC().Truncate(time.Second), Fields: fields,
	}
}

// Record encodes e as a managedFields record, the form the API server reads.
func (e Entry) Record() (metav1.ManagedFieldsEntry, error) {
	mf := metav1.ManagedFieldsEntry{
		Manager: e.Manager, Operation: e.Operation, Subresource: e.Subresource, APIVersion: e.APIVersion,
		FieldsType: fieldsets.FieldsV1Type, FieldsV1: &metav1.FieldsV1{},
	}
	if !e.Time.IsZero() {
		stamp := metav1.NewTime(e.Time)
		mf.Time = &stamp
	}
	fields := e.Fields
	if fields == nil {
		fields = fieldpath.NewSet()
	}
	raw, err := fields.ToJSON()
	if err != nil {
		return metav1.ManagedFieldsEntry{}, fmt.Errorf("manager %s: encoding fields: %w", e, err)
	}
	mf.FieldsV1.SetRawBytes(raw)
	return mf, nil
}

// ManagedFieldsPatch returns the JSON patch that replaces an object's
// managedFields with entries, guarded by resourceVersion, the version the
// entries were computed from: the patch sets metadata.resourceVersion to it,
// so a write racing the rewrite is a 409 Conflict and nothing is lost. Empty
// entries are written as the API server's "clear them" ([{}]), since an empty
// list means "keep the live ones". Send it through the main resource: the
// status subresource silently ignores managedFields.
func ManagedFieldsPatch(entries []metav1.ManagedFieldsEntry, resourceVersion string) ([]byte, error) {
	value := entries
	if len(value) == 0 {
		value = []metav1.ManagedFieldsEntry{{}}
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": value},
		{"op": "replace", "path": "/metadata/resourceVersion", "value": resourceVersion},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding managedFields patch: %w", err)
	}
	return patch, nil
}

// HoldsBeforeFirstApply reports whether mfs has a before-first-apply entry,
// without decoding any field set: what an apply checks on every call.
func HoldsBeforeFirstApply(mfs []metav1.ManagedFieldsEntry) bool {
	for i := range mfs {
		if isBeforeFirstApply(mfs[i].Manager, mfs[i].Operation) {
			return true
		}
	}
	return false
}

// AppliedBy reports whether the entry is manager's Apply entry on
// subresource: the one entry an apply by manager there releases fields of.
// Any other keeps what it owns, manager's own Update entries included.
func (e Entry) AppliedBy(manager, subresource string) bool {
	return e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == subresource
}

// BeforeFirstApply reports whether the entry is the API server's attribution
// of fields whose managedFields were lost (see BeforeFirstApplyManager), no
// writer.
func (e Entry) BeforeFirstApply() bool { return isBeforeFirstApply(e.Manager, e.Operation) }

func isBeforeFirstApply(manager string, op metav1.ManagedFieldsOperationType) bool {
	return manager == BeforeFirstApplyManager && op == metav1.ManagedFieldsOperationUpdate
}

// HandBack gives manager's Apply entry on subresource, recorded in
// apiVersion, what before-first-apply's entries recorded in apiVersion hold
// among exact, and everything they hold at or below each path of below (a
// condition an edit removes). Each field changes hands within the one list
// returned, so none is ever without an owner, and no entry but
// before-first-apply's gives anything up: other managers, apply or legacy,
// keep all they own. A before-first-apply entry left empty is dropped; a new
// Apply entry is stamped now. taken is empty when nothing moves (mfs is then
// returned as is), and also when manager's entry is recorded in another API
// version, since field sets of two versions cannot simply be united.
func HandBack(mfs []metav1.ManagedFieldsEntry, manager, subresource, apiVersion string, exact, below *fieldpath.Set,
	now time.Time) (out []metav1.ManagedFieldsEntry, taken *fieldpath.Set, err error) {
	taken = fieldpath.NewSet()
	if !HoldsBeforeFirstApply(mfs) {
		return mfs, taken, nil
	}
	entries := make([]Entry, len(mfs))
	target := -1
	for i, mf := range mfs {
		if entries[i], err = decodeEntry(mf); err != nil {
			return nil, nil, err
		}
		e := entries[i]
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == subresource {
			if e.APIVersion != apiVersion {
				return mfs, taken, nil
			}
			target = i
		}
	}
	changed := make([]bool, len(entries))
	for i := range entries {
		e := &entries[i]
		if !isBeforeFirstApply(e.Manager, e.Operation) || e.APIVersion != apiVersion {
			continue
		}
		held := fieldpath.NewSet()
		if exact != nil {
			held = e.Fields.Intersection(exact)
		}
		if below != nil {
			below.Iterate(func(p fieldpath.Path) { held = held.Union(fieldsets.Subtree(e.Fields, p)) })
		}
		if held.Empty() {
			continue
		}
		e.Fields = e.Fields.Difference(held)
		taken = taken.Union(held)
		changed[i] = true
	}
	if taken.Empty() {
		return mfs, taken, nil
	}
	if target < 0 {
		entries = append(entries, NewApplyEntry(manager, subresource, apiVersion, taken, now))
		changed = append(changed, true)
	} else if !taken.Difference(entries[target].Fields).Empty() {
		entries[target].Fields = entries[target].Fields.Union(taken)
		entries[target].Time = now.UTC().Truncate(time.Second)
		changed[target] = true
	}
	out = make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for i, e := range entries {
		switch {
		case !changed[i]:
			out = append(out, *mfs[i].DeepCopy())
		case e.Fields.Empty():
		default:
			mf, err := e.Record()
			if err != nil {
				return nil, nil, err
			}
			out = append(out, mf)
		}
	}
	return out, taken, nil
}
