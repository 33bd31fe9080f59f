package schemas

import (
	"context"
	"os"
	"sort"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conditions"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/schemas"
	"github.com/statusapply/statusapply/schemas/crdschema"
	"github.com/statusapply/statusapply/ssa"
)

// The two field managers and their condition types.
const (
	spinner = "sprocket-spinner"
	mesher  = "sprocket-mesher"
)

// source makes the type converter a spec's Appliers use, for crd: as a
// controller would (make), and for a spec that changes the CRD (evolving).
type source struct {
	name           string
	make, evolving func(crd *apiextensionsv1.CustomResourceDefinition) managedfields.TypeConverter
}

var sources = []source{
	{
		name: "from the cluster",
		make: func(*apiextensionsv1.CustomResourceDefinition) managedfields.TypeConverter {
			c, err := schemas.FromCluster(env.Config)
			Expect(err).NotTo(HaveOccurred())
			return c
		},
		// A short refresh interval keeps the spec short; the default is
		// 10 s.
		evolving: func(*apiextensionsv1.CustomResourceDefinition) managedfields.TypeConverter {
			c, err := schemas.FromCluster(env.Config, schemas.WithRefreshInterval(time.Second))
			Expect(err).NotTo(HaveOccurred())
			return c
		},
	},
	{
		name: "from the CRD's YAML",
		make: fromYAML,
		// Set replaces the CRD when the spec changes it.
		evolving: fromYAML,
	},
}

func fromYAML(crd *apiextensionsv1.CustomResourceDefinition) managedfields.TypeConverter {
	c, err := crdschema.FromCRDs(crd)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// addGears adds status.gears to crd's schema: a map list keyed by name.
func addGears(crd *apiextensionsv1.CustomResourceDefinition) {
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	status := root.Properties["status"]
	mapList := "map"
	status.Properties["gears"] = apiextensionsv1.JSONSchemaProps{
		Type:         "array",
		XListType:    &mapList,
		XListMapKeys: []string{"name"},
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
			Type:     "object",
			Required: []string{"name"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"name": {Type: "string"},
				"size": {Type: "integer", Format: "int64"},
			},
		}},
	}
	root.Properties["status"] = status
}

// putGear sets the gear name in u's status.gears.
func putGear(u *unstructured.Unstructured, name string, size int64) error {
	gears, _, err := unstructured.NestedSlice(u.Object, "status", "gears")
	if err != nil {
		return err
	}
	gear := map[string]any{"name": name, "size": size}
	for i, g := range gears {
		if m, ok := g.(map[string]any); ok && m["name"] == name {
			gears[i] = gear
			return unstructured.SetNestedSlice(u.Object, gears, "status", "gears")
		}
	}
	return unstructured.SetNestedSlice(u.Object, append(gears, gear), "status", "gears")
}

// gearNames lists the gears of obj, sorted.
func gearNames(obj *unstructured.Unstructured) []string {
	gears, _, _ := unstructured.NestedSlice(obj.Object, "status", "gears")
	var names []string
	for _, g := range gears {
		if m, ok := g.(map[string]any); ok {
			name, _ := m["name"].(string)
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// ownsGear reports whether manager's status Apply entry owns the gear name.
func ownsGear(obj *unstructured.Unstructured, manager, name string) bool {
	o, err := ownership.Inspect(obj)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	path := fieldpath.MakePathOrDie("status", "gears", fieldpath.KeyByFields("name", name))
	for _, e := range o.Managers(manager) {
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ownership.StatusSubresource {
			return e.Owns(path)
		}
	}
	return false
}

// sprocketCRD reads the Sprocket CRD from its manifest.
func sprocketCRD() *apiextensionsv1.CustomResourceDefinition {
	data, err := os.ReadFile(sprocketManifest)
	Expect(err).NotTo(HaveOccurred())
	crds, err := schemas.DecodeCRDs(sprocketManifest, data)
	Expect(err).NotTo(HaveOccurred())
	Expect(crds).To(HaveLen(1))
	return crds[0]
}

// installCopy installs the Sprocket CRD under group, for a spec that changes
// its CRD, and returns it as installed.
func installCopy(group string) *apiextensionsv1.CustomResourceDefinition {
	crd := sprocketCRD()
	crd.Spec.Group = group
	crd.Name = crd.Spec.Names.Plural + "." + group
	installed, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}})
	Expect(err).NotTo(HaveOccurred())
	return installed[0]
}

