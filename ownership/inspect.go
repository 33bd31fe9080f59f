package ownership

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/fieldsets"
)

// BeforeFirstApplyManager is the manager name the API server gives to every
// field that existed, untracked, when an object without managedFields saw
// its first apply. It is an Update owner, so it conflicts with apply managers
// that change those fields and keeps fields alive that they drop; this
// package treats it as a legacy writer.
const BeforeFirstApplyManager = "before-first-apply"

// StatusSubresource is the subresource name recorded in managedFields for
// writes through /status; ssa.StatusSubresource is the same name, typed.
const StatusSubresource = "status"

// Entry is one managedFields record with its field set decoded.
type Entry struct {
	// Manager is the field manager's name.
	Manager string
	// Operation is Apply for server-side apply, Update for everything else
	// (create, update, JSON and merge patches).
	Operation metav1.ManagedFieldsOperationType
	// Subresource is "status" for writes through /status, else empty.
	Subresource string
	// APIVersion is the version the field set is expressed in.
	APIVersion string
	// Time is when the manager last changed a field it owns; zero when the
	// server recorded none.
	Time time.Time
	// Fields is the set of fields the entry owns. Callers may read it but
	// must not modify it.
	Fields *fieldpath.Set
}

// Legacy reports whether the entry belongs to a legacy status writer: an
// Update on the status subresource (merge patch, JSON patch or update of
// /status), or the API server's before-first-apply attribution. Their fields
// are what a migration hands to apply managers.
func (e Entry) Legacy() bool {
	if e.Operation != metav1.ManagedFieldsOperationUpdate {
		return false
	}
	return e.Subresource == StatusSubresource || e.Manager == BeforeFirstApplyManager
}

// Owns reports whether the entry owns exactly the field at p.
func (e Entry) Owns(p fieldpath.Path) bool {
	return e.Fields != nil && e.Fields.Has(p)
}

// ConditionTypes lists, sorted, the condition types whose
// .status.conditions[type=X] entries the manager owns all or part of.
func (e Entry) ConditionTypes() []string {
	return conditionTypes(e.Fields)
}

// StatusFields returns the fields the entry owns at or below .status, with
// full paths.
func (e Entry) StatusFields() *fieldpath.Set {
	return fieldsets.Subtree(e.Fields, StatusPath())
}

// String renders the entry's identity as the API server spells it in
// managedFields: "manager (Operation, subresource)".
func (e Entry) String() string {
	if e.Subresource == "" {
		return fmt.Sprintf("%s (%s)", e.Manager, e.Operation)
	}
	return fmt.Sprintf("%s (%s, %s)", e.Manager, e.Operation, e.Subresource)
}

// Ownership is an object's managedFields, decoded. It is a snapshot: it does
// not follow later changes to the object.
type Ownership struct {
	// Object names the object the managedFields came from.
	Object ObjectRef
	// Entries are in the order the API server returned them.
	Entries []Entry
}

// Inspect decodes obj's managedFields; obj may be a typed object or an
// *unstructured.Unstructured.
//
// An object with no managedFields at all yields an *ObjectError wrapping
// ErrNoManagedFields rather than an empty Ownership, so that callers cannot
// mistake a stripped object for one whose managers own nothing. An entry that
// does not decode is an error too, wrapping ErrBadManagedFields.
func Inspect(obj metav1.Object) (*Ownership, error) {
	ref := RefOf(obj)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		mfs, err := managedFieldsOf(u)
		if err != nil {
			return nil, &ObjectError{Object: ref, Op: "inspecting", Err: err}
		}
		return inspectEntries(ref, mfs)
	}
	return inspectEntries(ref, obj.GetManagedFields())
}

// managedFieldsOf decodes u's managedFields. Unstructured.GetManagedFields
// returns nil when one entry does not decode, which would make an object with
// unreadable entries pass for one read from a cache that strips them
// (ErrNoManagedFields, whose remedy, reading the object again, cannot help).
// A list item that is not a managedFields entry is ErrBadManagedFields; a
// managedFields that is not a list at all counts as none, as HasManagedFields
// says.
func managedFieldsOf(u *unstructured.Unstructured) ([]metav1.ManagedFieldsEntry, error) {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	items, _ := v.([]any)
	out := make([]metav1.ManagedFieldsEntry, 0, len(items))
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: entry %d is a %T, not an object", ErrBadManagedFields, i, item)
		}
		var mf metav1.ManagedFieldsEntry
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &mf); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrBadManagedFields, i, err)
		}
		out = append(out, mf)
	}
	return out, nil
}

