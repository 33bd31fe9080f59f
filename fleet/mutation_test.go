package fleet

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/config/crd"
	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

// The tests in this file pin decisions the other tests leave open
// (pagination, orders, boundaries), so that changing any of them makes a
// test fail.

// pagedReader serves a list of objects page by page as the API server does,
// honouring Limit and Continue (the fake client ignores both), and records
// the options of every request. The pager calls it from a goroutine of its
// own, which may still be reading ahead when the caller stops.
type pagedReader struct {
	client.Reader
	mu   sync.Mutex
	objs []unstructured.Unstructured
	// fail, when set, answers the request with this Continue token.
	fail     map[string]error
	requests []client.ListOptions
	kinds    []string
}

func (r *pagedReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, o)
	ul := list.(*unstructured.UnstructuredList)
	r.kinds = append(r.kinds, ul.GetKind())
	if err := r.fail[o.Continue]; err != nil {
		return err
	}
	start := 0
	if o.Continue != "" {
		start, _ = strconv.Atoi(o.Continue)
	}
	end := len(r.objs)
	if o.Limit > 0 && start+int(o.Limit) < end {
		end = start + int(o.Limit)
		ul.SetContinue(strconv.Itoa(end))
	}
	ul.Items = append([]unstructured.Unstructured(nil), r.objs[start:end]...)
	return nil
}

func widgets(n int) []unstructured.Unstructured {
	out := make([]unstructured.Unstructured, n)
	for i := range out {
		out[i].SetAPIVersion("demo.statusapply.io/v1alpha1")
		out[i].SetKind("Widget")
		out[i].SetNamespace("shop")
		out[i].SetName("w" + strconv.Itoa(i))
	}
	return out
}

var widgetGVK = schema.GroupVersionKind{Group: "demo.statusapply.io", Version: "v1alpha1", Kind: "Widget"}

func TestListObjectsPages(t *testing.T) {
	for _, tc := range []struct {
		name      string
		objs      int
		pageSize  int64
		wantLimit int64
		requests  int
	}{
		{"pages of 2", 5, 2, 2, 3},
		{"one page", 3, 10, 10, 1},
		{"a page size of 1", 2, 1, 1, 2},
		{"the pager's default", 3, 0, 500, 1},
		{"a negative page size means the default", 3, -1, 500, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &pagedReader{objs: widgets(tc.objs)}
			var names []string
			for obj, err := range ListObjects(context.Background(), r, widgetGVK, tc.pageSize, client.InNamespace("shop")) {
				if err != nil {
					t.Fatalf("error after %v: %v", names, err)
				}
				names = append(names, obj.GetName())
			}
			var want []string
			for i := range tc.objs {
				want = append(want, "w"+strconv.Itoa(i))
			}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if len(r.requests) != tc.requests {
				t.Errorf("%d requests, want %d", len(r.requests), tc.requests)
			}
			for i, o := range r.requests {
				if o.Limit != tc.wantLimit || o.Namespace != "shop" {
					t.Errorf("request %d: limit %d namespace %q, want %d in shop", i, o.Limit, o.Namespace, tc.wantLimit)
				}
				if (i == 0) != (o.Continue == "") {
					t.Errorf("request %d: continue %q", i, o.Continue)
				}
				if r.kinds[i] != "WidgetList" {
					t.Errorf("request %d lists %q, want WidgetList", i, r.kinds[i])
				}
			}
		})
	}
}