// writer is one controller: an Applier of its own, through a client whose
// requests are counted.
type writer struct {
	applier  *ssa.Applier
	requests *apiserver.Requests
}

func newWriter(tc managedfields.TypeConverter) writer {
	c, requests, err := env.CountingClient()
	Expect(err).NotTo(HaveOccurred())
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))
	Expect(err).NotTo(HaveOccurred())
	return writer{applier: a, requests: requests}
}

// reconcile runs one reconcile of w: queue runs on a new batch with the
// object read from the API server, and the batch is flushed.
func (w writer) reconcile(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey, queue func(*batcher.Batch, *unstructured.Unstructured) error) error {
	obj := get(ctx, gvk, key)
	b := batcher.New(w.applier)
	if err := queue(b, obj); err != nil {
		return err
	}
	return b.Flush(ctx)
}

func get(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	ExpectWithOffset(2, env.Client.Get(ctx, key, u)).To(Succeed())
	return u
}

func create(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) client.ObjectKey {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"teeth": int64(12)}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	ExpectWithOffset(1, env.Client.Create(ctx, u)).To(Succeed())
	return client.ObjectKeyFromObject(u)
}

// spinning is a Mutator of unstructured apply configurations: it sets the
// spinner's condition in the intent, keeping its lastTransitionTime while the
// status does not change.
func spinning(status metav1.ConditionStatus) batcher.Mutator[*unstructured.Unstructured, *unstructured.Unstructured] {
	return func(ac, observed *unstructured.Unstructured) error {
		conditions.Set(conditions.Unstructured(ac), metav1.Condition{
			Type: "Spinning", Status: status, Reason: "Motor", Message: "spinning is " + string(status),
			ObservedGeneration: observed.GetGeneration(),
		})
		return nil
	}
}

// meshed is the mesher's condition, set by an Edit of the object.
func meshed(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: "Meshed", Status: status, Reason: "Gears", Message: "meshed is " + string(status)}
}

// conditionTypes lists obj's condition types and statuses.
func conditionTypes(obj *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, c := range conditions.Unstructured(obj).GetConditions() {
		out[c.Type] = string(c.Status)
	}
	return out
}

// owns reports whether manager's status Apply entry owns the condition of
// condType as a whole.
func owns(obj *unstructured.Unstructured, manager, condType string) bool {
	o, err := ownership.Inspect(obj)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, e := range o.Managers(manager) {
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ownership.StatusSubresource {
			return e.Owns(ownership.ConditionPath(condType))
		}
	}
	return false
}

// Groups of the Sprocket copies the specs that change their CRD install.
var (
	clusterGroup = schema.GroupVersion{Group: "cluster.evolving.statusapply.io", Version: "v1"}
	yamlGroup    = schema.GroupVersion{Group: "yaml.evolving.statusapply.io", Version: "v1"}
	// promptGroup's copy changes under converters left at their default
	// refresh interval.
	promptGroup = schema.GroupVersion{Group: "prompt.evolving.statusapply.io", Version: "v1"}
	// skewGroup's copy gains a field its older writer's schema lacks.
	skewGroup = schema.GroupVersion{Group: "skew.evolving.statusapply.io", Version: "v1"}
	// editSkewGroup's copy is skewGroup's, for a writer through Edits.
	editSkewGroup = schema.GroupVersion{Group: "editskew.evolving.statusapply.io", Version: "v1"}
)