// inspectEntries decodes managedFields that were read apart from their
// object, such as the result of a migration; ref names the object in errors.
// Empty managedFields yield ErrNoManagedFields, as for Inspect.
func inspectEntries(ref ObjectRef, managedFields []metav1.ManagedFieldsEntry) (*Ownership, error) {
	if len(managedFields) == 0 {
		return nil, &ObjectError{Object: ref, Op: "inspecting", Err: ErrNoManagedFields}
	}
	o := &Ownership{Object: ref, Entries: make([]Entry, 0, len(managedFields))}
	for _, mf := range managedFields {
		e, err := decodeEntry(mf)
		if err != nil {
			return nil, &ObjectError{Object: ref, Op: "inspecting", Err: err}
		}
		o.Entries = append(o.Entries, e)
	}
	return o, nil
}

// decodeEntry turns one managedFields record into an Entry. Its errors wrap
// ErrBadManagedFields.
func decodeEntry(mf metav1.ManagedFieldsEntry) (Entry, error) {
	e := Entry{
		Manager:     mf.Manager,
		Operation:   mf.Operation,
		Subresource: mf.Subresource,
		APIVersion:  mf.APIVersion,
		Fields:      fieldpath.NewSet(),
	}
	if mf.Time != nil {
		e.Time = mf.Time.Time
	}
	if mf.FieldsType != "" && mf.FieldsType != fieldsets.FieldsV1Type {
		return Entry{}, fmt.Errorf("manager %s: %w: unsupported fieldsType %q", e, ErrBadManagedFields, mf.FieldsType)
	}
	if mf.FieldsV1 == nil {
		return e, nil
	}
	if err := e.Fields.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
		return Entry{}, fmt.Errorf("manager %s: %w: decoding fieldsV1: %w", e, ErrBadManagedFields, err)
	}
	return e, nil
}

// Owners returns the entries that own exactly the field at p, such as
// ConditionPath("Ready") or
// fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Ready"), "status").
// A manager with several entries (Update and Apply, or two subresources)
// appears once per entry.
func (o *Ownership) Owners(p fieldpath.Path) []Entry {
	var out []Entry
	for _, e := range o.Entries {
		if e.Owns(p) {
			out = append(out, e)
		}
	}
	return out
}

// Managers returns the entries of the named manager, whatever their
// operation and subresource.
func (o *Ownership) Managers(name string) []Entry {
	var out []Entry
	for _, e := range o.Entries {
		if e.Manager == name {
			out = append(out, e)
		}
	}
	return out
}

// ConditionTypes maps each manager name to the sorted condition types it owns
// all or part of, merging the manager's entries. Managers that own no
// condition are left out.
func (o *Ownership) ConditionTypes() map[string][]string {
	out := map[string][]string{}
	for _, e := range o.Entries {
		if types := e.ConditionTypes(); len(types) > 0 {
			out[e.Manager] = sortedUnique(append(out[e.Manager], types...))
		}
	}
	return out
}

// ConditionOwners returns the entries that own all or part of the condition
// of the given type.
func (o *Ownership) ConditionOwners(condType string) []Entry {
	var out []Entry
	for _, e := range o.Entries {
		if slices.Contains(e.ConditionTypes(), condType) {
			out = append(out, e)
		}
	}
	return out
}

// Legacy returns the legacy writers' entries (see Entry.Legacy); their
// StatusFields are what they hold.
func (o *Ownership) Legacy() []Entry {
	var out []Entry
	for _, e := range o.Entries {
		if e.Legacy() {
			out = append(out, e)
		}
	}
	return out
}

// SharedField is a status field owned by more than one manager. With
// server-side apply, a shared field changes only when every owner applies the
// same value or one forces; a legacy co-owner keeps it alive when the others
// drop it.
type SharedField struct {
	// Path is the field, such as .status.conditions[type="Ready"].status.
	Path fieldpath.Path
	// Managers are the distinct owner names, sorted.
	Managers []string
}

