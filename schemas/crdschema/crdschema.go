// Package crdschema builds the schemas of custom resources offline from
// their CustomResourceDefinitions or YAML manifests (apiextensions.k8s.io/v1),
// the way the API server builds them for server-side apply, for an
// ssa.Applier that has no Go types for them. No API server is asked.
//
// It is apart from package schemas, whose Cluster reads the schemas the API
// server serves, because building them from CRDs links the API server's own
// OpenAPI builder (k8s.io/apiserver, CEL, gRPC, OpenTelemetry): a controller
// that reads schemas from the cluster does not pay for it.
//
// A kind CRDs has no schema for is a miss: the error is a *schemas.MissError,
// which wraps ssa.ErrNoSchema.
package crdschema

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/schemas"
	"github.com/statusapply/statusapply/schemas/internal/kindset"
)

// CRDs is a type converter built offline from CustomResourceDefinitions: no
// API server is asked. Every version of every CRD with a schema is served.
// It is safe for concurrent use; Set and Remove change it while it serves.
type CRDs struct {
	mu      sync.Mutex // serialises Set and Remove
	index   atomic.Pointer[crdIndex]
	version atomic.Uint64
}

// crdIndex is the schemas of a set of CRDs. It never changes once built.
type crdIndex struct {
	byName map[string]*kindset.Set // CRD name -> its kinds
	byKind map[schema.GroupVersionKind]*kindset.Set
}

// FromCRDs returns a converter serving the schemas of crds.
func FromCRDs(crds ...*apiextensionsv1.CustomResourceDefinition) (*CRDs, error) {
	c := &CRDs{}
	c.index.Store(&crdIndex{byName: map[string]*kindset.Set{}, byKind: map[schema.GroupVersionKind]*kindset.Set{}})
	if err := c.Set(crds...); err != nil {
		return nil, err
	}
	return c, nil
}

// FromCRDYAML returns a converter serving the CRDs in docs, each YAML (one or
// more documents separated by ---) or JSON. Documents of other kinds are
// skipped; finding no CRD at all is an error.
func FromCRDYAML(docs ...[]byte) (*CRDs, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for i, doc := range docs {
		found, err := decodeCRDs(fmt.Sprintf("manifest %d", i+1), doc)
		if err != nil {
			return nil, err
		}
		crds = append(crds, found...)
	}
	if len(crds) == 0 {
		return nil, errors.New("no CustomResourceDefinition in the manifests")
	}
	return FromCRDs(crds...)
}

// FromCRDFiles returns a converter serving the CRDs in the files at paths. A
// directory stands for its *.yaml, *.yml and *.json files (not its
// subdirectories). Documents of other kinds are skipped; finding no CRD at
// all is an error.
func FromCRDFiles(paths ...string) (*CRDs, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		files, err := manifestFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			found, err := decodeCRDs(f, data)
			if err != nil {
				return nil, err
			}
			crds = append(crds, found...)
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinition in %s", strings.Join(paths, ", "))
	}
	return FromCRDs(crds...)
}

// manifestFiles lists the manifests path stands for.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	return files, nil
}

// decodeCRDs returns the CRDs among the documents of a manifest (see
// schemas.DecodeCRDs), refusing those of apiextensions.k8s.io/v1beta1,
// whose schemas are elsewhere.
func decodeCRDs(name string, data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := schemas.DecodeCRDs(name, data)
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		if crd.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("%s: CRD %s is %s; only %s is supported", name, crd.Name, crd.APIVersion, apiextensionsv1.SchemeGroupVersion)
		}
	}
	return crds, nil
}

// Set adds crds, replacing the CRDs of the same names: a converter fed from a
// watch on CRDs follows their changes. Nothing changes on an error.
func (c *CRDs) Set(crds ...*apiextensionsv1.CustomResourceDefinition) error {
	built := make(map[string]*kindset.Set, len(crds))
	for _, crd := range crds {
		if crd == nil {
			return errors.New("nil CustomResourceDefinition")
		}
		k, err := crdKinds(crd)
		if err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
		built[crd.Name] = k
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	byName := maps.Clone(c.index.Load().byName)
	maps.Copy(byName, built)
	c.store(byName)
	return nil
}

// Remove drops the CRDs of names; unknown names are ignored.
func (c *CRDs) Remove(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byName := maps.Clone(c.index.Load().byName)
	for _, n := range names {
		delete(byName, n)
	}
	c.store(byName)
}

// store publishes byName. Callers hold c.mu.
func (c *CRDs) store(byName map[string]*kindset.Set) {
	byKind := map[schema.GroupVersionKind]*kindset.Set{}
	for _, k := range byName {
		for gvk := range k.GVKs {
			byKind[gvk] = k
		}
	}
	c.index.Store(&crdIndex{byName: byName, byKind: byKind})
	c.version.Add(1)
}

// Names lists the CRDs served, sorted.
func (c *CRDs) Names() []string {
	return slices.Sorted(maps.Keys(c.index.Load().byName))
}

// SchemaVersion changes whenever the schemas served change (Set, Remove), so
// that what callers derive from a schema can be cached per version.
func (c *CRDs) SchemaVersion() uint64 { return c.version.Load() }

// crdKinds builds the schemas of every version of crd, the way the API
// server builds them for server-side apply.
func crdKinds(crd *apiextensionsv1.CustomResourceDefinition) (*kindset.Set, error) {
	definitions := map[string]*spec.Schema{}
	for _, v := range crd.Spec.Versions {
		doc, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
		if err != nil {
			return nil, fmt.Errorf("version %s: %w", v.Name, err)
		}
		if doc.Components != nil {
			maps.Copy(definitions, doc.Components.Schemas)
		}
	}
	k, err := kindset.New(definitions, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return nil, err
	}
	// The definitions declare other kinds too (DeleteOptions of every group):
	// the converter serves the CRD's own.
	own := map[schema.GroupVersionKind]struct{}{}
	for _, v := range crd.Spec.Versions {
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		if k.Has(gvk) {
			own[gvk] = struct{}{}
		}
	}
	if len(own) == 0 {
		return nil, errors.New("no version has a schema")
	}
	k.GVKs = own
	return k, nil
}

// ObjectToTyped converts obj with the schema of its kind.
func (c *CRDs) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	idx := c.index.Load()
	k := idx.byKind[gvk]
	if k == nil {
		names := slices.Sorted(maps.Keys(idx.byName))
		source := "the converter's CRDs (" + strings.Join(names, ", ") + ")"
		if len(names) == 0 {
			source = "the converter's CRDs (none)"
		}
		return nil, &schemas.MissError{GVK: gvk, Source: source, Hint: crdsHint}
	}
	return k.TC.ObjectToTyped(obj, opts...)
}

// TypedToObject turns a typed value back into an unstructured object.
func (c *CRDs) TypedToObject(tv *typed.TypedValue) (runtime.Object, error) {
	return kindset.ToObject(tv)
}

// Kinds lists the kinds served, sorted.
func (c *CRDs) Kinds() []schema.GroupVersionKind {
	idx := c.index.Load()
	out := slices.Collect(maps.Keys(idx.byKind))
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// crdsHint is what a miss suggests: another CRD, or the other source.
const crdsHint = "add its CRD (crdschema.FromCRDs, FromCRDYAML, FromCRDFiles, or CRDs.Set), or read the " +
	"schemas the API server serves with ssa.WithTypeConverter(schemas.FromCluster(cfg))"
