package fleet

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/fieldsets"
	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/ownership"
)

// Plan says which apply manager takes over which status fields from the
// legacy writers (see Entry.Legacy). It is a pure description: Rewrite
// computes the new managedFields and Migrator writes them.
//
// Conditions are moved first, so a legacy manager can be split per condition
// type and its remaining status fields handed whole to one manager.
type Plan struct {
	// Conditions maps a condition type to the apply manager that takes over
	// the .status.conditions[type=X] entry (and everything below it) from
	// every legacy entry that holds it. The new owner is an Apply entry on the
	// status subresource, in the legacy entry's API version.
	Conditions map[string]string

	// Managers maps a legacy manager name to the apply manager that takes
	// over all the status fields it still holds after Conditions were moved.
	// Update entries on the status subresource are upgraded with client-go's
	// csaupgrade, which merges the legacy entry of the target's API version
	// and drops the manager's entries in other versions; should that leave a
	// field without an owner, Rewrite refuses (ErrOrphanedFields). A
	// before-first-apply entry recorded on the main resource gives up only
	// its .status fields.
	Managers map[string]string

	// ReleaseShared drops, from legacy entries, the status fields that
	// another entry still owns after the moves (at that path or below it),
	// and legacy entries left empty. A field only a legacy entry holds keeps
	// that owner: the field stays on the object, and it would not be safe
	// unowned. When an apply manager removes the last field it owns in a list
	// or struct that nobody else owns anything in, the API server deletes the
	// list or struct whole, unowned items included (see Rewrite).
	//
	// Use it to clean up before-first-apply and stale legacy co-ownership: a
	// condition an apply manager shares with a legacy writer becomes the apply
	// manager's alone, so it no longer outlives that manager dropping it.
	// Legacy entries are released in a fixed order, before-first-apply first,
	// so that of two legacy owners of one field the named writer keeps it.
	ReleaseShared bool

	// RewriteStaleVersions rewrites every entry recorded in an API version
	// the CRD does not serve (removed from it, or listed with served:
	// false) to the storage version, keeping its manager, operation and
	// subresource: an entry in a removed version makes every server-side
	// apply to the object fail. Each field set is translated
	// (Versions.Translate); fields that do not translate make Rewrite fail
	// with ErrUntranslatable, unless DropUntranslatable. It needs Versions.
	RewriteStaleVersions bool

	// DropUntranslatable lets RewriteStaleVersions drop the fields of a
	// stale entry that do not translate to the storage version, rather than
	// refusing the object: those fields lose that owner (an entry left with
	// nothing is dropped). Nothing else is ever dropped.
	DropUntranslatable bool

	// Versions is the kind's CRD versions (VersionsOf). With it, fields
	// move between entries recorded in different API versions where they
	// translate: a legacy entry the plan takes fields from is first
	// brought to the version its destination applies through (the storage
	// version for a destination that does not apply yet, when the legacy
	// entry's version is stale or its conditions list atomic), and fields
	// that do not translate fail with ErrUntranslatable. Without it such a
	// move fails with ErrAPIVersionMismatch. It is not part of the plan's
	// flags.
	Versions *Versions
}

