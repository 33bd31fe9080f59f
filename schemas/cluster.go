package schemas

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/schemas/internal/kindset"
)

// Defaults of a Cluster.
const (
	// DefaultRefreshInterval is how often a Cluster checks, at most, whether
	// the document of a group version it uses changed.
	DefaultRefreshInterval = 10 * time.Second
	// DefaultMissWait is how long a Cluster waits for a missing kind to appear
	// before it reports the miss: the API server publishes the document of a
	// CRD a moment after the CRD is installed.
	DefaultMissWait = 2 * time.Second
	// DefaultRequestTimeout bounds each request to the API server.
	DefaultRequestTimeout = 30 * time.Second
)

const (
	// recheckAfter is how long after a check a miss or a misfit is answered
	// from the document in hand, without asking the API server again.
	recheckAfter = time.Second
	// waitAgainAfter is how long after a wait for a missing kind ended in
	// vain a miss is checked without waiting: a kind that is not there costs
	// one wait in this long, not one per conversion.
	waitAgainAfter = 10 * time.Second
)

// ClusterOption configures a Cluster.
type ClusterOption func(*clusterConfig)

type clusterConfig struct {
	refresh  time.Duration
	missWait time.Duration
	timeout  time.Duration
	only     map[schema.GroupVersion]bool
}

// WithRefreshInterval sets how often, at most, a Cluster checks whether the
// document of a group version changed (one small request for the index of
// documents, whose entries carry a hash of each document). The check is made
// by a conversion that finds the document older than d. Zero or less checks
// only on misses and misfits.
func WithRefreshInterval(d time.Duration) ClusterOption {
	return func(c *clusterConfig) { c.refresh = d }
}

// WithMissWait sets how long a conversion waits for a missing kind to
// appear before it fails. Zero fails at once.
func WithMissWait(d time.Duration) ClusterOption {
	return func(c *clusterConfig) { c.missWait = max(0, d) }
}

// WithRequestTimeout bounds each request to the API server; zero or less
// leaves them unbounded.
func WithRequestTimeout(d time.Duration) ClusterOption {
	return func(c *clusterConfig) { c.timeout = d }
}

// WithGroupVersions limits the Cluster to gvs: other kinds are misses at
// once, without a request, and are left to the Applier's other converters.
// Without it every group version the API server serves is read when used.
func WithGroupVersions(gvs ...schema.GroupVersion) ClusterOption {
	return func(c *clusterConfig) {
		if c.only == nil {
			c.only = map[schema.GroupVersion]bool{}
		}
		for _, gv := range gvs {
			c.only[gv] = true
		}
	}
}

// Cluster is a type converter that reads schemas from the API server's
// OpenAPI v3 documents, one per group version, the first time a kind of that
// group version is converted. It keeps each document and reads it again when
// it changed, which it checks:
//
//   - when the document is older than the refresh interval;
//   - at once when a kind is missing from it (waiting up to the miss wait
//     for the kind to appear) or when an object does not fit the schema (a
//     field added to the CRD since), at most once a second.
//
// It is safe for concurrent use.
type Cluster struct {
	client  openapi.ClientWithContext
	cfg     clusterConfig
	now     func() time.Time
	version atomic.Uint64

	rootMu sync.Mutex // one read of the index at a time
	root   map[string]openapi.GroupVersionWithContext
	rootAt time.Time // when the read of root started

	mu  sync.Mutex // guards gvs
	gvs map[schema.GroupVersion]*groupVersion
}

// groupVersion is what a Cluster has of one group version.
type groupVersion struct {
	gv   schema.GroupVersion
	path string     // the key of its document in the index: apis/group/version or api/v1
	mu   sync.Mutex // held while the document is checked or read
	doc  atomic.Pointer[document]
}

// document is one read or check of a group version's document. It never
// changes once published; a check publishes a copy.
type document struct {
	url     string       // the document's URL, which carries its hash; "" when the API server has none
	kinds   *kindset.Set // nil when the API server has no document
	checked time.Time
	waited  time.Time // when a wait for a missing kind last ended in vain
}

// FromCluster returns a Cluster reading the OpenAPI v3 documents of the API
// server cfg points at (for a controller-runtime manager: mgr.GetConfig()).
// Nothing is read until a kind is converted.
func FromCluster(cfg *rest.Config, opts ...ClusterOption) (*Cluster, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a discovery client: %w", err)
	}
	return FromOpenAPI(dc.OpenAPIV3(), opts...), nil
}

