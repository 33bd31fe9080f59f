package fleet

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/ownership"
)

// Versions is what a CustomResourceDefinition says about its versions, for
// reading managedFields recorded in several of them: which versions it
// serves and stores, and whether a field set recorded in one version means
// the same fields in another.
//
// The API server records every managedFields entry in the API version the
// write went through, and reads each entry with that version's schema. A
// version removed from the CRD leaves entries the server can no longer read:
// every server-side apply to such an object then fails with "request to
// convert CR to an invalid group/version", while updates and merge patches
// still succeed. A field set moves from one version to another only where
// the objects of both versions hold the same fields at the same paths, with
// the same list and map types: under conversion None, or with identical
// schemas. Everything else does not translate.
type Versions struct {
	crd     string
	group   string
	storage string
	served  []string
	// schemas holds every version the CRD lists; versions with identical
	// schemas share one pointer, so that Translate compares pointers.
	schemas map[string]*apiextensionsv1.JSONSchemaProps
	// sameValues says objects read in two versions hold the same fields:
	// conversion None (only apiVersion changes).
	sameValues bool
}

// VersionsOf reads crd's versions. A CRD without a storage version, or
// with a version that has no schema, is an error: nothing can be said
// about its field sets.
func VersionsOf(crd *apiextensionsv1.CustomResourceDefinition) (*Versions, error) {
	v := &Versions{
		crd:     crd.Name,
		group:   crd.Spec.Group,
		schemas: map[string]*apiextensionsv1.JSONSchemaProps{},
	}
	v.sameValues = crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy == "" ||
		crd.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter
	for _, ver := range crd.Spec.Versions {
		if ver.Served {
			v.served = append(v.served, ver.Name)
		}
		if ver.Storage {
			v.storage = ver.Name
		}
		if ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: version %s has no schema", crd.Name, ver.Name)
		}
		s := ver.Schema.OpenAPIV3Schema
		for _, earlier := range v.schemas {
			if reflect.DeepEqual(earlier, s) {
				s = earlier
				break
			}
		}
		v.schemas[ver.Name] = s
	}
	if v.storage == "" {
		return nil, fmt.Errorf("CustomResourceDefinition %s: no storage version", crd.Name)
	}
	return v, nil
}

// storageAPIVersion is the storage version as managedFields spell it:
// group/version.
func (v *Versions) storageAPIVersion() string { return v.group + "/" + v.storage }

// version returns the version of apiVersion (group/version) when the group
// is the CRD's, else "".
func (v *Versions) version(apiVersion string) string {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok || group != v.group {
		return ""
	}
	return version
}

// Staleness says why an API version (group/version) is stale, or "" when
// the CRD serves it: StaleRemoved when the CRD no longer lists it (every
// server-side apply to an object with an entry in it fails, ApplyError),
// StaleNotServed when it lists it without serving it (applies still work;
// they fail once it is removed). Audit and Plan.RewriteStaleVersions decide
// with it which entries are stale.
func (v *Versions) Staleness(apiVersion string) string {
	ver := v.version(apiVersion)
	switch {
	case v.schemas[ver] == nil:
		return StaleRemoved
	case !slices.Contains(v.served, ver):
		return StaleNotServed
	}
	return ""
}

// The reasons an API version is stale (StaleVersionAudit.Reason).
const (
	StaleRemoved   = "removed"
	StaleNotServed = "not served"
)

// ApplyError is the error every server-side apply gets on an object that
// carries an entry recorded in a version the CRD no longer lists.
const ApplyError = "request to convert CR to an invalid group/version"