func TestListObjectsErrorsAndStops(t *testing.T) {
	boom := errors.New("connection refused")
	expired := apierrors.NewResourceExpired("the continue token is too old")
	for _, tc := range []struct {
		name string
		fail map[string]error
		want []string
		err  error
	}{
		{"the first request fails", map[string]error{"": boom}, nil, boom},
		{"a later page fails", map[string]error{"2": boom}, []string{"w0", "w1"}, boom},
		{"the continue token expired: no full list instead", map[string]error{"2": expired}, []string{"w0", "w1"}, expired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &pagedReader{objs: widgets(5), fail: tc.fail}
			var names []string
			var errs []error
			for obj, err := range ListObjects(context.Background(), r, widgetGVK, 2) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				names = append(names, obj.GetName())
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if len(errs) != 1 || !errors.Is(errs[0], tc.err) || errs[0].Error() != "listing Widget: "+tc.err.Error() {
				t.Fatalf("errors %v, want one: listing Widget: %v", errs, tc.err)
			}
			for _, o := range r.requests {
				if o.Limit != 2 {
					t.Errorf("a request without the page size: %+v (a full list?)", o)
				}
			}
		})
	}

	// A caller that stops gets no error, and the pages after the one being
	// read ahead are not read.
	r := &pagedReader{objs: widgets(7)}
	n := 0
	for _, err := range ListObjects(context.Background(), r, widgetGVK, 2) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1 {
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.requests) > 2 {
		t.Errorf("%d requests after stopping on the first object of 4 pages, want at most 2", len(r.requests))
	}
}

// Active legacy writers are sorted by manager, then subresource.
func TestAuditActiveLegacyWritersOrder(t *testing.T) {
	at := auditNow.Add(-time.Hour)
	objs := []metav1.Object{
		named("w1", stamped(ownershiptest.Entry("zeta", ownershiptest.Update, "status", applyPhase), at)),
		named("w2", stamped(ownershiptest.Entry("alpha", ownershiptest.Update, "status", applyPhase), at)),
		named("w3", stamped(ownershiptest.Entry("mid", ownershiptest.Update, "status", applyPhase), at),
			stamped(ownershiptest.Entry("alpha", ownershiptest.Update, "status", applyA), at.Add(time.Minute))),
	}
	r := mustAudit(t, AuditOptions{}, objs...)
	var got []string
	for _, w := range r.ActiveLegacyWriters {
		got = append(got, w.Manager+"/"+strconv.Itoa(w.Objects))
	}
	if diff := cmp.Diff([]string{"alpha/2", "mid/1", "zeta/1"}, got); diff != "" {
		t.Errorf("active legacy writers (-want +got):\n%s", diff)
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{CRD: "widgets.demo.statusapply.io", Version: "v1", Path: ".status.items", Severity: SeverityWarning, Message: "atomic"}
	if got, want := f.String(), "widgets.demo.statusapply.io v1 .status.items: "+string(SeverityWarning)+": atomic"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	f.File = "crds.yaml"
	if got, want := f.String(), "crds.yaml: widgets.demo.statusapply.io v1 .status.items: "+string(SeverityWarning)+": atomic"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// Of two legacy writers sharing a field, the release takes it from
// before-first-apply first, else from the first by name, whatever the order
// of the entries.
func TestReleaseSharedOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		mfs  []metav1.ManagedFieldsEntry
		want map[string]string
	}{
		{"before-first-apply after the named writer",
			[]metav1.ManagedFieldsEntry{
				ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB),
				ownershiptest.Entry(ownership.BeforeFirstApplyManager, ownershiptest.Update, "status", ownershiptest.LegacyAB),
			},
			map[string]string{"legacy (Update, status)": "A,B .status.phase"}},
		{"two named writers, the second by name keeps the field",
			[]metav1.ManagedFieldsEntry{
				ownershiptest.Entry("b", ownershiptest.Update, "status", applyPhase),
				ownershiptest.Entry("a", ownershiptest.Update, "status", applyAPhase),
			},
			map[string]string{"a (Update, status)": "A", "b (Update, status)": " .status.phase"}},
		{"two named writers in order",
			[]metav1.ManagedFieldsEntry{
				ownershiptest.Entry("a", ownershiptest.Update, "status", applyAPhase),
				ownershiptest.Entry("b", ownershiptest.Update, "status", applyPhase),
			},
			map[string]string{"a (Update, status)": "A", "b (Update, status)": " .status.phase"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mfs, changed, err := Plan{ReleaseShared: true}.Rewrite(ownershiptest.Widget(tc.mfs...), migrateNow)
			if err != nil || !changed {
				t.Fatalf("changed %t, err %v", changed, err)
			}
			if diff := cmp.Diff(tc.want, ownedBy(t, mfs)); diff != "" {
				t.Errorf("ownership (-want +got):\n%s", diff)
			}
		})
	}
}