// Validate returns an error wrapping ErrInvalidPlan when the plan has nothing
// to do, names an empty manager or condition type, or hands fields to
// before-first-apply (which is never an apply manager). Rewrite and
// NewMigrator call it; callers building plans from configuration can call it
// early.
func (p Plan) Validate() error {
	var errs []error
	if len(p.Conditions) == 0 && len(p.Managers) == 0 && !p.ReleaseShared && !p.RewriteStaleVersions {
		errs = append(errs, errors.New("nothing to do: no conditions, no managers, no release, no stale versions"))
	}
	if p.DropUntranslatable && !p.RewriteStaleVersions {
		errs = append(errs, errors.New("dropping untranslatable fields applies to rewriting stale versions only"))
	}
	for t, m := range p.Conditions {
		if t == "" || m == "" {
			errs = append(errs, fmt.Errorf("condition %q -> manager %q: empty name", t, m))
		}
		if m == ownership.BeforeFirstApplyManager {
			errs = append(errs, fmt.Errorf("condition %q: %s cannot be an apply manager", t, m))
		}
	}
	for from, to := range p.Managers {
		if from == "" || to == "" {
			errs = append(errs, fmt.Errorf("manager %q -> %q: empty name", from, to))
		}
		if to == ownership.BeforeFirstApplyManager {
			errs = append(errs, fmt.Errorf("manager %q: %s cannot be an apply manager", from, to))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidPlan, errors.Join(errs...))
}

// Rewrite returns obj's managedFields with the plan carried out, and whether
// they differ in ownership from obj's (timestamps aside). obj is not
// modified. now stamps the Apply entries the rewrite creates. Running
// Rewrite on its own output changes nothing, so a migration can be repeated.
//
// Every field owned before the rewrite is owned after it, by the same or
// another entry (or kept alive by an owned field below it); a plan whose
// result would break that fails with ErrOrphanedFields, because an unowned
// field is deleted as a side effect of another manager's removal.
//
// An object without managedFields yields an error wrapping
// ErrNoManagedFields: the API server must attribute its fields first (see
// Migrator). Errors name the object.
func (p Plan) Rewrite(obj client.Object, now time.Time) ([]metav1.ManagedFieldsEntry, bool, error) {
	ref := ownership.RefOf(obj)
	fail := func(err error) ([]metav1.ManagedFieldsEntry, bool, error) {
		return nil, false, &ownership.ObjectError{Object: ref, Op: "planning migration of", Err: err}
	}
	if err := p.Validate(); err != nil {
		return fail(err)
	}
	original := obj.GetManagedFields()
	if len(original) == 0 {
		return fail(ownership.ErrNoManagedFields)
	}
	if p.RewriteStaleVersions && p.Versions == nil {
		return fail(fmt.Errorf("%w: rewriting stale versions needs the CRD's versions", ErrInvalidPlan))
	}
	content := contentOf(obj)
	entries := slices.Clone(original)
	var err error
	if p.RewriteStaleVersions {
		if entries, err = p.rewriteStale(entries, content); err != nil {
			return fail(err)
		}
	}
	if entries, err = p.alignVersions(entries, content); err != nil {
		return fail(err)
	}
	// What the moves must keep owned: the entries as translated (a stale
	// rewrite that dropped untranslatable fields did so on request).
	baseline := entries
	if entries, err = p.moveConditions(entries, now, content); err != nil {
		return fail(err)
	}
	if entries, err = p.upgradeManagers(obj, entries, now, content); err != nil {
		return fail(err)
	}
	if p.ReleaseShared {
		if entries, err = releaseShared(entries, p.Versions, content); err != nil {
			return fail(err)
		}
	}
	if err := checkNoneOrphaned(baseline, entries, p.Versions, content); err != nil {
		return fail(err)
	}
	same, err := sameOwnership(original, entries)
	if err != nil {
		return fail(err)
	}
	if same {
		return slices.Clone(original), false, nil
	}
	return entries, true, nil
}

// decoded pairs a managedFields entry with its decoded set while a rewrite
// edits it.
type decoded struct {
	raw   metav1.ManagedFieldsEntry
	entry ownership.Entry
}

// decodeAll decodes every entry, copying the raw entries so that the
// caller's slice is never modified.
func decodeAll(mfs []metav1.ManagedFieldsEntry) ([]decoded, error) {
	entries, err := inspect.Decode(mfs)
	if err != nil {
		return nil, err
	}
	out := make([]decoded, 0, len(mfs))
	for i, e := range entries {
		out = append(out, decoded{raw: *mfs[i].DeepCopy(), entry: e})
	}
	return out, nil
}

// encodeAll writes the edited sets back and drops entries left empty.
func encodeAll(ds []decoded) ([]metav1.ManagedFieldsEntry, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(ds))
	for _, d := range ds {
		if d.entry.Fields.Empty() {
			continue
		}
		raw, err := d.entry.Fields.ToJSON()
		if err != nil {
			return nil, fmt.Errorf("manager %s: encoding fields: %w", d.entry, err)
		}
		mf := d.raw
		mf.FieldsType = fieldsets.FieldsV1Type
		mf.FieldsV1 = &metav1.FieldsV1{}
		mf.FieldsV1.SetRawBytes(raw)
		out = append(out, mf)
	}
	return out, nil
}

