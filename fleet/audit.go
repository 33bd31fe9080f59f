package fleet

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/pager"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/components"
	"github.com/statusapply/statusapply/internal/durations"
	"github.com/statusapply/statusapply/ownership"
)

// DefaultAuditWindow is how far back a legacy writer's last write makes it
// count as still active, when AuditOptions.Window is zero.
const DefaultAuditWindow = 24 * time.Hour

// DefaultAuditExamples is how many object names each group of objects in an
// AuditReport lists, when AuditOptions.Examples is zero.
const DefaultAuditExamples = 5

// AuditOptions tune Audit. The zero value audits as of now, with a 24-hour
// window and without a schema check.
type AuditOptions struct {
	// Now is the audit's clock reading; zero means time.Now(). Tests and
	// reproducible reports pass a fixed time.
	Now time.Time
	// Window is how far before Now a legacy writer's last write makes it an
	// active legacy writer; zero means DefaultAuditWindow. It must not be
	// negative.
	Window time.Duration
	// Examples caps the object names listed for untracked and
	// before-first-apply objects; zero means DefaultAuditExamples, a
	// negative value lists none. Counts are always complete.
	Examples int
	// CRD is the kind's CustomResourceDefinition: its served versions'
	// status schemas are checked for atomic lists and maps (LintCRDs). Nil
	// leaves the schema unchecked, and the report says so with
	// SchemaUnavailable.
	CRD *apiextensionsv1.CustomResourceDefinition
	// SchemaUnavailable says why CRD is nil, such as "the kind is not a
	// custom resource" or the error reading the CRD; the report carries it.
	SchemaUnavailable string
	// Writers declares the new status writers: each apply manager's name,
	// and the condition types it writes from now on (or status fields, as
	// paths such as .status.phase). The verdict counts a declared writer as
	// an apply manager of what it writes, beside the Apply entries it finds
	// on the objects, so that a condition only a legacy writer holds can be
	// handed to its new writer by name. That is the only way to attribute
	// it while the new writer's applies restate the legacy values: such an
	// apply sends nothing, so the writer never appears in managedFields,
	// and one that changes a value conflicts with the legacy owner. A type
	// two writers claim (declared or applying) stays unresolved.
	Writers map[string][]string
}

// AuditReport summarises who writes what in the status of every object of a
// kind, and what a migration to apply managers must cover. Its JSON form is
// the stable document of `statusapply audit -o json`: fields are only ever
// added. Lists are sorted (managers by name, operation, subresource and API
// version; fields by name) and never null.
type AuditReport struct {
	// Objects counts the objects read.
	Objects int `json:"objects"`
	// Window is AuditOptions.Window, and ActiveSince the time it starts:
	// legacy writers that wrote at or after it are ActiveLegacyWriters.
	Window      metav1.Duration `json:"window"`
	ActiveSince metav1.Time     `json:"activeSince"`
	// Managers has one element per field manager, operation, subresource
	// and API version seen in any object's managedFields.
	Managers []ManagerAudit `json:"managers"`
	// ActiveLegacyWriters are the legacy writers (Entry.Legacy, except
	// before-first-apply and Kubernetes components) whose last write on
	// some object lies within the window: a migration does not stop them,
	// and their next write takes their fields back.
	ActiveLegacyWriters []ActiveWriter `json:"activeLegacyWriters"`
	// Untracked are the objects without managedFields: written only by
	// create, update and patches, never applied. Their status is unowned
	// until a first apply attributes it to before-first-apply.
	Untracked ObjectGroup `json:"untracked"`
	// BeforeFirstApply are the objects carrying a before-first-apply entry.
	BeforeFirstApply ObjectGroup `json:"beforeFirstApply"`
	// SharedFields are the status fields owned by more than one manager on
	// some object, per set of managers; containers whose members are owned
	// separately are left out.
	SharedFields []SharedFieldAudit `json:"sharedFields"`
	// Schema is the result of checking the kind's CRD schema.
	Schema SchemaAudit `json:"schema"`
	// Unreadable are the objects whose managedFields did not decode; they
	// count in Objects and nowhere else.
	Unreadable []UnreadableObject `json:"unreadable"`
	// StaleVersions are the API versions the CRD does not serve that some
	// object's managedFields entries are still recorded in, one element per
	// version. Empty when the CRD was not read.
	StaleVersions []StaleVersionAudit `json:"staleVersions"`
	// Verdict says what a migration plan must cover.
	Verdict AuditVerdict `json:"verdict"`
}

// ManagerAudit is one field manager's writes across the objects.
type ManagerAudit struct {
	Manager string `json:"manager"`
	// Operation is Apply or Update.
	Operation string `json:"operation"`
	// Subresource is "status" for writes through /status, else empty.
	Subresource string `json:"subresource,omitempty"`
	APIVersion  string `json:"apiVersion"`
	// Legacy marks a legacy writer (Entry.Legacy) that is not a Kubernetes
	// component: its status fields are what a migration hands over.
	Legacy bool `json:"legacy"`
	// Objects counts the objects carrying this entry.
	Objects int `json:"objects"`
	// LastWrite is the latest managedFields time of the entry on any
	// object; absent when the server recorded none.
	LastWrite *metav1.Time `json:"lastWrite,omitempty"`
	// Conditions are the condition types it owns all or part of, with the
	// number of objects on which it does.
	Conditions []FieldCount `json:"conditions"`
	// OtherStatusFields are the status fields outside conditions it owns
	// (Ownership.OtherStatusFields), with the number of objects.
	OtherStatusFields []FieldCount `json:"otherStatusFields"`
	// WholeConditionsList counts the objects on which it owns
	// .status.conditions as one value: the list is atomic.
	WholeConditionsList int `json:"wholeConditionsList,omitempty"`
}