// Entries a version rewrite merges keep the latest time of the two.
func TestRewriteStaleVersionsMergesTimes(t *testing.T) {
	v := versionsOf(t, [2]string{"v1", "map"}) // v1beta1 was removed
	early, late := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	noTime := func(e metav1.ManagedFieldsEntry) metav1.ManagedFieldsEntry { e.Time = nil; return e }
	for _, tc := range []struct {
		name          string
		stale, stored metav1.ManagedFieldsEntry
		want          *time.Time
	}{
		{"the stale entry is later", stamped(entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB), late),
			stamped(entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyR), early), &late},
		{"the stale entry is earlier", stamped(entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB), early),
			stamped(entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyR), late), &late},
		{"the first has no time", stamped(entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB), early),
			noTime(entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyR)), &early},
		{"the second has no time", noTime(entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB)),
			stamped(entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyR), early), &early},
		{"neither has a time", noTime(entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB)),
			noTime(entryIn("v1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyR)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][]metav1.ManagedFieldsEntry{{tc.stored, tc.stale}, {tc.stale, tc.stored}} {
				mfs, changed, err := Plan{RewriteStaleVersions: true, Versions: v}.Rewrite(machine([]string{"B", "R"}, order...), migrateNow)
				if err != nil || !changed {
					t.Fatalf("changed %t, err %v", changed, err)
				}
				if len(mfs) != 1 || mfs[0].APIVersion != "example.com/v1" {
					t.Fatalf("entries %+v, want one merged in v1", mfs)
				}
				got := mfs[0].Time
				if (got == nil) != (tc.want == nil) || got != nil && !got.Time.Equal(*tc.want) {
					t.Errorf("order %s first: time %v, want %v", order[0].APIVersion, got, tc.want)
				}
				if o := ownedBy(t, mfs); o["wb (Apply, status)"] != "B,R" {
					t.Errorf("ownership %v, want wb owning B and R", o)
				}
			}
		})
	}
}

// The audit counts the objects on which a stale version's fields do not
// translate, once per object whatever the number of such entries.
func TestAuditCountsUntranslatableObjects(t *testing.T) {
	gone := `{"f:status":{"f:gone":{},"f:phase":{}}}`
	bad := func(name string) *unstructured.Unstructured {
		m := machine([]string{"B"},
			entryIn("v1beta1", "legacy", ownershiptest.Update, "status", gone),
			entryIn("v1beta1", "other", ownershiptest.Update, "status", gone))
		m.SetName(name)
		return m
	}
	good := machine([]string{"B"}, entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB))
	good.SetName("good")
	r := auditOf(t, versionedCRD([2]string{"v1", "map"}), bad("m1"), bad("m2"), good)
	if len(r.StaleVersions) != 1 {
		t.Fatalf("stale versions %+v", r.StaleVersions)
	}
	if sv := r.StaleVersions[0]; sv.Objects != 3 || sv.Untranslatable != 2 {
		t.Errorf("stale version %+v, want 3 objects, 2 of them untranslatable", sv)
	}
	if r.Verdict.StaleVersions {
		t.Errorf("verdict %+v proposes --stale-versions although fields do not translate", r.Verdict)
	}
	// Control: translatable entries alone count none.
	r = auditOf(t, versionedCRD([2]string{"v1", "map"}), good)
	if sv := r.StaleVersions[0]; sv.Untranslatable != 0 || !r.Verdict.StaleVersions {
		t.Errorf("stale version %+v, verdict %+v: want nothing untranslatable and --stale-versions", sv, r.Verdict)
	}
}