// Translate returns set, recorded in API version from, as the fields of API
// version to (both group/version), and the paths of set that do not
// translate. A path translates when both versions' schemas give it the same
// shape (kind, list type and keys, map type at every step) and objects read
// in either version hold the same values (conversion None), or when the two
// versions' schemas are identical. A version the CRD no longer lists has no
// schema left to compare: under conversion None, a path of it translates
// when to's schema has it.
//
// An atomic list owned whole in from that is a map list in to translates
// into its items as obj holds them now (obj is the object's content, read in
// any version: under conversion None they are the same), each with every
// field it has: owning an atomic list is owning every value in it, which in
// a map list is owning each item. (The API server reads such an entry as
// owning the empty list alone, so that its items lose their owner.) With obj
// nil, such a list does not translate. Neither result is ever nil.
func (v *Versions) Translate(set *fieldpath.Set, from, to string, obj map[string]any) (translated, untranslatable *fieldpath.Set) {
	translated, untranslatable = fieldpath.NewSet(), fieldpath.NewSet()
	if set == nil {
		return translated, untranslatable
	}
	if from == to {
		return set, untranslatable
	}
	fs, ts := v.schemas[v.version(from)], v.schemas[v.version(to)]
	switch {
	case ts == nil:
		return translated, set
	case fs == ts: // identical schemas (VersionsOf shares their pointer)
		return set, untranslatable
	case !v.sameValues:
		return translated, set
	}
	set.Iterate(func(p fieldpath.Path) {
		switch shapeOf(fs, ts, p) {
		case sameShape:
			translated.Insert(p)
		case atomicToMapList:
			if !ownership.OwnedWhole(set, p) {
				translated.Insert(p)
				return
			}
			items, ok := expandItems(obj, p, mapKeys(ts, p))
			if !ok {
				untranslatable.Insert(p)
				return
			}
			translated.Insert(p)
			translated = translated.Union(items)
		default:
			untranslatable.Insert(p)
		}
	})
	return translated, untranslatable
}

// translates reports whether path p, recorded in API version from, means
// the same field in to, ahead of any object: as Translate says, with an
// atomic list that is a map list in to counting as translatable (Translate
// expands it into the object's items).
func (v *Versions) translates(p fieldpath.Path, from, to string) bool {
	tr, untr := v.Translate(fieldpath.NewSet(p), from, to, map[string]any{})
	return untr.Empty() && !tr.Empty()
}

// expands reports whether the list at p is atomic in from and a map list
// in to, so that Translate expands a whole-list owner into its items.
func (v *Versions) expands(p fieldpath.Path, from, to string) bool {
	ts := v.schemas[v.version(to)]
	return ts != nil && v.sameValues && shapeOf(v.schemas[v.version(from)], ts, p) == atomicToMapList
}

// shapeOf compares p between the schemas from and to; from nil is a
// version whose schema is gone (shapeIn).
func shapeOf(from, to *apiextensionsv1.JSONSchemaProps, p fieldpath.Path) shape {
	switch {
	case len(p) > 0 && p[0].FieldName != nil && *p[0].FieldName == "metadata":
		// The API server types every custom resource's metadata as
		// ObjectMeta, whatever the CRD's schema says.
		return sameShape
	case from == nil:
		return shapeIn(to, p)
	}
	return shapeAlong(from, to, p)
}

// shapeIn judges p of a version whose schema is gone against s: the same
// shape when s has it, an atomic list become a map list when p ends at a
// map list (an entry owning it with nothing below owned it whole).
func shapeIn(s *apiextensionsv1.JSONSchemaProps, p fieldpath.Path) shape {
	for _, pe := range p {
		c := child(s, pe)
		if c == nil {
			if preservesUnknown(s) {
				return sameShape
			}
			return differentShape
		}
		s = c
	}
	if strings.HasPrefix(nodeKind(s), "array/map") {
		return atomicToMapList
	}
	return sameShape
}

// shape is how a path's schema compares between two versions.
type shape int

const (
	differentShape shape = iota
	sameShape
	// atomicToMapList: the same up to the last step, which is an atomic
	// list in the first version and a map list in the second.
	atomicToMapList
)

// shapeAlong walks p through both schemas and compares the nodes it visits.
func shapeAlong(from, to *apiextensionsv1.JSONSchemaProps, p fieldpath.Path) shape {
	f, t := from, to
	for i, pe := range p {
		fc, tc := child(f, pe), child(t, pe)
		if fc == nil && tc == nil && preservesUnknown(f) && preservesUnknown(t) {
			return sameShape
		}
		if fc == nil || tc == nil {
			return differentShape
		}
		f, t = fc, tc
		fk, tk := nodeKind(f), nodeKind(t)
		if fk == tk {
			continue
		}
		if i == len(p)-1 && fk == "array/atomic" && strings.HasPrefix(tk, "array/map") {
			return atomicToMapList
		}
		return differentShape
	}
	return sameShape
}

