package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/config/crd"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
)

// observed is a Widget as the API server returns it after a legacy writer
// merge-patched conditions Ready and Synced and an apply manager set Reachable.
const observed = `{
  "apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
  "metadata": {"name": "w1", "namespace": "default", "managedFields": [
    {"manager": "legacy", "operation": "Update", "subresource": "status",
     "apiVersion": "demo.statusapply.io/v1alpha1", "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
     "fieldsV1": {"f:status": {".": {}, "f:phase": {}, "f:conditions": {".": {},
       "k:{\"type\":\"Ready\"}": {".": {}, "f:type": {}, "f:status": {}, "f:reason": {}, "f:message": {}, "f:lastTransitionTime": {}},
       "k:{\"type\":\"Synced\"}": {".": {}, "f:type": {}, "f:status": {}, "f:reason": {}, "f:message": {}, "f:lastTransitionTime": {}}}}}},
    {"manager": "networking", "operation": "Apply", "subresource": "status",
     "apiVersion": "demo.statusapply.io/v1alpha1", "time": "2026-01-02T03:04:06Z", "fieldsType": "FieldsV1",
     "fieldsV1": {"f:status": {"f:conditions": {
       "k:{\"type\":\"Reachable\"}": {".": {}, "f:type": {}, "f:status": {}, "f:reason": {}, "f:message": {}, "f:lastTransitionTime": {}}}}}}
  ]}}`

// decodeWidget decodes the observed Widget.
func decodeWidget() *v1alpha1.Widget {
	w := &v1alpha1.Widget{}
	if err := json.Unmarshal([]byte(observed), w); err != nil {
		log.Fatal(err)
	}
	return w
}

func ExampleLintCRDs() {
	crds, err := crd.CRDs()
	if err != nil {
		log.Fatal(err)
	}
	findings := fleet.LintCRDs(crds...)
	for _, f := range findings {
		fmt.Println(f.CRD, f.Version, f.Path, f.Severity)
	}
	fmt.Println("fail CI:", fleet.HasErrors(findings))
	// Output:
	// gadgets.demo.statusapply.io v1alpha1 status.conditions error
	// widgets.demo.statusapply.io v1alpha1 status.plan.steps warning
	// fail CI: true
}