func TestCountsInWords(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 objects"}, {1, "1 object"}, {2, "2 objects"}} {
		if got := countOf(tc.n); got != tc.want {
			t.Errorf("countOf(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	if got, want := countedNames(map[string]int{"b": 1, "a": 2, "c": 0}), "a (2 objects), b (1 object), c (0 objects)"; got != want {
		t.Errorf("countedNames = %q, want %q", got, want)
	}
	if got := countedNames(nil); got != "" {
		t.Errorf("countedNames(nil) = %q", got)
	}
}

func TestConditionHolders(t *testing.T) {
	for _, tc := range []struct {
		name     string
		holders  map[string]bool
		manager  string
		legacy   bool
		holdOnly bool
	}{
		{"nobody", map[string]bool{}, "m", false, false},
		{"the manager alone, applying", map[string]bool{"m": false}, "m", false, true},
		{"the manager alone, legacy", map[string]bool{"m": true}, "m", true, true},
		{"another manager alone", map[string]bool{"x": false}, "m", false, false},
		{"the manager and a legacy writer", map[string]bool{"m": false, "x": true}, "m", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := anyLegacy(tc.holders); got != tc.legacy {
				t.Errorf("anyLegacy = %v, want %v", got, tc.legacy)
			}
			if got := holdsOnly(tc.holders, tc.manager); got != tc.holdOnly {
				t.Errorf("holdsOnly = %v, want %v", got, tc.holdOnly)
			}
		})
	}
	if got := legacyConditionsHint(map[string]map[string]bool{"B": {"l": true}, "A": {"l": true, "m": false}, "C": {"m": false}}); got != "; legacy writers hold A, B" {
		t.Errorf("legacyConditionsHint = %q", got)
	}
	if got := legacyConditionsHint(map[string]map[string]bool{"C": {"m": false}}); got != "" {
		t.Errorf("legacyConditionsHint without legacy holders = %q", got)
	}
}

func TestStatusOfAnObjectWithoutManagedFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		obj    metav1.Object
		status bool
		types  []string
	}{
		{"no status", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "u"}}}, false, nil},
		{"an empty status", &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{}}}, false, nil},
		{"a phase", &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": "On"}}}, true, nil},
		{"conditions", &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "A"}, "odd", map[string]any{"type": int64(3)}, map[string]any{"type": "B"},
		}}}}, true, []string{"A", "B"}},
		{"typed", untrackedWidget("A"), true, []string{"A"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasStatus(tc.obj); got != tc.status {
				t.Errorf("hasStatus = %v, want %v", got, tc.status)
			}
			if diff := cmp.Diff(tc.types, statusConditionTypes(tc.obj)); diff != "" {
				t.Errorf("statusConditionTypes (-want +got):\n%s", diff)
			}
		})
	}
}

func untrackedWidget(types ...string) metav1.Object {
	w := ownershiptest.Widget()
	for _, t := range types {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue})
	}
	return w
}

func TestValidateWriters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		writers map[string][]string
		want    []string
	}{
		{"none", nil, nil},
		{"conditions and fields", map[string][]string{"w": {"Ready", ".status.phase"}}, nil},
		{"an empty manager", map[string][]string{"": {"Ready"}}, []string{"writer with an empty manager name"}},
		{"before-first-apply", map[string][]string{ownership.BeforeFirstApplyManager: {"Ready"}}, []string{"never an apply manager"}},
		{"nothing written", map[string][]string{"w": {}}, []string{"writer w: no condition type or status field"}},
		{"an empty type", map[string][]string{"w": {""}}, []string{"writer w: empty condition type"}},
		{"a field outside status", map[string][]string{"w": {".spec.size"}}, []string{"writer w: .spec.size: a field must lie under .status"}},
		{"every problem", map[string][]string{"": nil, "w": {"", ".metadata.x"}}, []string{"empty manager name", "empty condition type", ".metadata.x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateWriters(tc.writers)
			if (err != nil) != (len(tc.want) > 0) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want %q in it", err, w)
				}
			}
		})
	}
}

