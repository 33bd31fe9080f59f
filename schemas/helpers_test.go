package schemas

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/client-go/openapi"
)

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