// FromOpenAPI returns a Cluster reading the documents of c, such as a
// discovery client's OpenAPIV3(). Nothing is read until a kind is converted.
func FromOpenAPI(c openapi.Client, opts ...ClusterOption) *Cluster {
	cfg := clusterConfig{refresh: DefaultRefreshInterval, missWait: DefaultMissWait, timeout: DefaultRequestTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	return &Cluster{client: openapi.ToClientWithContext(c), cfg: cfg, now: time.Now, gvs: map[schema.GroupVersion]*groupVersion{}}
}

// SchemaVersion changes whenever a document the Cluster serves was read
// again with new content, so that what callers derive from a schema can be
// cached per version.
func (c *Cluster) SchemaVersion() uint64 { return c.version.Load() }

// ObjectToTyped converts obj with the schema of its kind, reading or
// refreshing its group version's document when needed (see Cluster).
func (c *Cluster) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("%T has no apiVersion or kind", obj)
	}
	if c.cfg.only != nil && !c.cfg.only[gvk.GroupVersion()] {
		return nil, &MissError{GVK: gvk, Source: "schemas.FromCluster, limited to " + c.limits() + " by WithGroupVersions", Hint: clusterHint}
	}
	g := c.groupVersion(gvk.GroupVersion())
	doc, err := c.current(g)
	if err != nil {
		return nil, err
	}
	if !doc.kinds.Has(gvk) {
		if doc, err = c.refresh(g, doc, gvk); err != nil {
			return nil, err
		}
		if !doc.kinds.Has(gvk) {
			return nil, c.miss(gvk, doc)
		}
	}
	tv, err := doc.kinds.TC.ObjectToTyped(obj, opts...)
	if err == nil {
		return tv, nil
	}
	// The object may hold a field the CRD gained after the document was read.
	fresh, rerr := c.refresh(g, doc, schema.GroupVersionKind{})
	if rerr != nil || fresh.kinds == doc.kinds || !fresh.kinds.Has(gvk) {
		return nil, err
	}
	return fresh.kinds.TC.ObjectToTyped(obj, opts...)
}

// TypedToObject turns a typed value back into an unstructured object.
func (c *Cluster) TypedToObject(tv *typed.TypedValue) (runtime.Object, error) {
	return kindset.ToObject(tv)
}

func (c *Cluster) groupVersion(gv schema.GroupVersion) *groupVersion {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.gvs[gv]
	if g == nil {
		path := "apis/" + gv.Group + "/" + gv.Version
		if gv.Group == "" {
			path = "api/" + gv.Version
		}
		g = &groupVersion{gv: gv, path: path}
		c.gvs[gv] = g
	}
	return g
}

// current returns g's document: read now if it never was, checked now if it
// is older than the refresh interval and no other caller is checking it.
func (c *Cluster) current(g *groupVersion) (*document, error) {
	doc := g.doc.Load()
	if doc == nil {
		return c.load(g)
	}
	if c.cfg.refresh <= 0 || c.now().Sub(doc.checked) < c.cfg.refresh || !g.mu.TryLock() {
		return doc, nil
	}
	defer g.mu.Unlock()
	if cur := g.doc.Load(); cur != doc {
		return cur, nil
	}
	next, err := c.read(g, doc, c.now())
	if err != nil {
		// Keep serving what we have; try again after another interval.
		next = doc.with(func(d *document) { d.checked = c.now() })
	}
	g.doc.Store(next)
	return next, nil
}

// load reads g's document for the first time. An index read less than
// recheckAfter ago serves: at start-up every group version would otherwise
// read it again.
func (c *Cluster) load(g *groupVersion) (*document, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if doc := g.doc.Load(); doc != nil {
		return doc, nil
	}
	doc, err := c.read(g, nil, c.now().Add(-recheckAfter))
	if err != nil {
		return nil, err
	}
	g.doc.Store(doc)
	return doc, nil
}