func TestReportSummary(t *testing.T) {
	r := &Report{
		Results: []*Result{{Changed: true}, {Changed: false}, {Changed: true}},
		Errors:  []error{errors.New("x")},
	}
	if r.Changed() != 2 || r.String() != "4 objects: 2 changed, 1 unchanged, 1 failed" {
		t.Errorf("Changed %d, String %q", r.Changed(), r.String())
	}
	if got := (&Report{}).String(); got != "0 objects: 0 changed, 0 unchanged, 0 failed" {
		t.Errorf("empty report: %q", got)
	}
}

// The verdict notes untracked and unreadable objects when there are some,
// and only then.
func TestAuditVerdictNotesCounts(t *testing.T) {
	legacy := named("w1", ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB))
	bad := named("w2", ownershiptest.Entry("x", ownershiptest.Update, "status", `{"f:status":`))
	for _, tc := range []struct {
		name string
		objs []metav1.Object
		want []string
		not  []string
	}{
		{"neither", []metav1.Object{legacy}, nil, []string{"without managedFields", "unreadable"}},
		{"one untracked", []metav1.Object{legacy, untracked("u1", "A")},
			[]string{"1 object without managedFields: migrate seeds them first"}, []string{"unreadable"}},
		{"two unreadable", []metav1.Object{legacy, bad, bad},
			[]string{"2 objects with unreadable managedFields left out of the verdict"}, []string{"without managedFields"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustAudit(t, AuditOptions{Now: auditNow}, tc.objs...)
			notes := strings.Join(r.Verdict.Notes, "\n")
			for _, w := range tc.want {
				if !strings.Contains(notes, w) {
					t.Errorf("notes %q, want %q", r.Verdict.Notes, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(notes, n) {
					t.Errorf("notes %q mention %q", r.Verdict.Notes, n)
				}
			}
		})
	}
}

// The verdict warns about an atomic conditions list (an error finding) and
// not about the warnings other atomic lists get.
func TestAuditVerdictSchemaNote(t *testing.T) {
	const mapConditions = `
type: object
properties:
  conditions:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [type]
    items: {type: object, properties: {type: {type: string}}, required: [type]}
`
	for _, tc := range []struct {
		name     string
		status   string
		findings int
		note     bool
	}{
		{"a map list", mapConditions, 0, false},
		{"another atomic list: a warning", mapConditions + `  addresses:
    type: array
    items: {type: string}
`, 1, false},
		{"atomic conditions: an error", `
type: object
properties:
  conditions:
    type: array
    items: {type: object}
`, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crd := crdWithStatus(t, tc.status)
			crd.Name = "widgets.demo.statusapply.io"
			r := mustAudit(t, AuditOptions{CRD: crd}, named("w1", ownershiptest.Entry("wa", ownershiptest.Apply, "status", applyA)))
			if len(r.Schema.Findings) != tc.findings {
				t.Fatalf("findings %+v, want %d", r.Schema.Findings, tc.findings)
			}
			noted := slices.ContainsFunc(r.Verdict.Notes, func(n string) bool {
				return strings.HasPrefix(n, "status.conditions is atomic in widgets.demo.statusapply.io:")
			})
			if noted != tc.note {
				t.Errorf("notes %q: atomic conditions noted %v, want %v", r.Verdict.Notes, noted, tc.note)
			}
		})
	}
}