// FieldCount is a condition type or a status field path, and on how many
// objects it is owned.
type FieldCount struct {
	Name    string `json:"name"`
	Objects int    `json:"objects"`
}

// ActiveWriter is a legacy writer that wrote within the audit's window.
type ActiveWriter struct {
	Manager     string `json:"manager"`
	Subresource string `json:"subresource,omitempty"`
	// Objects counts the objects it wrote within the window.
	Objects   int         `json:"objects"`
	LastWrite metav1.Time `json:"lastWrite"`
}

// ObjectGroup counts objects, and names the first few (in the order read)
// as "Kind namespace/name".
type ObjectGroup struct {
	Objects  int      `json:"objects"`
	Examples []string `json:"examples"`
}

// SharedFieldAudit is a status field owned by the same set of managers on
// Objects objects.
type SharedFieldAudit struct {
	// Path is the field, such as .status.conditions[type="Ready"].status.
	Path string `json:"path"`
	// Condition is the condition type the field belongs to, if any.
	Condition string `json:"condition,omitempty"`
	// Managers are the owners' names, sorted.
	Managers []string `json:"managers"`
	Objects  int      `json:"objects"`
}

// SchemaAudit is what the kind's CRD schema says about atomic lists and
// maps under status.
type SchemaAudit struct {
	// CRD is the CustomResourceDefinition's name when it was read.
	CRD string `json:"crd,omitempty"`
	// Checked says the schema was checked; Unavailable then is empty, else
	// it says why not.
	Checked     bool   `json:"checked"`
	Unavailable string `json:"unavailable,omitempty"`
	// Findings are LintCRDs' findings: an error for a conditions list that
	// is not a map-list keyed by type, warnings for other atomic lists and
	// maps.
	Findings []SchemaFinding `json:"findings"`
}

