package cli

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/config/crd"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/internal/ownershiptest"
)

func TestMigrationNeeds(t *testing.T) {
	gv := schema.GroupVersion{Group: "demo.statusapply.io", Version: "v1alpha1"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	mapper.Add(gv.WithKind("Widget"), meta.RESTScopeNamespace)
	legacy := func(ns, name string) *unstructured.Unstructured {
		u := widget(ns, name)
		u.SetResourceVersion("7")
		u.SetManagedFields(ownershiptest.Widget(ownershiptest.Entry("legacy", ownershiptest.Update, "status", ownershiptest.LegacyAB)).ManagedFields)
		return u
	}
	migrated := legacy("a", "done")
	migrated.SetManagedFields(ownershiptest.Widget(ownershiptest.Entry("summary", ownershiptest.Apply, "status", ownershiptest.LegacyAB)).ManagedFields)
	untracked := widget("b", "new")
	untracked.SetResourceVersion("8")
	unread := widget("c", "missing") // a named object that could not be read

	plan := fleet.Plan{Managers: map[string]string{"legacy": "summary"}}
	got, err := migrationNeeds(mapper, plan, nil, migrationObjects([]*unstructured.Unstructured{legacy("b", "w1"), migrated, legacy("a", "w2"), legacy("a", "w3"), untracked, unread}))
	if err != nil {
		t.Fatal(err)
	}
	widgets := schema.GroupResource{Group: gv.Group, Resource: "widgets"}
	want := []need{
		{permission{"patch", widgets, "", "a"}, "objects there would change"},
		{permission{"patch", widgets, "", "b"}, "objects there would change"},
		{permission{"patch", widgets, "status", "b"}, "objects there have no managedFields"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("needs = %+v,\nwant %+v", got, want)
	}
	if msg, want := permissionsMessage(want[1:]), "the user may not patch widgets.demo.statusapply.io in namespace b (objects there would change); "+
		"nor patch widgets.demo.statusapply.io/status in namespace b (objects there have no managedFields)"; msg != want {
		t.Errorf("message = %q,\nwant %q", msg, want)
	}
}

// TestMigrationNeedsStaleVersions: the check rewrites an object as the
// Migrator does, with its kind's CRD versions. Without them (the control)
// a --stale-versions rewrite fails in memory, and the patch the migration
// sends would go unchecked.
func TestMigrationNeedsStaleVersions(t *testing.T) {
	gv := schema.GroupVersion{Group: "demo.statusapply.io", Version: "v1alpha1"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	mapper.Add(gv.WithKind("Widget"), meta.RESTScopeNamespace)
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(crds, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == "widgets."+gv.Group })
	v, err := fleet.VersionsOf(crds[i])
	if err != nil {
		t.Fatal(err)
	}
	stale := ownershiptest.Entry("summary", ownershiptest.Apply, "status", ownershiptest.ApplyB)
	stale.APIVersion = gv.Group + "/v1alpha0" // a version the CRD no longer has
	obj := widget("a", "w1")
	obj.SetResourceVersion("7")
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{stale})
	if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"type": "B", "status": "True"}}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	plan := fleet.Plan{RewriteStaleVersions: true}
	widgets := schema.GroupResource{Group: gv.Group, Resource: "widgets"}
	want := []need{{permission{"patch", widgets, "", "a"}, "objects there would change"}}
	for _, tt := range []struct {
		name     string
		versions map[schema.GroupKind]*fleet.Versions
		want     []need
	}{
		{"with the CRD's versions", map[schema.GroupKind]*fleet.Versions{gv.WithKind("Widget").GroupKind(): v}, want},
		{"without (control)", nil, []need{}},
	} {
		got, err := migrationNeeds(mapper, plan, tt.versions, migrationObjects([]*unstructured.Unstructured{obj}))
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: needs = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestStopReason(t *testing.T) {
	gr := schema.GroupResource{Group: "demo.statusapply.io", Resource: "widgets"}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{apierrors.NewForbidden(gr, "w1", errors.New("no")), "was refused by the API server (forbidden)"},
		{apierrors.NewServerTimeout(gr, "patch", 1), "could not reach the API server"},
		{apierrors.NewNotFound(gr, "w1"), ""},
		{apierrors.NewConflict(gr, "w1", errors.New("modified")), ""},
	} {
		if got := stopReason(tt.err); got != tt.want {
			t.Errorf("stopReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestRateClock(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := newRateClock(func() time.Time { return now })
	if got := clock.left(10, 100); got != "" {
		t.Errorf("in the first second: %q, want nothing", got)
	}
	now = now.Add(2 * time.Second)
	if got, want := clock.left(50, 250), " (25/s, 8s left)"; got != want {
		t.Errorf("after 2 s, 50 of 250: %q, want %q", got, want)
	}
	if got := clock.left(250, 250); got != "" {
		t.Errorf("at the end: %q, want nothing", got)
	}
}

func TestCheckRates(t *testing.T) {
	for _, tt := range []struct {
		qps   float32
		burst int
		ok    bool
	}{
		{200, 400, true}, {5, 1, true}, {-1, 0, true}, {0, 10, false}, {10, 0, false},
	} {
		c := &clusterAccess{qps: tt.qps, burst: tt.burst}
		if err := c.checkRates(); (err == nil) != tt.ok || (err != nil && ExitCode(err) != exitUsage) {
			t.Errorf("--qps %v --burst %d: %v", tt.qps, tt.burst, err)
		}
	}
}
