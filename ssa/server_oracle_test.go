package ssa

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/config/crd"
)

// crdValidator runs, on a Widget's content, the checks the API server runs on
// a write to a custom resource: it prunes fields the schema does not know,
// then validates against the CRD's OpenAPI schema (types, formats, patterns,
// lengths, enums, required fields) and its list types (no two items of a map
// list with one key). It is the oracle the fuzz targets compare the
// library's condition checks with: what the library accepts, the API server
// must accept too.
type crdValidator struct {
	structural *structuralschema.Structural
	validator  apiextensionsvalidation.SchemaValidator
}

func newCRDValidator(t testing.TB) *crdValidator {
	t.Helper()
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Group != v1alpha1.SchemeGroupVersion.Group || c.Spec.Names.Kind != "Widget" {
			continue
		}
		for _, v := range c.Spec.Versions {
			if v.Name != v1alpha1.SchemeGroupVersion.Version {
				continue
			}
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				t.Fatal(err)
			}
			structural, err := structuralschema.NewStructural(internal)
			if err != nil {
				t.Fatal(err)
			}
			validator, _, err := apiextensionsvalidation.NewSchemaValidator(internal)
			if err != nil {
				t.Fatal(err)
			}
			return &crdValidator{structural: structural, validator: validator}
		}
	}
	t.Fatal("no Widget CRD for " + v1alpha1.SchemeGroupVersion.String())
	return nil
}

// validate returns what the API server would refuse in content (a copy is
// pruned, content is left alone).
func (v *crdValidator) validate(content map[string]any) field.ErrorList {
	obj := runtime.DeepCopyJSON(content)
	pruning.Prune(obj, v.structural, true)
	errs := apiextensionsvalidation.ValidateCustomResource(nil, obj, v.validator)
	return append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
}

// validateConditions validates items as a Widget's status.conditions.
func (v *crdValidator) validateConditions(items any) field.ErrorList {
	return v.validate(map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"},
		"status":   map[string]any{"conditions": items},
	})
}