// SchemaFinding is one lint finding of the kind's schema.
type SchemaFinding struct {
	Version  string `json:"version"`
	Path     string `json:"path"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// StaleVersionAudit is an API version the CRD does not serve that entries
// are recorded in.
type StaleVersionAudit struct {
	APIVersion string `json:"apiVersion"`
	// Reason is "removed" (the CRD no longer lists it) or "not served".
	Reason string `json:"reason"`
	// ApplyError is what every server-side apply to such an object gets,
	// for a removed version; empty for one not served.
	ApplyError string `json:"applyError,omitempty"`
	// Managers are the names of the entries recorded in it, sorted.
	Managers []string `json:"managers"`
	// Objects counts the objects carrying such entries, and Examples names
	// the first few.
	ObjectGroup `json:",inline"`
	// Untranslatable counts the objects on which some of those entries'
	// fields do not translate to the storage version.
	Untranslatable int `json:"untranslatable,omitempty"`
}

// UnreadableObject is an object whose managedFields did not decode.
type UnreadableObject struct {
	Object string `json:"object"`
	Error  string `json:"error"`
}

// AuditVerdict is what a migration plan must cover, as a Plan and as the
// flags of `statusapply migrate`.
//
// Destinations are inferred from what the apply managers already own: a
// condition type a legacy writer holds goes to the one apply manager that
// owns it on some object (--condition), a legacy writer's remaining status
// fields go to the one apply manager that owns all of them (--from), a
// legacy writer that also applies under its own name is upgraded to itself
// (--from L=L), and --release-shared is added when a legacy writer shares a
// field with another manager. Whatever cannot be inferred (nobody applies
// it yet, or several managers do) is listed in Unresolved, never guessed:
// handing a field to a manager that does not apply it would make that
// manager's next apply delete it.
type AuditVerdict struct {
	// MigrationNeeded says legacy ownership exists (legacy writers,
	// before-first-apply entries, or untracked objects), or entries recorded
	// in versions the CRD does not serve.
	MigrationNeeded bool `json:"migrationNeeded"`
	// Conditions, Managers and ReleaseShared are the Plan's fields.
	Conditions    map[string]string `json:"conditions,omitempty"`
	Managers      map[string]string `json:"managers,omitempty"`
	ReleaseShared bool              `json:"releaseShared"`
	// StaleVersions is Plan.RewriteStaleVersions: entries recorded in
	// versions the CRD does not serve all translate to the storage version.
	StaleVersions bool `json:"staleVersions,omitempty"`
	// Flags are the arguments of `statusapply migrate` after the resource
	// and selection flags: Plan().MigrateFlags(), then --new-destination
	// for each declared writer (AuditOptions.Writers) the plan hands fields
	// to. Empty when nothing can be migrated yet.
	Flags []string `json:"flags"`
	// Unresolved are the parts of the legacy ownership the flags leave
	// where they are, each with what to decide.
	Unresolved []string `json:"unresolved"`
	// Notes are what else the migration must take into account: active
	// legacy writers, untracked objects, the schema, declared writers of
	// condition types or fields no object has.
	Notes []string `json:"notes"`
	// Writers are AuditOptions.Writers, sorted, when any were declared.
	Writers map[string][]string `json:"writers,omitempty"`
}

// Plan returns the verdict's migration plan; it is invalid (Validate) when
// Flags is empty. Flags may also carry --new-destination, which is no part
// of the plan.
func (v AuditVerdict) Plan() Plan {
	return Plan{Conditions: v.Conditions, Managers: v.Managers, ReleaseShared: v.ReleaseShared,
		RewriteStaleVersions: v.StaleVersions}
}

// HasFindings reports whether the audit found something a migration
// campaign must still act on: legacy ownership (Verdict.MigrationNeeded,
// before-first-apply and writers owning an atomic list whole through a
// served version included), entries recorded in versions the CRD does not
// serve, active legacy writers, unreadable objects, or an error finding in
// the schema. Apply managers sharing a field among themselves is not a
// finding.
func (r *AuditReport) HasFindings() bool {
	return r.Verdict.MigrationNeeded || len(r.StaleVersions) > 0 || len(r.ActiveLegacyWriters) > 0 || len(r.Unreadable) > 0 ||
		slices.ContainsFunc(r.Schema.Findings, func(f SchemaFinding) bool { return f.Severity == string(SeverityError) })
}

// Audit reads every object objs yields and summarises who writes what in
// their status (see AuditReport). Objects are consumed one at a time and
// not retained, so a fleet listed page by page (ListObjects) is audited in
// memory proportional to the number of distinct managers and fields, not
// objects. objs should be read from the API server, never from a cache that
// strips managedFields: such objects would count as untracked.
//
// The first error objs yields stops the audit and is returned: a summary of
// part of a fleet would pass for the whole. Objects whose managedFields do
// not decode are recorded in the report, not errors.
func Audit(objs iter.Seq2[metav1.Object, error], opts AuditOptions) (*AuditReport, error) {
	if opts.Window < 0 {
		return nil, fmt.Errorf("auditing: window %s: must not be negative", opts.Window)
	}
	if err := ValidateWriters(opts.Writers); err != nil {
		return nil, fmt.Errorf("auditing: %w", err)
	}
	a := newAuditor(opts)
	for obj, err := range objs {
		if err != nil {
			return nil, fmt.Errorf("auditing after %d objects: %w", a.objects, err)
		}
		a.add(obj)
	}
	return a.report(), nil
}

// ListObjects yields the objects of gvk (a kind, such as Widget, not its
// list kind) as unstructured objects, read page by page with client-go's
// pager: at most pageSize objects per request (pageSize <= 0 means the
// pager's default, 500), and only the page being yielded and the next one in
// memory. opts narrow the list (client.InNamespace, client.MatchingLabels,
// ...). c must read from the API server, never from a cache.
//
// A failed request yields one error and ends the sequence; so does a
// continue token that expired during a long list, rather than falling back
// to one unpaginated list of everything.
func ListObjects(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, pageSize int64, opts ...client.ListOption) iter.Seq2[metav1.Object, error] {
	return func(yield func(metav1.Object, error) bool) {
		base := &client.ListOptions{}
		base.ApplyOptions(opts)
		p := pager.New(func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			page := &unstructured.UnstructuredList{}
			page.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			o := *base
			o.Limit, o.Continue = lo.Limit, lo.Continue
			if err := c.List(ctx, page, &o); err != nil {
				return nil, err
			}
			return page, nil
		})
		if pageSize > 0 {
			p.PageSize = pageSize
		}
		p.PageBufferSize = 0
		p.FullListIfExpired = false
		stopped := errors.New("the caller stopped")
		err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
			m, err := meta.Accessor(obj)
			if err != nil {
				return err
			}
			if !yield(m, nil) {
				return stopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopped) {
			yield(nil, fmt.Errorf("listing %s: %w", gvk.Kind, err))
		}
	}
}

// managerKey identifies a ManagerAudit.
type managerKey struct {
	manager, operation, subresource, apiVersion string
}

// managerTally accumulates one ManagerAudit.
type managerTally struct {
	legacy     bool
	objects    int
	last       time.Time
	conditions map[string]int
	fields     map[string]int
	wholeList  int
}

// activeKey identifies an ActiveWriter.
type activeKey struct {
	manager, subresource string
}

// activeTally accumulates one ActiveWriter.
type activeTally struct {
	objects int
	last    time.Time
}

// sharedKey identifies a SharedFieldAudit: a path and its owners.
type sharedKey struct {
	path, managers string
}

// sharedTally accumulates one SharedFieldAudit.
type sharedTally struct {
	condition string
	managers  []string
	objects   int
}

// auditor accumulates an AuditReport one object at a time. Besides the
// report's tallies it keeps, for the verdict, which apply and legacy
// managers own which condition types and other status fields anywhere.
type auditor struct {
	opts     AuditOptions
	now      time.Time
	since    time.Time
	examples int

	objects          int
	managers         map[managerKey]*managerTally
	active           map[activeKey]*activeTally
	shared           map[sharedKey]*sharedTally
	untracked, first ObjectGroup
	unreadable       []UnreadableObject

	applyNames, legacyNames sets.Set[string]
	// applyConditions and applyFields map a condition type or field path
	// to the apply managers owning it on some object.
	applyConditions, applyFields map[string]sets.Set[string]
	// legacyConditions maps a condition type to the legacy managers holding
	// it; legacyFields a legacy manager to the other status fields it holds.
	legacyConditions, legacyFields map[string]sets.Set[string]
	// legacyShared says some legacy writer shares a field with another
	// manager.
	legacyShared bool
	// seenConditions and seenFields are every condition type and other
	// status field any entry (or untracked status) has, to check the
	// declared writers against.
	seenConditions, seenFields sets.Set[string]
	// declaredConditions and declaredFields map a condition type or field
	// path to the writers AuditOptions.Writers declares for it.
	declaredConditions, declaredFields map[string]sets.Set[string]

	// versions is the CRD's versions, nil when it was not given or not
	// readable (versionsErr says why).
	versions    *Versions
	versionsErr error
	// stale tallies entries in versions the CRD does not serve, by
	// version.
	stale map[string]*staleTally
	// legacyVersions maps a condition type or a legacy manager's field
	// ("manager\x00path") to the versions the legacy entries holding it
	// are recorded in; applyVersions an apply manager to the versions of
	// its status entries; paths a field's string to its path.
	legacyVersions map[string]sets.Set[string]
	applyVersions  map[string]sets.Set[string]
	paths          map[string]fieldpath.Path
}

// staleTally accumulates one StaleVersionAudit.
type staleTally struct {
	reason         string
	managers       sets.Set[string]
	objects        ObjectGroup
	untranslatable int
}

func newAuditor(opts AuditOptions) *auditor {
	a := &auditor{
		opts:             opts,
		now:              opts.Now,
		examples:         opts.Examples,
		managers:         map[managerKey]*managerTally{},
		active:           map[activeKey]*activeTally{},
		shared:           map[sharedKey]*sharedTally{},
		untracked:        ObjectGroup{Examples: []string{}},
		first:            ObjectGroup{Examples: []string{}},
		unreadable:       []UnreadableObject{},
		applyNames:       sets.New[string](),
		legacyNames:      sets.New[string](),
		applyConditions:  map[string]sets.Set[string]{},
		applyFields:      map[string]sets.Set[string]{},
		legacyConditions: map[string]sets.Set[string]{},
		legacyFields:     map[string]sets.Set[string]{},

		seenConditions:     sets.New[string](),
		seenFields:         sets.New[string](),
		declaredConditions: map[string]sets.Set[string]{},
		declaredFields:     map[string]sets.Set[string]{},

		stale:          map[string]*staleTally{},
		legacyVersions: map[string]sets.Set[string]{},
		applyVersions:  map[string]sets.Set[string]{},
		paths:          map[string]fieldpath.Path{},
	}
	if opts.CRD != nil {
		a.versions, a.versionsErr = VersionsOf(opts.CRD)
	}
	for manager, writes := range opts.Writers {
		for _, w := range writes {
			if strings.HasPrefix(w, ".") {
				addTo(a.declaredFields, w, manager)
			} else {
				addTo(a.declaredConditions, w, manager)
			}
		}
	}
	if a.now.IsZero() {
		a.now = time.Now()
	}
	if a.opts.Window == 0 {
		a.opts.Window = DefaultAuditWindow
	}
	if a.examples == 0 {
		a.examples = DefaultAuditExamples
	}
	a.since = a.now.Add(-a.opts.Window)
	return a
}

// addTo records name under key in m.
func addTo(m map[string]sets.Set[string], key, name string) {
	if m[key] == nil {
		m[key] = sets.New[string]()
	}
	m[key].Insert(name)
}

// note counts an object in g, naming it while there is room.
func (a *auditor) note(g *ObjectGroup, ref ownership.ObjectRef) {
	g.Objects++
	if len(g.Examples) < a.examples {
		g.Examples = append(g.Examples, ref.String())
	}
}

// add tallies one object.
func (a *auditor) add(obj metav1.Object) {
	a.objects++
	ref := ownership.RefOf(obj)
	if len(obj.GetManagedFields()) == 0 {
		// The first apply will attribute everything to before-first-apply:
		// for the verdict, that is who holds its status.
		a.note(&a.untracked, ref)
		a.legacyNames.Insert(ownership.BeforeFirstApplyManager)
		for _, t := range statusConditionTypes(obj) {
			addTo(a.legacyConditions, t, ownership.BeforeFirstApplyManager)
			a.seenConditions.Insert(t)
		}
		for _, p := range statusLeaves(obj) {
			addTo(a.legacyFields, ownership.BeforeFirstApplyManager, p)
			a.seenFields.Insert(p)
		}
		return
	}
	o, err := ownership.Inspect(obj)
	if err != nil {
		a.unreadable = append(a.unreadable, UnreadableObject{Object: ref.String(), Error: err.Error()})
		return
	}
	seen := map[managerKey]bool{}
	legacyHere := map[string]bool{}
	hasFirst := false
	content := contentOf(obj)
	if a.versions != nil {
		a.addStale(ref, o, content)
	}
	for _, e := range o.Entries {
		k := managerKey{e.Manager, string(e.Operation), e.Subresource, e.APIVersion}
		t := a.managers[k]
		if t == nil {
			t = &managerTally{
				legacy:     e.Legacy() && !components.IsKubernetes(e.Manager),
				conditions: map[string]int{},
				fields:     map[string]int{},
			}
			a.managers[k] = t
		}
		if !seen[k] {
			seen[k] = true
			t.objects++
		}
		if e.Time.After(t.last) {
			t.last = e.Time
		}
		types := e.ConditionTypes()
		var fields []string
		for _, p := range o.OtherStatusFields(e) {
			fields = append(fields, p.String())
			a.paths[p.String()] = p
		}
		for _, c := range types {
			t.conditions[c]++
		}
		for _, f := range fields {
			t.fields[f]++
		}
		a.seenConditions.Insert(types...)
		a.seenFields.Insert(fields...)
		if o.OwnsWholeConditionsList(e) && !a.versions.mapList(ownership.ConditionsPath(), e.APIVersion) {
			t.wholeList++
			// An atomic list owned whole holds every condition in it: what
			// a migration hands over per type (Versions.Translate expands
			// it into the items of a version where it is a map list).
			types = sets.List(sets.New(types...).Insert(statusConditionTypesOf(content)...))
			a.seenConditions.Insert(types...)
		}
		hasFirst = hasFirst || e.Manager == ownership.BeforeFirstApplyManager
		legacyHere[e.Manager] = legacyHere[e.Manager] || t.legacy
		switch {
		case e.Operation == metav1.ManagedFieldsOperationApply:
			a.applyNames.Insert(e.Manager)
			if e.Subresource == ownership.StatusSubresource {
				addTo(a.applyVersions, e.Manager, e.APIVersion)
			}
			for _, c := range types {
				addTo(a.applyConditions, c, e.Manager)
			}
			for _, f := range fields {
				addTo(a.applyFields, f, e.Manager)
			}
		case t.legacy && len(types)+len(fields) > 0:
			// A legacy entry left with nothing in status (before-first-apply
			// keeping only metadata and spec) has nothing to hand over.
			a.legacyNames.Insert(e.Manager)
			for _, c := range types {
				addTo(a.legacyConditions, c, e.Manager)
				addTo(a.legacyVersions, c, e.APIVersion)
			}
			for _, f := range fields {
				addTo(a.legacyFields, e.Manager, f)
				addTo(a.legacyVersions, e.Manager+"\x00"+f, e.APIVersion)
			}
			if e.Manager != ownership.BeforeFirstApplyManager && !e.Time.IsZero() && !e.Time.Before(a.since) {
				ak := activeKey{e.Manager, e.Subresource}
				at := a.active[ak]
				if at == nil {
					at = &activeTally{}
					a.active[ak] = at
				}
				at.objects++
				if e.Time.After(at.last) {
					at.last = e.Time
				}
			}
		}
	}
	if hasFirst {
		a.note(&a.first, ref)
	}
	for _, s := range o.SharedStatusFields() {
		if o.IsContainer(s.Path) {
			continue
		}
		if slices.ContainsFunc(s.Managers, func(m string) bool { return legacyHere[m] }) {
			a.legacyShared = true
		}
		k := sharedKey{path: s.Path.String(), managers: strings.Join(s.Managers, "\x00")}
		st := a.shared[k]
		if st == nil {
			st = &sharedTally{condition: conditionOfPath(s.Path), managers: s.Managers}
			a.shared[k] = st
		}
		st.objects++
	}
}

// report builds the report from the tallies.
func (a *auditor) report() *AuditReport {
	r := &AuditReport{
		Objects:             a.objects,
		Window:              metav1.Duration{Duration: a.opts.Window},
		ActiveSince:         metav1.NewTime(a.since.UTC().Truncate(time.Second)),
		Managers:            []ManagerAudit{},
		ActiveLegacyWriters: []ActiveWriter{},
		Untracked:           a.untracked,
		BeforeFirstApply:    a.first,
		SharedFields:        []SharedFieldAudit{},
		Schema:              a.schema(),
		Unreadable:          a.unreadable,
		StaleVersions:       []StaleVersionAudit{},
	}
	for _, version := range slices.Sorted(maps.Keys(a.stale)) {
		t := a.stale[version]
		sv := StaleVersionAudit{
			APIVersion: version, Reason: t.reason, Managers: sets.List(t.managers),
			ObjectGroup: t.objects, Untranslatable: t.untranslatable,
		}
		if t.reason == StaleRemoved {
			sv.ApplyError = ApplyError
		}
		r.StaleVersions = append(r.StaleVersions, sv)
	}
	keys := slices.SortedFunc(maps.Keys(a.managers), func(x, y managerKey) int {
		return strings.Compare(x.manager+"\x00"+x.operation+"\x00"+x.subresource+"\x00"+x.apiVersion,
			y.manager+"\x00"+y.operation+"\x00"+y.subresource+"\x00"+y.apiVersion)
	})
	for _, k := range keys {
		t := a.managers[k]
		m := ManagerAudit{
			Manager: k.manager, Operation: k.operation, Subresource: k.subresource, APIVersion: k.apiVersion,
			Legacy: t.legacy, Objects: t.objects, WholeConditionsList: t.wholeList,
			Conditions: counts(t.conditions), OtherStatusFields: counts(t.fields),
		}
		if !t.last.IsZero() {
			last := metav1.NewTime(t.last.UTC())
			m.LastWrite = &last
		}
		r.Managers = append(r.Managers, m)
	}
	for _, k := range slices.SortedFunc(maps.Keys(a.active), func(x, y activeKey) int {
		return strings.Compare(x.manager+"\x00"+x.subresource, y.manager+"\x00"+y.subresource)
	}) {
		t := a.active[k]
		r.ActiveLegacyWriters = append(r.ActiveLegacyWriters, ActiveWriter{
			Manager: k.manager, Subresource: k.subresource, Objects: t.objects, LastWrite: metav1.NewTime(t.last.UTC()),
		})
	}
	for _, k := range slices.SortedFunc(maps.Keys(a.shared), func(x, y sharedKey) int {
		return strings.Compare(x.path+"\x01"+x.managers, y.path+"\x01"+y.managers)
	}) {
		t := a.shared[k]
		r.SharedFields = append(r.SharedFields, SharedFieldAudit{
			Path: k.path, Condition: t.condition, Managers: t.managers, Objects: t.objects,
		})
	}
	r.Verdict = a.verdict(r)
	return r
}

// counts turns a tally into FieldCounts sorted by name.
func counts(m map[string]int) []FieldCount {
	out := make([]FieldCount, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, FieldCount{Name: name, Objects: m[name]})
	}
	return out
}

// schema checks the CRD of the options, if any.
func (a *auditor) schema() SchemaAudit {
	s := SchemaAudit{Findings: []SchemaFinding{}}
	if a.opts.CRD == nil {
		s.Unavailable = a.opts.SchemaUnavailable
		if s.Unavailable == "" {
			s.Unavailable = "no CustomResourceDefinition given"
		}
		return s
	}
	s.CRD, s.Checked = a.opts.CRD.Name, true
	for _, f := range LintCRDs(a.opts.CRD) {
		s.Findings = append(s.Findings, SchemaFinding{
			Version: f.Version, Path: f.Path, Severity: string(f.Severity), Message: f.Message,
		})
	}
	return s
}

// verdict infers the migration plan (see AuditVerdict).
func (a *auditor) verdict(r *AuditReport) AuditVerdict {
	v := AuditVerdict{Flags: []string{}, Unresolved: []string{}, Notes: []string{}}
	for _, w := range r.ActiveLegacyWriters {
		v.Notes = append(v.Notes, fmt.Sprintf(
			"legacy writer %s wrote %s within %s: switch it to apply (or stop it) before migrating, "+
				"or its next write takes its fields back", w.Manager, countOf(w.Objects), durations.Short(r.Window.Duration)))
	}
	if n := r.Untracked.Objects; n > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf(
			"%s without managedFields: migrate seeds them first, and their status counts as %s's in the flags",
			countOf(n), ownership.BeforeFirstApplyManager))
	}
	if n := len(r.Unreadable); n > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("%s with unreadable managedFields left out of the verdict", countOf(n)))
	}
	switch {
	case !r.Schema.Checked:
		v.Notes = append(v.Notes, "schema not checked: "+r.Schema.Unavailable)
	case slices.ContainsFunc(r.Schema.Findings, func(f SchemaFinding) bool { return f.Severity == string(SeverityError) }):
		v.Notes = append(v.Notes, "status.conditions is atomic in "+r.Schema.CRD+
			": every second writer conflicts on the whole list; make it a map-list keyed by type (statusapply lint) "+
			"before migrating per condition type")
	}
	if len(a.opts.Writers) > 0 {
		v.Writers = map[string][]string{}
		for manager, writes := range a.opts.Writers {
			v.Writers[manager] = slices.Compact(slices.Sorted(slices.Values(writes)))
		}
		for _, t := range slices.Sorted(maps.Keys(a.declaredConditions)) {
			if !a.seenConditions.Has(t) {
				v.Notes = append(v.Notes, fmt.Sprintf("--writer %s=%s: no object has condition %s",
					strings.Join(sets.List(a.declaredConditions[t]), ","), t, t))
			}
		}
		for _, f := range slices.Sorted(maps.Keys(a.declaredFields)) {
			if !a.seenFields.Has(f) {
				v.Notes = append(v.Notes, fmt.Sprintf("--writer %s=%s: no object has status field %s",
					strings.Join(sets.List(a.declaredFields[f]), ","), f, f))
			}
		}
	}
	v.StaleVersions = a.staleVerdict(&v, r)
	if a.legacyNames.Len() == 0 {
		v.MigrationNeeded = len(r.StaleVersions) > 0
		if p := v.Plan(); v.StaleVersions && p.Validate() == nil {
			v.Flags = p.MigrateFlags()
		}
		return v
	}
	v.MigrationNeeded = true

	// The writers of each condition type and field: the apply managers
	// owning it on some object, and the writers declared for it.
	applyConditions := withDeclared(a.applyConditions, a.declaredConditions)
	applyFields := withDeclared(a.applyFields, a.declaredFields)
	// describe names writers, marking those only declared for key.
	describe := func(names []string, observed map[string]sets.Set[string], key string) string {
		out := make([]string, 0, len(names))
		for _, n := range names {
			if !observed[key].Has(n) {
				n += " (declared)"
			}
			out = append(out, n)
		}
		return strings.Join(out, ", ")
	}

	// A destination must not be a legacy writer anywhere (CheckPlan), except
	// a legacy writer upgraded to its own name (self): then it must apply
	// every field it keeps.
	destinations := func(owners sets.Set[string], self string) sets.Set[string] {
		out := owners.Difference(a.legacyNames)
		if self != ownership.BeforeFirstApplyManager && owners.Has(self) {
			out.Insert(self)
		}
		return out
	}
	conditions := map[string]string{}
	for _, t := range slices.Sorted(maps.Keys(a.legacyConditions)) {
		holders, appliers := a.legacyConditions[t], applyConditions[t]
		switch to := sets.List(destinations(appliers, "")); {
		case len(to) == 1:
			if msg := a.crossVersions("condition "+t, t, ownership.ConditionPath(t), to[0], &v); msg != "" {
				v.Unresolved = append(v.Unresolved, msg)
				continue
			}
			conditions[t] = to[0]
		case len(to) > 1:
			v.Unresolved = append(v.Unresolved, fmt.Sprintf(
				"condition %s: written by %s; give it to the one that writes it from now on with --condition %s=MANAGER",
				t, describe(to, a.applyConditions, t), t))
		case !holders.HasAny(sets.List(appliers)...):
			v.Unresolved = append(v.Unresolved, fmt.Sprintf(
				"condition %s: held by %s, applied by no manager: name its new writer with --writer MANAGER=%s "+
					"(or migrate --condition %s=MANAGER); applying alone never takes it over, since an apply "+
					"restating the value sends nothing and one changing it conflicts",
				t, strings.Join(sets.List(holders), ", "), t, t))
		}
		// Otherwise a holder applies it under its own name: its --from
		// below keeps it.
	}
	managers := map[string]string{}
	for _, l := range sets.List(a.legacyNames) {
		// What l still holds after the condition moves: the condition types
		// nobody else takes over, and its other status fields. One apply
		// manager must own all of them somewhere to take them over.
		var rest []string
		var common sets.Set[string]
		narrow := func(owners sets.Set[string]) {
			to := destinations(owners, l)
			if common == nil {
				common = to
			} else {
				common = common.Intersection(to)
			}
		}
		for _, t := range slices.Sorted(maps.Keys(a.legacyConditions)) {
			if _, moved := conditions[t]; !moved && a.legacyConditions[t].Has(l) {
				rest = append(rest, "condition "+t)
				narrow(applyConditions[t])
			}
		}
		for _, f := range sets.List(a.legacyFields[l]) {
			rest = append(rest, f)
			narrow(applyFields[f])
		}
		if len(rest) == 0 {
			continue
		}
		if common.Len() == 1 {
			to := sets.List(common)[0]
			var refused []string
			for _, item := range rest {
				key, path := l+"\x00"+item, a.paths[item]
				if t, ok := strings.CutPrefix(item, "condition "); ok {
					key, path = t, ownership.ConditionPath(t)
				}
				if msg := a.crossVersions(l+" keeps "+item, key, path, to, &v); msg != "" {
					refused = append(refused, msg)
				}
			}
			if len(refused) == 0 {
				managers[l] = to
				continue
			}
			v.Unresolved = append(v.Unresolved, refused...)
			continue
		}
		v.Unresolved = append(v.Unresolved, fmt.Sprintf(
			"%s keeps %s: no one apply manager owns all of it or is declared to write it (--writer); give --from "+
				"%s=MANAGER for the manager that writes it from now on, or leave it with %s",
			l, strings.Join(rest, ", "), l, l))
	}
	if len(conditions) > 0 {
		v.Conditions = conditions
	}
	if len(managers) > 0 {
		v.Managers = managers
	}
	v.ReleaseShared = a.legacyShared
	if p := v.Plan(); p.Validate() == nil {
		v.Flags = append(p.MigrateFlags(), newDestinationFlags(p, a.opts.Writers)...)
	}
	return v
}

// newDestinationFlags names, sorted, the declared writers that p hands
// fields to as --new-destination flags: a declared writer's applies may
// have left no entry on any object, which migrate would otherwise take for
// a misspelled destination (and refuse under --exit-code).
func newDestinationFlags(p Plan, declared map[string][]string) []string {
	dests := sets.New(slices.Collect(maps.Values(p.Conditions))...).Insert(slices.Collect(maps.Values(p.Managers))...)
	var out []string
	for _, w := range slices.Sorted(maps.Keys(declared)) {
		if dests.Has(w) {
			out = append(out, "--new-destination", w)
		}
	}
	return out
}

// withDeclared returns observed with the declared writers of each key
// added, leaving both maps as they are.
func withDeclared(observed, declared map[string]sets.Set[string]) map[string]sets.Set[string] {
	out := make(map[string]sets.Set[string], len(observed)+len(declared))
	for k, names := range observed {
		out[k] = names.Clone()
	}
	for k, names := range declared {
		if out[k] == nil {
			out[k] = sets.New[string]()
		}
		out[k].Insert(sets.List(names)...)
	}
	return out
}

// ValidateWriters checks AuditOptions.Writers, as Audit does: named
// managers that can be apply managers, each writing named condition types
// or status fields (paths under .status).
func ValidateWriters(writers map[string][]string) error {
	var errs []error
	for _, manager := range slices.Sorted(maps.Keys(writers)) {
		writes := writers[manager]
		switch {
		case manager == "":
			errs = append(errs, errors.New("writer with an empty manager name"))
		case manager == ownership.BeforeFirstApplyManager:
			errs = append(errs, fmt.Errorf("writer %s: it is never an apply manager", manager))
		case len(writes) == 0:
			errs = append(errs, fmt.Errorf("writer %s: no condition type or status field", manager))
		}
		for _, w := range writes {
			switch {
			case w == "":
				errs = append(errs, fmt.Errorf("writer %s: empty condition type", manager))
			case strings.HasPrefix(w, ".") && !strings.HasPrefix(w, ".status."):
				errs = append(errs, fmt.Errorf("writer %s: %s: a field must lie under .status", manager, w))
			}
		}
	}
	return errors.Join(errs...)
}

// countOf renders a number of objects.
func countOf(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}

// conditionOfPath returns the condition type when p lies at or below
// .status.conditions[type=X], else "".
func conditionOfPath(p fieldpath.Path) string {
	t, _ := ownership.ConditionTypeAt(p)
	return t
}

// statusLeaves lists, for an object without managedFields, the paths of
// the status fields outside conditions that the first apply will attribute
// to before-first-apply: leaves of nested maps; lists and scalars whole.
func statusLeaves(obj metav1.Object) []string {
	status, _, _ := unstructured.NestedMap(contentOf(obj), "status")
	var out []string
	var walk func(prefix fieldpath.Path, m map[string]any)
	walk = func(prefix fieldpath.Path, m map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			p := append(prefix.Copy(), fieldpath.PathElement{FieldName: &k})
			if len(p) == 2 && k == "conditions" {
				continue
			}
			if child, ok := m[k].(map[string]any); ok && len(child) > 0 {
				walk(p, child)
				continue
			}
			out = append(out, p.String())
		}
	}
	walk(ownership.StatusPath(), status)
	return out
}

// addStale tallies the entries of one object recorded in versions the CRD
// does not serve, and whether their fields translate to the storage
// version (content is the object's content).
func (a *auditor) addStale(ref ownership.ObjectRef, o *ownership.Ownership, content map[string]any) {
	counted := map[string]bool{}
	untranslatable := map[string]bool{}
	for _, e := range o.Entries {
		v := e.APIVersion
		reason := a.versions.Staleness(v)
		if reason == "" {
			continue
		}
		t := a.stale[v]
		if t == nil {
			t = &staleTally{reason: reason, managers: sets.New[string](), objects: ObjectGroup{Examples: []string{}}}
			a.stale[v] = t
		}
		t.managers.Insert(e.Manager)
		if !counted[v] {
			counted[v] = true
			a.note(&t.objects, ref)
		}
		if untranslatable[v] {
			continue
		}
		if _, untr := a.versions.Translate(e.Fields, v, a.versions.storageAPIVersion(), content); !untr.Empty() {
			untranslatable[v] = true
			t.untranslatable++
		}
	}
}

// staleVerdict adds to v what the stale versions ask for, and reports
// whether migrate --stale-versions can rewrite them all.
func (a *auditor) staleVerdict(v *AuditVerdict, r *AuditReport) bool {
	if a.versionsErr != nil {
		v.Notes = append(v.Notes, "API versions not checked: "+a.versionsErr.Error())
	}
	if len(r.StaleVersions) == 0 {
		return false
	}
	ok := true
	storage := a.versions.storageAPIVersion()
	for _, sv := range r.StaleVersions {
		what := fmt.Sprintf("%s hold entries of %s recorded in %s, which %s does not serve", countOf(sv.Objects),
			strings.Join(sv.Managers, ", "), sv.APIVersion, a.versions.crd)
		if sv.Reason == StaleRemoved {
			what += fmt.Sprintf(" any more: every server-side apply to them fails with %q", ApplyError)
		} else {
			what += ": applies work until it is removed from the CRD, then fail"
		}
		if sv.Untranslatable > 0 {
			ok = false
			v.Unresolved = append(v.Unresolved, fmt.Sprintf(
				"%s; on %s some of those fields do not translate to the storage version %s: have their "+
					"writers write them through %s, or give --stale-versions --drop-untranslatable to drop them "+
					"(their owners lose them)", what, countOf(sv.Untranslatable), storage, storage))
			continue
		}
		v.Notes = append(v.Notes, fmt.Sprintf("%s; --stale-versions rewrites them to the storage version %s, "+
			"keeping every owner", what, storage))
	}
	return ok
}

// crossVersions returns why handing item (key in legacyVersions, at path)
// to manager to cannot be inferred across API versions, or "" when every
// legacy version holding it is to's or translates to it; a move that
// crosses versions is noted in v. A version the CRD does not serve counts
// as the storage version, where --stale-versions rewrites it first.
func (a *auditor) crossVersions(item, key string, path fieldpath.Path, to string, v *AuditVerdict) string {
	dest := a.applyVersions[to]
	if dest.Len() == 0 {
		return ""
	}
	for _, from := range sets.List(a.legacyVersions[key]) {
		if a.versions != nil && a.versions.Staleness(from) != "" {
			from = a.versions.storageAPIVersion()
		}
		for _, b := range sets.List(dest) {
			switch {
			case from == b:
			case a.versions == nil:
				why := a.opts.SchemaUnavailable
				if a.versionsErr != nil {
					why = a.versionsErr.Error()
				}
				return fmt.Sprintf("%s: recorded in %s, while %s applies through %s; the CRD's versions are "+
					"needed to translate it (%s)", item, from, to, b, why)
			case a.versions.translates(path, from, b) || len(path) > 2 && a.versions.expands(ownership.ConditionsPath(), from, b):
				note := fmt.Sprintf("%s: recorded in %s, handed to %s in %s, where it has the same paths", item, from, to, b)
				if !slices.Contains(v.Notes, note) {
					v.Notes = append(v.Notes, note)
				}
			default:
				return fmt.Sprintf("%s: recorded in %s, while %s applies through %s, where it is not at the same "+
					"paths: hand it to a writer that applies through %s, or have its writer write it through %s first",
					item, from, to, b, from, b)
			}
		}
	}
	return ""
}
