package schemas

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/statusapply/statusapply/schemas/internal/gears"
	"github.com/statusapply/statusapply/ssa"
)

// newTestCluster returns a Cluster over f with a hand-moved clock.
func newTestCluster(f *fakeOpenAPI, opts ...ClusterOption) (*Cluster, *fakeClock) {
	c := FromOpenAPI(f, opts...)
	clock := newFakeClock()
	c.now = clock.Now
	return c, clock
}

func expectRequests(t *testing.T, f *fakeOpenAPI, index, reads int32, when string) {
	t.Helper()
	if gi, gr := f.requests(); gi != index || gr != reads {
		t.Fatalf("%s: %d index and %d document reads, want %d and %d", when, gi, gr, index, reads)
	}
}

func TestClusterReadsLazilyAndKeeps(t *testing.T) {
	f := newFakeOpenAPI(t)
	f.serve(gears.CRD(t))
	c, clock := newTestCluster(f)
	expectRequests(t, f, 0, 0, "before any conversion")

	got := gears.MergedConditions(t, c, gears.Object(gears.GVK, []string{"A=True"}, nil), gears.Object(gears.GVK, []string{"B=True"}, nil))
	if strings.Join(got, ",") != "A,B" {
		t.Fatalf("merged conditions %v, want A and B", got)
	}
	expectRequests(t, f, 1, 1, "after the first conversions")

	clock.Advance(DefaultRefreshInterval - time.Millisecond)
	for range 10 {
		if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, nil)); err != nil {
			t.Fatal(err)
		}
	}
	expectRequests(t, f, 1, 1, "within the refresh interval")

	// Past the interval: one index read; the hash is the same, so no document read.
	clock.Advance(time.Millisecond)
	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, nil)); err != nil {
		t.Fatal(err)
	}
	expectRequests(t, f, 2, 1, "after the interval, unchanged")
	version := c.SchemaVersion()

	// The CRD gains a field: the next check reads the new document.
	f.serve(gears.CRD(t, "color:string"))
	clock.Advance(DefaultRefreshInterval)
	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, map[string]any{"color": "red"})); err != nil {
		t.Fatal(err)
	}
	expectRequests(t, f, 3, 2, "after the interval, changed")
	if c.SchemaVersion() == version {
		t.Error("SchemaVersion did not change with the document")
	}
}

func TestClusterRefreshesWhenAnObjectDoesNotFit(t *testing.T) {
	f := newFakeOpenAPI(t)
	f.serve(gears.CRD(t))
	c, clock := newTestCluster(f, WithRefreshInterval(time.Hour))
	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, nil)); err != nil {
		t.Fatal(err)
	}
	colored := gears.Object(gears.GVK, nil, map[string]any{"color": "red"})

	// A misfit right after a read is answered from the document in hand.
	if _, err := c.ObjectToTyped(colored); err == nil || !strings.Contains(err.Error(), "color") {
		t.Fatalf("error %v, want the schema's complaint about color", err)
	}
	expectRequests(t, f, 1, 1, "a misfit right after the read")

	// Later, with the document unchanged: one check, the same complaint.
	clock.Advance(recheckAfter)
	if _, err := c.ObjectToTyped(colored); err == nil {
		t.Fatal("converted a field no schema declares")
	}
	expectRequests(t, f, 2, 1, "a misfit, unchanged document")
	if _, err := c.ObjectToTyped(colored); err == nil {
		t.Fatal("converted a field no schema declares")
	}
	expectRequests(t, f, 2, 1, "a second misfit within a second")

	// The CRD gains the field: a misfit finds the new document at once,
	// long before the refresh interval.
	f.serve(gears.CRD(t, "color:string"))
	clock.Advance(recheckAfter)
	if _, err := c.ObjectToTyped(colored); err != nil {
		t.Fatalf("after the CRD gained the field: %v", err)
	}
	expectRequests(t, f, 3, 2, "a misfit, changed document")
}