// statusLeaves lists what a first apply attributes: leaves of nested maps,
// an empty map and a list whole, conditions apart.
func TestStatusLeaves(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"phase":      "On",
		"conditions": []any{map[string]any{"type": "A"}},
		"attrs":      map[string]any{"zone": "a", "empty": map[string]any{}, "nested": map[string]any{"x": "y"}},
		"list":       []any{"a"},
	}}}
	want := []string{".status.attrs.empty", ".status.attrs.nested.x", ".status.attrs.zone", ".status.list", ".status.phase"}
	if diff := cmp.Diff(want, statusLeaves(obj)); diff != "" {
		t.Errorf("statusLeaves (-want +got):\n%s", diff)
	}
}

// The stale versions' note says what happens to applies: they fail for a
// removed version, and work until then for one not served.
func TestAuditStaleVersionNotes(t *testing.T) {
	obj := machine([]string{"B"}, entryIn("v1beta1", "wb", ownershiptest.Apply, "status", ownershiptest.ApplyB))
	removed := auditOf(t, versionedCRD([2]string{"v1", "map"}), obj)
	unserved := versionedCRD([2]string{"v1beta1", "map"}, [2]string{"v1", "map"})
	unserved.Spec.Versions[0].Served = false
	notServed := auditOf(t, unserved, obj)
	for _, tc := range []struct {
		name string
		r    *AuditReport
		want string
		not  string
	}{
		{"removed", removed, "any more: every server-side apply to them fails with", "applies work until"},
		{"not served", notServed, "applies work until it is removed from the CRD, then fail", "any more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notes := strings.Join(tc.r.Verdict.Notes, "\n")
			if !strings.Contains(notes, tc.want) || strings.Contains(notes, tc.not) {
				t.Errorf("notes %q, want %q and not %q", tc.r.Verdict.Notes, tc.want, tc.not)
			}
		})
	}
}

// The warning for an atomic list says whether the list type is unset or
// atomic.
func TestLintSaysWhyAListIsAtomic(t *testing.T) {
	for _, tc := range []struct {
		listType string
		want     string
	}{
		{"", "x-kubernetes-list-type is unset, so the list is atomic: "},
		{"\n    x-kubernetes-list-type: atomic", "x-kubernetes-list-type is atomic: "},
	} {
		crd := crdWithStatus(t, "type: object\nproperties:\n  addresses:\n    type: array"+tc.listType+"\n    items: {type: string}\n")
		crd.Name = "widgets.demo.statusapply.io"
		findings := LintCRDs(crd)
		if len(findings) != 1 || findings[0].Path != "status.addresses" || !strings.HasPrefix(findings[0].Message, tc.want) {
			t.Errorf("findings %+v, want one at status.addresses starting %q", findings, tc.want)
		}
	}
}

// widgetVersions is the Widget CRD's versions, as the CLI gives them to a
// Migrator (WithVersions).
func widgetVersions(t *testing.T) map[schema.GroupKind]*Versions {
	t.Helper()
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Names.Kind == "Widget" {
			v, err := VersionsOf(c)
			if err != nil {
				t.Fatal(err)
			}
			return map[schema.GroupKind]*Versions{v1alpha1.SchemeGroupVersion.WithKind("Widget").GroupKind(): v}
		}
	}
	t.Fatal("no Widget CRD")
	return nil
}

// staleWidget is a Widget whose legacy writer's entry is recorded in a
// version the CRD no longer lists, with the given fields.
func staleWidget(fields string) *v1alpha1.Widget {
	e := ownershiptest.Entry("legacy", ownershiptest.Update, "status", fields)
	e.APIVersion = "demo.statusapply.io/v1alpha0"
	w := ownershiptest.Widget(e)
	w.Name = "w"
	return w
}

