// Package kindset holds the schemas of a set of kinds built from OpenAPI
// definitions, the core that both of package schemas' sources (the cluster's
// OpenAPI documents and, in schemas/crdschema, CRD manifests) serve from.
package kindset

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// GVKExtension is the OpenAPI extension that names the kinds a definition
// is the schema of; managedfields indexes its converters by it too.
const GVKExtension = "x-kubernetes-group-version-kind"

// Set is the schema of a set of kinds, built from OpenAPI definitions. It
// never changes once built.
type Set struct {
	// TC types objects of the kinds.
	TC managedfields.TypeConverter
	// GVKs are the kinds the definitions declare.
	GVKs map[schema.GroupVersionKind]struct{}
}

// New builds the schemas of every kind the definitions declare.
func New(definitions map[string]*spec.Schema, preserveUnknownFields bool) (*Set, error) {
	tc, err := managedfields.NewTypeConverter(definitions, preserveUnknownFields)
	if err != nil {
		return nil, err
	}
	k := &Set{TC: tc, GVKs: map[schema.GroupVersionKind]struct{}{}}
	for _, def := range definitions {
		if def == nil {
			continue
		}
		for _, gvk := range DeclaredKinds(def.Extensions) {
			k.GVKs[gvk] = struct{}{}
		}
	}
	return k, nil
}

// Has reports whether k has the schema of gvk.
func (k *Set) Has(gvk schema.GroupVersionKind) bool {
	if k == nil {
		return false
	}
	_, ok := k.GVKs[gvk]
	return ok
}

// DeclaredKinds reads the kinds of a definition's GVKExtension, a list of
// {group, version, kind} objects.
func DeclaredKinds(ext spec.Extensions) []schema.GroupVersionKind {
	list, ok := ext[GVKExtension].([]any)
	if !ok {
		return nil
	}
	out := make([]schema.GroupVersionKind, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if v != "" && k != "" {
			out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

// ToObject turns a typed value back into an object, whatever its kind: the
// value holds its own apiVersion and kind.
func ToObject(tv *typed.TypedValue) (runtime.Object, error) {
	if tv == nil {
		return nil, errors.New("nil typed value")
	}
	switch content := tv.AsValue().Unstructured().(type) {
	case map[string]any:
		return &unstructured.Unstructured{Object: content}, nil
	default:
		return nil, fmt.Errorf("a typed value of %T is not an object", content)
	}
}