// refresh checks whether seen, g's document, is still current and reads it
// again when it is not. For a missing kind (want set) it waits up to the miss
// wait for the kind to appear, unless a wait ended in vain recently. Checks
// are at most once per recheckAfter; callers that find another caller has
// refreshed since they looked get that one's result.
func (c *Cluster) refresh(g *groupVersion, seen *document, want schema.GroupVersionKind) (*document, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cur := g.doc.Load()
	if cur != seen {
		return cur, nil
	}
	start := c.now()
	if start.Sub(cur.checked) < recheckAfter && (want.Empty() || !cur.waited.IsZero()) {
		// Just read or checked: for a misfit, or a miss already waited for.
		return cur, nil
	}
	deadline := start
	if !want.Empty() && start.Sub(cur.waited) >= waitAgainAfter {
		deadline = start.Add(c.cfg.missWait)
	}
	delay := 50 * time.Millisecond
	for since := start; ; since = c.now() {
		next, err := c.read(g, cur, since)
		if err != nil {
			return cur, err
		}
		changed := next.kinds != cur.kinds
		if changed && (want.Empty() || next.kinds.Has(want)) {
			g.doc.Store(next)
			return next, nil
		}
		cur = next
		if now := c.now(); !now.Before(deadline) {
			if !want.Empty() && deadline.After(start) {
				cur = cur.with(func(d *document) { d.waited = now })
			}
			g.doc.Store(cur)
			return cur, nil
		}
		time.Sleep(min(delay, deadline.Sub(c.now())))
		delay = min(2*delay, 400*time.Millisecond)
	}
}

// read checks g's entry in an index read at or after since, and reads the
// document when its URL (its hash) differs from prev's.
func (c *Cluster) read(g *groupVersion, prev *document, since time.Time) (*document, error) {
	root, err := c.index(since)
	if err != nil {
		return nil, err
	}
	now := c.now()
	entry, ok := root[g.path]
	if !ok {
		if prev != nil && prev.kinds != nil {
			c.version.Add(1) // the group version is gone
		}
		return &document{checked: now}, nil
	}
	url := entry.ServerRelativeURL()
	if prev != nil && prev.kinds != nil && prev.url == url {
		return prev.with(func(d *document) { d.checked = now }), nil
	}
	ctx, cancel := c.requestContext()
	defer cancel()
	data, err := entry.SchemaWithContext(ctx, "application/json")
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 document of %s: %w", g.gv, err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI v3 document of %s: %w", g.gv, err)
	}
	var definitions map[string]*spec.Schema
	if doc.Components != nil {
		definitions = doc.Components.Schemas
	}
	k, err := kindset.New(definitions, false)
	if err != nil {
		return nil, fmt.Errorf("the OpenAPI v3 document of %s: %w", g.gv, err)
	}
	c.version.Add(1)
	return &document{url: url, kinds: k, checked: now}, nil
}

// index returns the API server's index of documents, read at or after since.
func (c *Cluster) index(since time.Time) (map[string]openapi.GroupVersionWithContext, error) {
	c.rootMu.Lock()
	defer c.rootMu.Unlock()
	if c.root != nil && !c.rootAt.Before(since) {
		return c.root, nil
	}
	start := c.now()
	ctx, cancel := c.requestContext()
	defer cancel()
	root, err := c.client.PathsWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's OpenAPI v3 index: %w", err)
	}
	c.root, c.rootAt = root, start
	return root, nil
}

// requestContext bounds one request by the request timeout. The
// TypeConverter interface takes no context: conversions cannot be cancelled.
func (c *Cluster) requestContext() (context.Context, context.CancelFunc) {
	if c.cfg.timeout <= 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), c.cfg.timeout)
}

// miss is the error for a kind doc does not have.
func (c *Cluster) miss(gvk schema.GroupVersionKind, doc *document) error {
	source := "the API server's OpenAPI v3 document for " + gvk.GroupVersion().String()
	if doc.kinds == nil {
		source = "the API server's OpenAPI v3, which has no document for " + gvk.GroupVersion().String()
	}
	return &MissError{GVK: gvk, Source: source, Hint: clusterHint}
}

// limits lists the group versions WithGroupVersions allows.
func (c *Cluster) limits() string {
	var gvs []string
	for gv := range c.cfg.only {
		gvs = append(gvs, gv.String())
	}
	sort.Strings(gvs)
	return strings.Join(gvs, ", ")
}

// with returns a copy of d changed by edit.
func (d *document) with(edit func(*document)) *document {
	cp := *d
	edit(&cp)
	return &cp
}