// A plan without Versions takes each kind's from WithVersions, as the CLI
// runs one plan over several kinds; without them, rewriting stale versions
// is refused.
func TestMigratorUsesWithVersions(t *testing.T) {
	plan := Plan{RewriteStaleVersions: true}
	c, _ := fakeClient(t, interceptor.Funcs{}, staleWidget(ownershiptest.LegacyAB))
	res, err := newMigrator(t, c, plan, WithDryRun(false), WithVersions(widgetVersions(t))).
		Migrate(context.Background(), staleWidget(ownershiptest.LegacyAB))
	if err != nil || !res.Changed {
		t.Fatalf("Migrate: changed %v, err %v", res != nil && res.Changed, err)
	}
	mfs := stored(t, c, "w")
	if len(mfs) != 1 || mfs[0].Manager != "legacy" || mfs[0].APIVersion != "demo.statusapply.io/v1alpha1" {
		t.Errorf("stored %+v, want legacy's entry in the storage version", mfs)
	}

	// Control: the same Migrator without WithVersions.
	c, _ = fakeClient(t, interceptor.Funcs{}, staleWidget(ownershiptest.LegacyAB))
	if _, err := newMigrator(t, c, plan, WithDryRun(false)).Migrate(context.Background(), staleWidget(ownershiptest.LegacyAB)); err == nil {
		t.Fatal("rewriting stale versions without the CRD's versions succeeded")
	}
	if mfs := stored(t, c, "w"); mfs[0].APIVersion != "demo.statusapply.io/v1alpha0" {
		t.Errorf("stored %+v, want it untouched", mfs)
	}
}

// A migration that drops every entry (a stale entry whose fields do not
// translate, with DropUntranslatable) clears managedFields in one write and
// reports no owner after it.
func TestMigrateDroppingEveryEntry(t *testing.T) {
	gone := `{"f:status":{"f:gone":{}}}`
	c, rec := fakeClient(t, interceptor.Funcs{}, staleWidget(gone))
	plan := Plan{RewriteStaleVersions: true, DropUntranslatable: true}
	res, err := newMigrator(t, c, plan, WithDryRun(false), WithVersions(widgetVersions(t))).
		Migrate(context.Background(), staleWidget(gone))
	if err != nil {
		t.Fatalf("Migrate: %v (stored %+v)", err, stored(t, c, "w"))
	}
	if !res.Changed || res.After != nil || len(rec.patches) != 1 {
		t.Errorf("changed %v, after %v, %d patches: want every entry dropped in one write", res.Changed, res.After, len(rec.patches))
	}
	for _, e := range stored(t, c, "w") {
		if e.Manager == "legacy" {
			t.Errorf("stored %+v, want legacy's entry gone", e)
		}
	}
}

// Rewrite gives the same managedFields for the same object and plan every
// time: the Apply entries it creates follow the existing ones in the order
// of their managers, whatever the versions they are recorded in.
func TestRewriteOrdersNewEntriesByManager(t *testing.T) {
	onlyA := `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:status":{},"f:type":{}}}}}`
	onlyB := `{"f:status":{"f:conditions":{"k:{\"type\":\"B\"}":{".":{},"f:status":{},"f:type":{}}}}}`
	obj := machine([]string{"A", "B"},
		entryIn("v1", "legacy-a", ownershiptest.Update, "status", onlyA),
		entryIn("v2", "legacy-b", ownershiptest.Update, "status", onlyB))
	plan := Plan{Conditions: map[string]string{"A": "zeta", "B": "alpha"}}
	var first []string
	for range 20 {
		mfs, _, err := plan.Rewrite(obj, migrateNow)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range mfs {
			got = append(got, e.Manager+"@"+e.APIVersion)
		}
		if first == nil {
			first = got
			want := []string{"alpha@example.com/v2", "zeta@example.com/v1"}
			if !slices.Equal(got, want) {
				t.Fatalf("entries %v, want %v", got, want)
			}
		} else if !slices.Equal(got, first) {
			t.Fatalf("entries %v, then %v", first, got)
		}
	}
}