// applyTarget names the Apply entry that receives moved fields.
type applyTarget struct {
	manager, apiVersion string
}

// moveConditions moves each planned condition type from every legacy entry
// to its apply manager's status entry.
func (p Plan) moveConditions(mfs []metav1.ManagedFieldsEntry, now time.Time, content map[string]any) ([]metav1.ManagedFieldsEntry, error) {
	if len(p.Conditions) == 0 {
		return slices.Clone(mfs), nil
	}
	ds, err := decodeAll(mfs)
	if err != nil {
		return nil, err
	}
	moved := map[applyTarget]*fieldpath.Set{}
	for _, condType := range slices.Sorted(maps.Keys(p.Conditions)) {
		for i := range ds {
			if !ds[i].entry.Legacy() {
				continue
			}
			sub := fieldsets.Subtree(ds[i].entry.Fields, ownership.ConditionPath(condType))
			if sub.Empty() {
				continue
			}
			ds[i].entry.Fields = ds[i].entry.Fields.Difference(sub)
			t := applyTarget{manager: p.Conditions[condType], apiVersion: ds[i].entry.APIVersion}
			if prev, ok := moved[t]; ok {
				sub = prev.Union(sub)
			}
			moved[t] = sub
		}
	}
	if ds, err = mergeIntoApply(ds, moved, now, p.Versions, content); err != nil {
		return nil, err
	}
	return encodeAll(ds)
}

// upgradeManagers hands the remaining status fields of each planned legacy
// manager to its apply manager.
func (p Plan) upgradeManagers(obj client.Object, mfs []metav1.ManagedFieldsEntry, now time.Time, content map[string]any) ([]metav1.ManagedFieldsEntry, error) {
	for _, from := range slices.Sorted(maps.Keys(p.Managers)) {
		to := p.Managers[from]
		// Status-subresource Update entries: client-go's upgrade, on a copy.
		scratch := deepCopy(obj)
		scratch.SetManagedFields(mfs)
		if err := csaupgrade.UpgradeManagedFields(scratch, sets.New(from), to, csaupgrade.Subresource(ownership.StatusSubresource)); err != nil {
			return nil, fmt.Errorf("upgrading manager %s to %s: %w", from, to, err)
		}
		mfs = scratch.GetManagedFields()
		if from != ownership.BeforeFirstApplyManager {
			continue
		}
		// before-first-apply recorded on the main resource also holds spec
		// and metadata; only its status part changes hands.
		ds, err := decodeAll(mfs)
		if err != nil {
			return nil, err
		}
		moved := map[applyTarget]*fieldpath.Set{}
		for i := range ds {
			e := &ds[i].entry
			if e.Manager != from || e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource == ownership.StatusSubresource {
				continue
			}
			sub := e.StatusFields()
			if sub.Empty() {
				continue
			}
			e.Fields = e.Fields.Difference(sub)
			t := applyTarget{manager: to, apiVersion: e.APIVersion}
			if prev, ok := moved[t]; ok {
				sub = prev.Union(sub)
			}
			moved[t] = sub
		}
		if ds, err = mergeIntoApply(ds, moved, now, p.Versions, content); err != nil {
			return nil, err
		}
		if mfs, err = encodeAll(ds); err != nil {
			return nil, err
		}
	}
	return mfs, nil
}

