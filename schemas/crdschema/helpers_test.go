package crdschema

import (
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