// A condition handed to a manager that already applies joins its Apply
// entry, wherever that entry stands among the managedFields, the first
// place included: one manager has one Apply entry on status.
func TestRewriteJoinsTheFirstEntry(t *testing.T) {
	for _, order := range []string{"apply entry first", "apply entry last"} {
		t.Run(order, func(t *testing.T) {
			applied := ownershiptest.Entry("summary", ownershiptest.Apply, "status", ownershiptest.ApplyR)
			legacy := ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)
			mfs := []metav1.ManagedFieldsEntry{applied, legacy}
			if order == "apply entry last" {
				mfs = []metav1.ManagedFieldsEntry{legacy, applied}
			}
			got, _, err := Plan{Conditions: map[string]string{"A": "summary"}}.Rewrite(ownershiptest.Widget(mfs...), migrateNow)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Errorf("%d entries, want summary's and legacy's: %+v", len(got), got)
			}
			want := map[string]string{"summary (Apply, status)": "A,R", "legacy (Update, status)": "B .status.phase"}
			if o := ownedBy(t, got); !maps.Equal(o, want) {
				t.Errorf("ownership %v, want %v", o, want)
			}
		})
	}
}

// shapesCRD is a CRD of group example.com with versions v1beta1 and v1
// (stored) under conversion, whose status has conditions (a map list), a
// map of strings and a field that keeps unknown fields. v1's schema has an
// extra spec field, so the two schemas are not identical and every path is
// compared on its own.
func shapesCRD(conversion *apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	schema := func(extra bool) *apiextensionsv1.JSONSchemaProps {
		s := conditionsSchema("map")
		status := s.Properties["status"]
		status.Properties["labels"] = apiextensionsv1.JSONSchemaProps{Type: "object",
			AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}}
		status.Properties["raw"] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
		s.Properties["status"] = status
		if extra {
			s.Properties["spec"] = apiextensionsv1.JSONSchemaProps{Type: "object"}
		}
		return s
	}
	crd := versionedCRD([2]string{"v1beta1", "map"}, [2]string{"v1", "map"})
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema = schema(false)
	crd.Spec.Versions[1].Schema.OpenAPIV3Schema = schema(true)
	crd.Spec.Conversion = conversion
	return crd
}

// Paths translate between versions with different schemas only when
// objects read in either hold the same values (no conversion, or
// conversion None) and the path has the same shape in both: a map's member
// (additionalProperties) and a field below one that keeps unknown fields
// included.
func TestTranslateByConversionAndShape(t *testing.T) {
	paths := map[string]string{
		"condition":              `{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:status":{},"f:type":{}}}}}`,
		"a map's member":         `{"f:status":{"f:labels":{"f:team":{}}}}`,
		"below unknown fields":   `{"f:status":{"f:raw":{"f:anything":{"f:deeper":{}}}}}`,
		"a field neither has":    `{"f:status":{"f:gone":{}}}`,
		"a field only v1 has":    `{"f:spec":{"f:replicas":{}}}`,
		"the phase, as a scalar": `{"f:status":{"f:phase":{}}}`,
	}
	untranslatable := []string{"a field neither has", "a field only v1 has"}
	for _, tc := range []struct {
		name       string
		conversion *apiextensionsv1.CustomResourceConversion
		sameValues bool
	}{
		{"no conversion", nil, true},
		{"strategy left empty", &apiextensionsv1.CustomResourceConversion{}, true},
		{"conversion None", &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}, true},
		{"conversion Webhook", &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}, false},
	} {
		v, err := VersionsOf(shapesCRD(tc.conversion))
		if err != nil {
			t.Fatal(err)
		}
		for name, fields := range paths {
			set := &fieldpath.Set{}
			if err := set.FromJSON(strings.NewReader(fields)); err != nil {
				t.Fatal(err)
			}
			tr, untr := v.Translate(set, "example.com/v1beta1", "example.com/v1", nil)
			want := tc.sameValues && !slices.Contains(untranslatable, name)
			if got := untr.Empty() && tr.Equals(set); got != want {
				t.Errorf("%s, %s: translates %v, want %v (translated %s, untranslatable %s)", tc.name, name, got, want, tr, untr)
			}
		}
	}
}