// child is the schema of pe below s: a property for a field name, the item
// schema for a list element; nil when the schema does not have it.
func child(s *apiextensionsv1.JSONSchemaProps, pe fieldpath.PathElement) *apiextensionsv1.JSONSchemaProps {
	switch {
	case pe.FieldName != nil:
		if p, ok := s.Properties[*pe.FieldName]; ok {
			return &p
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			return s.AdditionalProperties.Schema
		}
		return nil
	case pe.Key != nil || pe.Index != nil || pe.Value != nil:
		if s.Items != nil && s.Items.Schema != nil {
			return s.Items.Schema
		}
	}
	return nil
}

// preservesUnknown reports whether s keeps fields its schema does not name.
func preservesUnknown(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// nodeKind describes what server-side apply makes of a schema node: its
// type, and for lists and maps how their members are owned.
func nodeKind(s *apiextensionsv1.JSONSchemaProps) string {
	switch s.Type {
	case "array":
		lt := "atomic"
		if s.XListType != nil {
			lt = *s.XListType
		}
		if lt == "map" {
			return "array/map/" + strings.Join(s.XListMapKeys, ",")
		}
		return "array/" + lt
	case "object":
		mt := "granular"
		if s.XMapType != nil {
			mt = *s.XMapType
		}
		return fmt.Sprintf("object/%s/%t", mt, preservesUnknown(s))
	}
	return s.Type
}

// mapKeys returns the list-map keys of the list at p in s.
func mapKeys(s *apiextensionsv1.JSONSchemaProps, p fieldpath.Path) []string {
	if s = schemaAt(s, p); s == nil {
		return nil
	}
	return s.XListMapKeys
}

// mapList reports whether the schema of apiVersion makes the list at p a
// map list, where an entry owning the list with nothing below it owns an
// empty container, not the whole list. False for v nil or a version whose
// schema is gone: nothing says the list is not atomic there.
func (v *Versions) mapList(p fieldpath.Path, apiVersion string) bool {
	if v == nil {
		return false
	}
	s := v.schemas[v.version(apiVersion)]
	if s != nil {
		s = schemaAt(s, p)
	}
	return s != nil && strings.HasPrefix(nodeKind(s), "array/map")
}

// schemaAt is the schema of the node at p below s; nil when s does not
// have it.
func schemaAt(s *apiextensionsv1.JSONSchemaProps, p fieldpath.Path) *apiextensionsv1.JSONSchemaProps {
	for _, pe := range p {
		if s = child(s, pe); s == nil {
			return nil
		}
	}
	return s
}

// expandItems lists the items of the list at p in obj, keyed by keys, with
// every field each holds. false when the list or a key cannot be read.
func expandItems(obj map[string]any, p fieldpath.Path, keys []string) (*fieldpath.Set, bool) {
	if len(keys) == 0 || obj == nil {
		return nil, false
	}
	out := fieldpath.NewSet()
	var cur any = obj
	for _, pe := range p {
		if cur == nil {
			return out, true // no list: no items to own
		}
		m, ok := cur.(map[string]any)
		if pe.FieldName == nil || !ok {
			return nil, false
		}
		cur = m[*pe.FieldName]
	}
	if cur == nil {
		return out, true
	}
	list, ok := cur.([]any)
	if !ok {
		return nil, false
	}
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		var kv []any
		for _, k := range keys {
			val, ok := m[k]
			if !ok {
				return nil, false
			}
			kv = append(kv, k, val)
		}
		itemPath := append(p.Copy(), fieldpath.PathElement{Key: fieldpath.KeyByFields(kv...)})
		out.Insert(itemPath)
		addFields(out, itemPath, m)
	}
	return out, true
}

// addFields inserts a path for every field of m below at, descending into
// nested objects; lists and scalars are owned whole.
func addFields(s *fieldpath.Set, at fieldpath.Path, m map[string]any) {
	for k, val := range m {
		p := append(at.Copy(), fieldpath.PathElement{FieldName: &k})
		s.Insert(p)
		if child, ok := val.(map[string]any); ok {
			addFields(s, p, child)
		}
	}
}
