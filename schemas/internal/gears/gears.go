// Package gears holds the test CRD that the tests of schemas and
// schemas/crdschema share: the Gear kind, whose status.conditions is a map
// list keyed by type, its objects, and a merge through a type converter
// that shows how a schema treats the condition list.
//
// Only tests import it, so the library links none of it.
package gears

import (
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/yaml"
)

// GVK is the kind of the test CRD.
var GVK = schema.GroupVersionKind{Group: "test.statusapply.io", Version: "v1", Kind: "Gear"}

// YAML is a CRD whose status.conditions is a map list keyed by type;
// extra status properties are added to its schema (name: type).
func YAML(extra ...string) string {
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

// CRD is the CRD of YAML(extra...), decoded; it fails t if it does not
// decode.
func CRD(t testing.TB, extra ...string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(YAML(extra...)), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// WithGroup returns a copy of crd moved to group, so that tests can have
// several group versions.
func WithGroup(crd *apiextensionsv1.CustomResourceDefinition, group string) *apiextensionsv1.CustomResourceDefinition {
	out := crd.DeepCopy()
	out.Spec.Group = group
	out.Name = out.Spec.Names.Plural + "." + group
	return out
}

// Object returns a Gear of gvk named ns/g1, with the given conditions
// (type=status) and status fields.
func Object(gvk schema.GroupVersionKind, conditions []string, status map[string]any) *unstructured.Unstructured {
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

// MergedConditions merges b into a with tc and returns the condition types
// of the result: a map list keeps both sides' conditions, an atomic one only
// b's.
func MergedConditions(t testing.TB, tc managedfields.TypeConverter, a, b *unstructured.Unstructured) []string {
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
