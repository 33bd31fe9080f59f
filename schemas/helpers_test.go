package schemas

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/openapi"
	"sigs.k8s.io/yaml"
)

// gearGVK is the kind of the test CRD.
var gearGVK = schema.GroupVersionKind{Group: "test.statusapply.io", Version: "v1", Kind: "Gear"}

// gearYAML is a CRD whose status.conditions is a map list keyed by type;
// extra status properties are added to its schema (name: type).
func gearYAML(extra ...string) string {
	var props strings.Builder
	for _, e := range extra {
		name, typ, _ := strings.Cut(e, ":")
		fmt.Fprintf(&props, "              %s:\n                type: %s\n", name, typ)
	}
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gears.test.statusapply.io
spec:
  group: test.statusapply.io
  names: {kind: Gear, listKind: GearList, plural: gears, singular: gear}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              teeth: {type: integer}
          status:
            type: object
            properties:
` + props.String() + `              conditions:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [type]
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
                    observedGeneration: {type: integer, format: int64}
`
}

func gearCRD(t testing.TB, extra ...string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(gearYAML(extra...)), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// withGroup returns a copy of crd moved to group, so that tests can have
// several group versions.
func withGroup(crd *apiextensionsv1.CustomResourceDefinition, group string) *apiextensionsv1.CustomResourceDefinition {
	out := crd.DeepCopy()
	out.Spec.Group = group
	out.Name = out.Spec.Names.Plural + "." + group
	return out
}

// gear returns a Gear with the given conditions (type=status) and status
// fields.
func gear(gvk schema.GroupVersionKind, conditions []string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace("ns")
	u.SetName("g1")
	st := map[string]any{}
	for k, v := range status {
		st[k] = v
	}
	if len(conditions) > 0 {
		var list []any
		for _, c := range conditions {
			typ, status, _ := strings.Cut(c, "=")
			list = append(list, map[string]any{"type": typ, "status": status, "reason": "R", "message": ""})
		}
		st["conditions"] = list
	}
	if len(st) > 0 {
		u.Object["status"] = st
	}
	return u
}

// fakeOpenAPI is an API server's OpenAPI v3 index and documents, served
// from memory. It counts the requests and can change a document.
type fakeOpenAPI struct {
	t        testing.TB
	mu       sync.Mutex
	docs     map[string]fakeDoc // path -> document
	index    atomic.Int32       // index reads
	reads    atomic.Int32       // document reads
	revision int
}

type fakeDoc struct {
	url  string
	data []byte
}

func newFakeOpenAPI(t testing.TB) *fakeOpenAPI {
	return &fakeOpenAPI{t: t, docs: map[string]fakeDoc{}}
}

// serve publishes the document of crd's group version (built the way the
// API server builds it), with a new hash.
func (f *fakeOpenAPI) serve(crd *apiextensionsv1.CustomResourceDefinition) {
	f.t.Helper()
	doc, err := builder.BuildOpenAPIV3(crd, crd.Spec.Versions[0].Name, builder.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revision++
	path := "apis/" + crd.Spec.Group + "/" + crd.Spec.Versions[0].Name
	f.docs[path] = fakeDoc{url: fmt.Sprintf("/openapi/v3/%s?hash=%d", path, f.revision), data: data}
}

// remove stops serving path.
func (f *fakeOpenAPI) remove(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.docs, path)
}

func (f *fakeOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	f.index.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]openapi.GroupVersion{}
	for path, d := range f.docs {
		out[path] = fakeGroupVersion{f: f, doc: d}
	}
	return out, nil
}

type fakeGroupVersion struct {
	f   *fakeOpenAPI
	doc fakeDoc
}

func (g fakeGroupVersion) Schema(contentType string) ([]byte, error) {
	return g.SchemaWithContext(context.Background(), contentType)
}

func (g fakeGroupVersion) SchemaWithContext(_ context.Context, contentType string) ([]byte, error) {
	g.f.reads.Add(1)
	if contentType != "application/json" {
		return nil, fmt.Errorf("unexpected content type %q", contentType)
	}
	return g.doc.data, nil
}

func (g fakeGroupVersion) ServerRelativeURL() string { return g.doc.url }

// requests returns the index and document reads so far.
func (f *fakeOpenAPI) requests() (index, reads int32) { return f.index.Load(), f.reads.Load() }

// fakeClock is a clock tests move by hand.
type fakeClock struct{ now atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.now.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.now.Add(int64(d)) }

// mergedConditions merges b into a with tc and returns the condition types
// of the result: a map list keeps both sides' conditions, an atomic one only
// b's.
func mergedConditions(t *testing.T, tc managedfields.TypeConverter, a, b *unstructured.Unstructured) []string {
	t.Helper()
	ta, err := tc.ObjectToTyped(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := tc.ObjectToTyped(b)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := ta.Merge(tb)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := tc.TypedToObject(merged)
	if err != nil {
		t.Fatal(err)
	}
	list, _, _ := unstructured.NestedSlice(obj.(*unstructured.Unstructured).Object, "status", "conditions")
	var types []string
	for _, c := range list {
		types = append(types, c.(map[string]any)["type"].(string))
	}
	return types
}
