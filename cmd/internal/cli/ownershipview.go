package cli

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/components"
	"github.com/statusapply/statusapply/ownership"
)

// objectRefView names an object in the printed documents.
type objectRefView struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// refView names obj for the printed documents.
func refView(obj runtime.Object) objectRefView {
	v := objectRefView{}
	v.APIVersion, v.Kind = obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	if m, err := meta.Accessor(obj); err == nil {
		v.Namespace, v.Name = m.GetNamespace(), m.GetName()
	}
	return v
}

// ref is the ownership.ObjectRef of v, for messages.
func (v objectRefView) ref() ownership.ObjectRef {
	return ownership.ObjectRef{GVK: schema.GroupVersionKind{Kind: v.Kind}, Namespace: v.Namespace, Name: v.Name}
}

// legacy reports whether e is a legacy writer to show as such: an Update on
// the status subresource or before-first-apply (ownership.Entry.Legacy), not
// written by a Kubernetes component (components.IsKubernetes).
func legacy(e ownership.Entry) bool {
	return e.Legacy() && !components.IsKubernetes(e.Manager)
}

// ownershipView is an object's status ownership in the shape both the table
// and the JSON output use: what each managedFields entry owns in status, and
// which status fields several managers own.
type ownershipView struct {
	// Managers has one element per managedFields entry, in server order.
	Managers []managerView `json:"managers"`
	// SharedStatusFields are the status fields owned by more than one
	// manager name. Containers (.status, a list or a map) whose members are
	// owned separately are left out: owning them decides nothing.
	SharedStatusFields []sharedView `json:"sharedStatusFields"`
}

// managerView is one managedFields entry.
type managerView struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Time        string `json:"time,omitempty"`
	// Legacy marks an Update on the status subresource or before-first-apply
	// (not by a Kubernetes component): a writer whose fields a migration
	// hands to apply managers.
	Legacy bool `json:"legacy"`
	// Conditions are the condition types the entry owns all or part of.
	Conditions []string `json:"conditions"`
	// WholeConditionsList says the entry owns .status.conditions as one
	// value: the list is atomic in the CRD schema.
	WholeConditionsList bool `json:"wholeConditionsList,omitempty"`
	// OtherStatusFields are the status fields outside conditions the entry
	// owns: leaves of its field set, never .status itself nor a container
	// whose members some entry owns.
	OtherStatusFields []string `json:"otherStatusFields"`
	// StaleVersion says why the CRD no longer serves APIVersion
	// (fleet.StaleRemoved: every server-side apply to the object fails;
	// fleet.StaleNotServed), empty when it serves it or its CRD was not read.
	StaleVersion string `json:"staleVersion,omitempty"`
}

// ownsStatus reports whether the entry owns anything in status.
func (m managerView) ownsStatus() bool {
	return len(m.Conditions) > 0 || m.WholeConditionsList || len(m.OtherStatusFields) > 0
}

// sharedView is one status field with several owners.
type sharedView struct {
	Path string `json:"path"`
	// Condition is the condition type the field belongs to, if any.
	Condition string   `json:"condition,omitempty"`
	Managers  []string `json:"managers"`
}

// viewOf builds the view of o; a nil o (every entry released by a
// migration) has no managers.
func viewOf(o *ownership.Ownership) ownershipView {
	v := ownershipView{Managers: []managerView{}, SharedStatusFields: []sharedView{}}
	if o == nil {
		return v
	}
	// A map-list's entries own their items; an entry that owns only the
	// list itself then owns an empty container, not the whole list.
	for _, e := range o.Entries {
		v.Managers = append(v.Managers, entryView(o, e))
	}
	for _, s := range o.SharedStatusFields() {
		if o.IsContainer(s.Path) {
			continue
		}
		v.SharedStatusFields = append(v.SharedStatusFields, sharedView{
			Path:      s.Path.String(),
			Condition: conditionOf(s.Path),
			Managers:  s.Managers,
		})
	}
	return v
}

// entryView converts one entry of o.
func entryView(o *ownership.Ownership, e ownership.Entry) managerView {
	m := managerView{
		Manager:             e.Manager,
		Operation:           string(e.Operation),
		Subresource:         e.Subresource,
		APIVersion:          e.APIVersion,
		Legacy:              legacy(e),
		Conditions:          e.ConditionTypes(),
		WholeConditionsList: o.OwnsWholeConditionsList(e),
		OtherStatusFields:   []string{},
	}
	if m.Conditions == nil {
		m.Conditions = []string{}
	}
	if !e.Time.IsZero() {
		m.Time = e.Time.UTC().Format(time.RFC3339)
	}
	for _, p := range o.OtherStatusFields(e) {
		m.OtherStatusFields = append(m.OtherStatusFields, p.String())
	}
	slices.Sort(m.OtherStatusFields)
	return m
}

// conditionOf returns the condition type when p lies at or below
// .status.conditions[type=X], else "".
func conditionOf(p fieldpath.Path) string {
	if len(p) < 3 || p[0].FieldName == nil || *p[0].FieldName != "status" ||
		p[1].FieldName == nil || *p[1].FieldName != "conditions" || p[2].Key == nil {
		return ""
	}
	for _, f := range *p[2].Key {
		if f.Name == "type" && f.Value != nil && f.Value.IsString() {
			return f.Value.AsString()
		}
	}
	return ""
}

// notes is the NOTES cell of a manager's row: whether it is a legacy
// writer, and what it shares with whom, conditions by type.
func notes(m managerView, shared []sharedView) string {
	var parts []string
	if m.Legacy {
		parts = append(parts, "legacy writer")
	}
	type group struct {
		with  string
		items []string
	}
	var groups []*group
	for _, s := range shared {
		if !slices.Contains(s.Managers, m.Manager) {
			continue
		}
		others := slices.DeleteFunc(slices.Clone(s.Managers), func(n string) bool { return n == m.Manager })
		with := strings.Join(others, ", ")
		item := s.Path
		if s.Condition != "" {
			item = "condition " + s.Condition
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.with == with })
		if i < 0 {
			groups = append(groups, &group{with: with})
			i = len(groups) - 1
		}
		if !slices.Contains(groups[i].items, item) {
			groups[i].items = append(groups[i].items, item)
		}
	}
	for _, g := range groups {
		parts = append(parts, "shares "+strings.Join(g.items, ", ")+" with "+g.with)
	}
	return strings.Join(parts, "; ")
}