// SharedStatusFields returns the fields at or below .status owned by more
// than one distinct manager name, sorted by path.
func (o *Ownership) SharedStatusFields() []SharedField {
	type owners struct {
		path     fieldpath.Path
		managers []string
	}
	byPath := map[string]*owners{}
	for _, e := range o.Entries {
		e.StatusFields().Iterate(func(p fieldpath.Path) {
			key := p.String()
			ow, ok := byPath[key]
			if !ok {
				ow = &owners{path: p.Copy()}
				byPath[key] = ow
			}
			if !slices.Contains(ow.managers, e.Manager) {
				ow.managers = append(ow.managers, e.Manager)
			}
		})
	}
	var out []SharedField
	for _, ow := range byPath {
		if len(ow.managers) > 1 {
			out = append(out, SharedField{Path: ow.path, Managers: sortedUnique(ow.managers)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path.Compare(out[j].Path) < 0 })
	return out
}

// String renders one line per entry with the condition types and the other
// status fields it owns, for dry-run output and logs.
func (o *Ownership) String() string {
	if o == nil {
		return "(no managedFields)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", o.Object)
	for _, e := range o.Entries {
		fmt.Fprintf(&b, "  %s", e)
		if types := e.ConditionTypes(); len(types) > 0 {
			fmt.Fprintf(&b, " conditions=%s", strings.Join(types, ","))
		}
		if other := otherStatusLeaves(e); len(other) > 0 {
			fmt.Fprintf(&b, " status=%s", strings.Join(other, ","))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// otherStatusLeaves lists the leaf status fields an entry owns outside
// .status.conditions, as path strings.
func otherStatusLeaves(e Entry) []string {
	conditions := fieldsets.Subtree(e.Fields, ConditionsPath())
	var out []string
	e.StatusFields().Difference(conditions).Leaves().Iterate(func(p fieldpath.Path) {
		out = append(out, p.String())
	})
	return out
}

// sortedUnique sorts s and removes duplicates in place.
func sortedUnique(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// IsContainer reports whether some entry owns a field strictly below p, so
// that p is a parent (.status, a list, a struct) whose members carry the
// ownership that matters. A merge patch that set one condition records
// .status and .status.conditions as its own too; owning such a container
// decides nothing.
func (o *Ownership) IsContainer(p fieldpath.Path) bool {
	return o.isContainerIn(p, "")
}

// ownsBelow reports whether s has a member strictly below p, walking to p's
// node without copying anything.
func ownsBelow(s *fieldpath.Set, p fieldpath.Path) bool {
	if s == nil || len(p) == 0 {
		return false
	}
	cur := s
	for _, pe := range p {
		child, ok := cur.Children.Get(pe)
		if !ok {
			return false
		}
		cur = child
	}
	return !cur.Empty()
}

// OtherStatusFields lists, sorted by path, the status fields outside
// .status.conditions that e (an entry of o) owns: leaves of its field set,
// never .status itself nor a container whose members some entry recorded in
// e's API version owns. Entries of other versions do not count: a field set
// is read with the schema of its own version, where the same path can be an
// atomic value (see OwnsWholeConditionsList).
func (o *Ownership) OtherStatusFields(e Entry) []fieldpath.Path {
	var out []fieldpath.Path
	conditions := ConditionsPath()
	e.StatusFields().Leaves().Iterate(func(p fieldpath.Path) {
		if len(p) < 2 || hasPrefix(p, conditions) || o.isContainerIn(p, e.APIVersion) {
			return
		}
		out = append(out, p.Copy())
	})
	slices.SortFunc(out, fieldpath.Path.Compare)
	return out
}

// OwnsWholeConditionsList reports whether e owns .status.conditions as one
// value: the list is atomic in the schema of e's API version. When some
// entry of o recorded in the same version owns conditions by type, the list
// is a map-list there and owning it means owning an empty container, not the
// whole list. Entries of other versions do not decide it: a CRD can serve a
// version whose conditions are atomic beside one whose conditions are a map
// list (Cluster API's Machine v1beta1 and v1beta2), and a writer through the
// atomic one owns the whole list even while others own items through the
// other.
func (o *Ownership) OwnsWholeConditionsList(e Entry) bool {
	return !o.isContainerIn(ConditionsPath(), e.APIVersion) && e.Owns(ConditionsPath())
}

// isContainerIn is IsContainer among the entries recorded in apiVersion,
// or among all entries for "".
func (o *Ownership) isContainerIn(p fieldpath.Path, apiVersion string) bool {
	for _, e := range o.Entries {
		if (apiVersion == "" || e.APIVersion == apiVersion) && ownsBelow(e.Fields, p) {
			return true
		}
	}
	return false
}

// hasPrefix reports whether p is prefix or lies below it.
func hasPrefix(p, prefix fieldpath.Path) bool {
	if len(p) < len(prefix) {
		return false
	}
	for i := range prefix {
		if !p[i].Equals(prefix[i]) {
			return false
		}
	}
	return true
}