// mergeIntoApply unions moved fields into each target's Apply entry on the
// status subresource, creating the entry when missing. Fields moving into an
// entry of another API version are translated to it with versions; without
// versions, or where they do not translate, that is an error: field sets of
// two versions cannot simply be unioned.
func mergeIntoApply(ds []decoded, moved map[applyTarget]*fieldpath.Set, now time.Time, versions *Versions, content map[string]any) ([]decoded, error) {
	targets := slices.SortedFunc(maps.Keys(moved), func(a, b applyTarget) int {
		if a.manager != b.manager {
			return cmp.Compare(a.manager, b.manager)
		}
		return cmp.Compare(a.apiVersion, b.apiVersion)
	})
	for _, t := range targets {
		idx := slices.IndexFunc(ds, func(d decoded) bool {
			return d.entry.Manager == t.manager && d.entry.Operation == metav1.ManagedFieldsOperationApply &&
				d.entry.Subresource == ownership.StatusSubresource
		})
		if idx < 0 {
			e := ownership.NewApplyEntry(t.manager, ownership.StatusSubresource, t.apiVersion, moved[t], now)
			raw, err := e.Record()
			if err != nil {
				return nil, err
			}
			ds = append(ds, decoded{raw: raw, entry: e})
			continue
		}
		fields := moved[t]
		if to := ds[idx].entry.APIVersion; to != t.apiVersion {
			if versions == nil {
				return nil, fmt.Errorf("%w: apply manager %s owns fields in %s, the legacy fields are in %s: "+
					"the CRD's versions are needed to translate them (Plan.Versions)", ErrAPIVersionMismatch, t.manager, to, t.apiVersion)
			}
			tr, untr := versions.Translate(fields, t.apiVersion, to, content)
			if !untr.Empty() {
				return nil, fmt.Errorf("%w: %s recorded in %s does not translate to %s, where %s applies: nothing was "+
					"written; hand those fields to a writer that applies through %s, or have their writer write them through %s first",
					ErrUntranslatable, untr, t.apiVersion, to, t.manager, t.apiVersion, to)
			}
			fields = tr
		}
		ds[idx].entry.Fields = ds[idx].entry.Fields.Union(fields)
	}
	return ds, nil
}

// releaseShared drops from each legacy entry, before-first-apply first, the
// status fields that some other entry owns at or below the same path, read
// in the legacy entry's API version (an entry of another version counts for
// what translates). Each entry is judged against the entries as already
// released, so a field two legacy entries share keeps one of them.
func releaseShared(mfs []metav1.ManagedFieldsEntry, versions *Versions, content map[string]any) ([]metav1.ManagedFieldsEntry, error) {
	ds, err := decodeAll(mfs)
	if err != nil {
		return nil, err
	}
	var legacy []int
	for i := range ds {
		if ds[i].entry.Legacy() {
			legacy = append(legacy, i)
		}
	}
	slices.SortStableFunc(legacy, func(a, b int) int {
		ea, eb := ds[a].entry, ds[b].entry
		if fa, fb := ea.Manager == ownership.BeforeFirstApplyManager, eb.Manager == ownership.BeforeFirstApplyManager; fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(ea.Manager, eb.Manager), cmp.Compare(ea.Subresource, eb.Subresource),
			cmp.Compare(ea.APIVersion, eb.APIVersion))
	})
	for _, i := range legacy {
		release := fieldpath.NewSet()
		others := make([]*fieldpath.Set, 0, len(ds))
		for j := range ds {
			if j != i {
				others = append(others, inVersion(ds[j].entry, ds[i].entry.APIVersion, versions, content))
			}
		}
		ds[i].entry.StatusFields().Iterate(func(p fieldpath.Path) {
			for _, o := range others {
				if !fieldsets.Subtree(o, p).Empty() {
					release.Insert(p)
					return
				}
			}
		})
		ds[i].entry.Fields = ds[i].entry.Fields.Difference(release)
	}
	return encodeAll(ds)
}