func ExamplePlan_Rewrite() {
	w := decodeWidget()
	plan := fleet.Plan{
		Conditions: map[string]string{"Ready": "readiness", "Synced": "sync"},
		Managers:   map[string]string{"legacy": "summary"},
	}
	entries, changed, err := plan.Rewrite(w, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	w.SetManagedFields(entries)
	after, err := ownership.Inspect(w)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(changed)
	fmt.Print(after)
	// Output:
	// true
	// Widget default/w1:
	//   summary (Apply, status) status=.status.phase
	//   networking (Apply, status) conditions=Reachable
	//   readiness (Apply, status) conditions=Ready
	//   sync (Apply, status) conditions=Synced
}

// A migration run from a tool or a one-off job: dry run first, then for real.
func ExampleMigrator_MigrateList() {
	var c client.Client // an uncached client for the cluster
	ctx := context.Background()
	plan := fleet.Plan{
		Conditions:    map[string]string{"Ready": "readiness", "Reachable": "networking"},
		Managers:      map[string]string{"widget-controller": "summary"},
		ReleaseShared: true,
	}
	list := &v1alpha1.WidgetList{}
	if err := c.List(ctx, list); err != nil {
		log.Fatal(err)
	}
	for _, dryRun := range []bool{true, false} {
		m, err := fleet.NewMigrator(c, plan, fleet.WithDryRun(dryRun),
			fleet.WithProgress(func(p fleet.Progress) {
				if p.Err != nil {
					log.Printf("%d/%d %v", p.Done, p.Total, p.Err)
				} else if p.Result.Changed {
					log.Printf("%d/%d %s", p.Done, p.Total, p.Result)
				}
			}))
		if err != nil {
			log.Fatal(err)
		}
		report, err := m.MigrateList(ctx, list)
		if err != nil {
			log.Fatal(err)
		}
		log.Println(report)
		if report.Err() != nil {
			log.Fatal(report.Err())
		}
	}
}

// ExampleAudit audits a fleet (here one object; ListObjects reads a real one
// page by page) and prints the verdict as migrate flags.
func ExampleAudit() {
	objs := func(yield func(metav1.Object, error) bool) {
		yield(decodeWidget(), nil)
	}
	r, err := fleet.Audit(objs, fleet.AuditOptions{
		Now:               time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC),
		SchemaUnavailable: "not looked up in this example",
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range r.Managers {
		fmt.Println(m.Manager, m.Operation, m.Objects, m.Conditions)
	}
	fmt.Println(r.Verdict.Flags)
	for _, u := range r.Verdict.Unresolved {
		fmt.Println(u)
	}

	// The new writers restate the legacy values, so their applies send
	// nothing and never show in managedFields: name them.
	r, err = fleet.Audit(objs, fleet.AuditOptions{
		Now:               time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC),
		SchemaUnavailable: "not looked up in this example",
		Writers:           map[string][]string{"readiness": {"Ready"}, "sync": {"Synced", ".status.phase"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Verdict.Flags, len(r.Verdict.Unresolved))
	// Output:
	// legacy Update 1 [{Ready 1} {Synced 1}]
	// networking Apply 1 [{Reachable 1}]
	// []
	// condition Ready: held by legacy, applied by no manager: name its new writer with --writer MANAGER=Ready (or migrate --condition Ready=MANAGER); applying alone never takes it over, since an apply restating the value sends nothing and one changing it conflicts
	// condition Synced: held by legacy, applied by no manager: name its new writer with --writer MANAGER=Synced (or migrate --condition Synced=MANAGER); applying alone never takes it over, since an apply restating the value sends nothing and one changing it conflicts
	// legacy keeps condition Ready, condition Synced, .status.phase: no one apply manager owns all of it or is declared to write it (--writer); give --from legacy=MANAGER for the manager that writes it from now on, or leave it with legacy
	// [--condition Ready=readiness --condition Synced=sync --from legacy=sync --new-destination readiness --new-destination sync] 0
}

// ExampleListObjects audits every Widget in a namespace, 200 at a time,
// with the CRD's schema checked.
func ExampleListObjects() {
	audit := func(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) error {
		gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
		r, err := fleet.Audit(fleet.ListObjects(ctx, c, gvk, 200, client.InNamespace("shop")),
			fleet.AuditOptions{CRD: crd})
		if err != nil {
			return err
		}
		fmt.Println(r.Objects, "objects; migrate with", r.Verdict.Flags)
		return nil
	}
	_ = audit
}

func ExampleVersions_Staleness() {
	crds, err := crd.CRDs()
	if err != nil {
		log.Fatal(err)
	}
	// The Widget CRD as it would read after v1alpha1 stopped being served
	// beside a new storage version v1.
	i := slices.IndexFunc(crds, func(c *apiextensionsv1.CustomResourceDefinition) bool {
		return c.Name == "widgets.demo.statusapply.io"
	})
	widgets := crds[i].DeepCopy()
	v1 := *widgets.Spec.Versions[0].DeepCopy()
	v1.Name = "v1"
	widgets.Spec.Versions[0].Served, widgets.Spec.Versions[0].Storage = false, false
	widgets.Spec.Versions = append(widgets.Spec.Versions, v1)
	versions, err := fleet.VersionsOf(widgets)
	if err != nil {
		log.Fatal(err)
	}
	for _, apiVersion := range []string{"demo.statusapply.io/v1", "demo.statusapply.io/v1alpha1", "demo.statusapply.io/v1beta1"} {
		fmt.Printf("%s: %q\n", apiVersion, versions.Staleness(apiVersion))
	}
	// Output:
	// demo.statusapply.io/v1: ""
	// demo.statusapply.io/v1alpha1: "not served"
	// demo.statusapply.io/v1beta1: "removed"
}