func TestClusterWaitsForANewGroupVersion(t *testing.T) {
	f := newFakeOpenAPI(t)
	c := FromOpenAPI(f, WithMissWait(5*time.Second))
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.serve(gears.CRD(t))
	}()
	start := time.Now()
	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, nil)); err != nil {
		t.Fatalf("the group version appeared after 300ms: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Fatalf("the conversion took %v", d)
	}
}

func TestClusterMiss(t *testing.T) {
	f := newFakeOpenAPI(t)
	f.serve(gears.CRD(t))
	c := FromOpenAPI(f, WithMissWait(200*time.Millisecond))

	sprocket := schema.GroupVersionKind{Group: "test.statusapply.io", Version: "v1", Kind: "Sprocket"}
	start := time.Now()
	_, err := c.ObjectToTyped(gears.Object(sprocket, nil, nil))
	var miss *MissError
	if !errors.As(err, &miss) || !errors.Is(err, ssa.ErrNoSchema) || miss.GVK != sprocket {
		t.Fatalf("error %v, want a *MissError for %s", err, sprocket)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("the miss was reported after %v, before the miss wait", d)
	}
	for _, want := range []string{"no schema for kind Sprocket (test.statusapply.io/v1)", "OpenAPI v3 document for test.statusapply.io/v1",
		"install its CRD", "crdschema.FromCRDFiles"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The wait ended in vain: the next miss is reported at once.
	start = time.Now()
	if _, err := c.ObjectToTyped(gears.Object(sprocket, nil, nil)); !errors.As(err, &miss) {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("a second miss took %v", d)
	}

	// A group version the API server does not serve.
	missing := schema.GroupVersionKind{Group: "nowhere.statusapply.io", Version: "v1", Kind: "Gear"}
	if _, err := c.ObjectToTyped(gears.Object(missing, nil, nil)); err == nil || !strings.Contains(err.Error(), "has no document for nowhere.statusapply.io/v1") {
		t.Fatalf("error %v", err)
	}

	// Limited to other group versions: a miss without a request.
	limited := FromOpenAPI(f, WithGroupVersions(schema.GroupVersion{Group: "other.statusapply.io", Version: "v1"}))
	index, reads := f.requests()
	if _, err := limited.ObjectToTyped(gears.Object(gears.GVK, nil, nil)); !errors.As(err, &miss) || !strings.Contains(err.Error(), "WithGroupVersions") {
		t.Fatalf("error %v", err)
	}
	expectRequests(t, f, index, reads, "a group version WithGroupVersions leaves out")
}

func TestClusterFollowsARemovedGroupVersion(t *testing.T) {
	f := newFakeOpenAPI(t)
	f.serve(gears.CRD(t))
	c, clock := newTestCluster(f, WithMissWait(0))
	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.remove("apis/test.statusapply.io/v1")
	clock.Advance(DefaultRefreshInterval)
	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, nil)); !errors.Is(err, ssa.ErrNoSchema) {
		t.Fatalf("after the group version was removed: %v", err)
	}
}

// Many goroutines convert objects of two group versions while the documents
// change under them: run with -race.
func TestClusterConcurrentUse(t *testing.T) {
	f := newFakeOpenAPI(t)
	f.serve(gears.CRD(t))
	other := gears.WithGroup(gears.CRD(t), "other.statusapply.io")
	f.serve(other)
	c := FromOpenAPI(f, WithRefreshInterval(time.Millisecond), WithMissWait(time.Millisecond))
	otherGVK := gears.GVK
	otherGVK.Group = other.Spec.Group

	stop := make(chan struct{})
	var changes sync.WaitGroup
	changes.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			f.serve(gears.CRD(t, fmt.Sprintf("f%d:string", i)))
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Go(func() {
			gvk := []schema.GroupVersionKind{gears.GVK, otherGVK}[i%2]
			for j := range 200 {
				obj := gears.Object(gvk, []string{fmt.Sprintf("C%d=True", j%3)}, nil)
				if _, err := c.ObjectToTyped(obj); err != nil {
					errs <- err
					return
				}
				if _, err := c.ObjectToTyped(obj); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	changes.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c.SchemaVersion() < 2 {
		t.Errorf("SchemaVersion %d: the changing document was never read again", c.SchemaVersion())
	}
}