// checkNoneOrphaned returns an error wrapping ErrOrphanedFields when a field
// owned before a rewrite has no owner after it. A field counts as owned when
// an entry owns it or anything below it, read in the API version the field
// was recorded in: entries of other versions count for what translates to
// it (versions nil: nothing does). The API server keeps a list or struct
// alive while any of its members has an owner. An unowned field is not
// safe: when an apply manager removes the last field it owns in the same
// list, the API server deletes the list whole, the unowned field with it.
func checkNoneOrphaned(before, after []metav1.ManagedFieldsEntry, versions *Versions, content map[string]any) error {
	db, err := decodeAll(before)
	if err != nil {
		return err
	}
	da, err := decodeAll(after)
	if err != nil {
		return err
	}
	ownedIn := map[string]*fieldpath.Set{}
	orphans := fieldpath.NewSet()
	for _, d := range db {
		owned, ok := ownedIn[d.entry.APIVersion]
		if !ok {
			owned = fieldpath.NewSet()
			for _, a := range da {
				owned = owned.Union(inVersion(a.entry, d.entry.APIVersion, versions, content))
			}
			ownedIn[d.entry.APIVersion] = owned
		}
		d.entry.Fields.Iterate(func(p fieldpath.Path) {
			if fieldsets.Subtree(owned, p).Empty() {
				orphans.Insert(p)
			}
		})
	}
	if orphans.Empty() {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrOrphanedFields, orphans.String())
}

// inVersion is e's field set read in apiVersion: as it is in its own
// version, translated from another (versions nil: empty).
func inVersion(e ownership.Entry, apiVersion string, versions *Versions, content map[string]any) *fieldpath.Set {
	if e.APIVersion == apiVersion {
		return e.Fields
	}
	if versions == nil {
		return fieldpath.NewSet()
	}
	tr, _ := versions.Translate(e.Fields, e.APIVersion, apiVersion, content)
	return tr
}

// sameOwnership reports whether two managedFields lists give the same
// managers (by name, operation, subresource and API version) the same
// fields, whatever the order, timestamps and encoding.
func sameOwnership(a, b []metav1.ManagedFieldsEntry) (bool, error) {
	if len(a) != len(b) {
		return false, nil
	}
	da, err := decodeAll(a)
	if err != nil {
		return false, err
	}
	db, err := decodeAll(b)
	if err != nil {
		return false, err
	}
	for _, x := range da {
		found := slices.ContainsFunc(db, func(y decoded) bool {
			return x.entry.Manager == y.entry.Manager && x.entry.Operation == y.entry.Operation &&
				x.entry.Subresource == y.entry.Subresource && x.entry.APIVersion == y.entry.APIVersion &&
				x.entry.Fields.Equals(y.entry.Fields)
		})
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// deepCopy copies an object keeping its static type, so callers need no cast.
func deepCopy[T runtime.Object](obj T) T {
	return obj.DeepCopyObject().(T)
}

// MigrateFlags spells the plan as the flags of the statusapply migrate
// command, in a fixed order: --condition TYPE=MANAGER by type, then --from
// LEGACY=MANAGER by legacy manager, then --release-shared, --stale-versions
// and --drop-untranslatable. Each flag and
// its value are separate elements, ready for exec or a shell (names with
// shell metacharacters need quoting; see strconv.Quote). The command's own
// parser turns them back into p.
func (p Plan) MigrateFlags() []string {
	var out []string
	for _, t := range slices.Sorted(maps.Keys(p.Conditions)) {
		out = append(out, "--condition", t+"="+p.Conditions[t])
	}
	for _, from := range slices.Sorted(maps.Keys(p.Managers)) {
		out = append(out, "--from", from+"="+p.Managers[from])
	}
	if p.ReleaseShared {
		out = append(out, "--release-shared")
	}
	if p.RewriteStaleVersions {
		out = append(out, "--stale-versions")
	}
	if p.DropUntranslatable {
		out = append(out, "--drop-untranslatable")
	}
	return out
}
