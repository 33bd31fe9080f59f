package ssa_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/yaml"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/schemas/crdschema"
	"github.com/statusapply/statusapply/ssa"
)

// widgetCRD reads the Widget's CRD, without the status fields named in lacking.
func widgetCRD(t testing.TB, lacking ...string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	raw, err := os.ReadFile("../config/crd/demo.statusapply.io_widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	for i := range crd.Spec.Versions {
		status := crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["status"]
		for _, f := range lacking {
			delete(status.Properties, f)
		}
		crd.Spec.Versions[i].Schema.OpenAPIV3Schema.Properties["status"] = status
	}
	return crd
}

// schemaApplier returns an Applier whose only schema of the Widget is crd's.
func schemaApplier(t testing.TB, crd *apiextensionsv1.CustomResourceDefinition) (*ssa.Applier, managedfields.TypeConverter) {
	t.Helper()
	tc, err := crdschema.FromCRDs(crd)
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	a, err := ssa.NewApplier(fake.NewClientBuilder().WithScheme(s).Build(), ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a, a.TypeConverter()
}

// newGeneratedApplier returns an Applier with the Widget's generated schema.
func newGeneratedApplier(t testing.TB) *ssa.Applier {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	a, err := ssa.NewApplier(fake.NewClientBuilder().WithScheme(s).Build(),
		ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(s)), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var widgetTarget = ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w1",
	Subresource: ssa.StatusSubresource, Manager: "m"}

// typesAsContent is the general path: the intent's JSON typed with tc.
func typesAsContent(tc managedfields.TypeConverter, ac any) error {
	body, err := json.Marshal(ac)
	if err != nil {
		return err
	}
	var content map[string]any
	if err := json.Unmarshal(body, &content); err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(widgetTarget.GVK)
	_, err = tc.ObjectToTyped(u, typed.AllowDuplicates)
	return err
}

func TestMustTypeIntent(t *testing.T) {
	full, _ := schemaApplier(t, widgetCRD(t))
	generated := newGeneratedApplier(t)
	lacking, _ := schemaApplier(t, widgetCRD(t, "endpoint"))
	cond := func() *metav1ac.ConditionApplyConfiguration {
		return metav1ac.Condition().WithType("Ready").WithStatus(metav1.ConditionTrue).WithReason("R").
			WithMessage("m").WithLastTransitionTime(metav1.Unix(5, 0))
	}
	for _, tc := range []struct {
		name string
		a    *ssa.Applier
		ac   *acv1alpha1.WidgetApplyConfiguration
		must bool
	}{
		{"conditions and fields the schema has", full, acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().
			WithConditions(cond()).WithEndpoint("e").WithAttributes(map[string]string{"k": "v"})), false},
		{"conditions, generated schema", generated, acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().
			WithConditions(cond()).WithEndpoint("e")), false},
		{"nothing", full, acv1alpha1.Widget("w1", "ns"), false},
		{"a condition without a type (a key)", full, acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().
			WithConditions(cond(), metav1ac.Condition().WithStatus(metav1.ConditionTrue))), true},
		{"a condition with a zero time", full, acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().
			WithConditions(cond().WithLastTransitionTime(metav1.Time{}))), false},
		{"a type whose values may name a field the schema lacks", lacking, acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().
			WithConditions(cond())), true},
		{"the field the schema lacks", lacking, acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().
			WithEndpoint("e")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.MustTypeIntent(widgetTarget, tc.ac); got != tc.must {
				t.Fatalf("MustTypeIntent = %v, want %v", got, tc.must)
			}
			errAC := tc.a.CheckIntentSchemaAC(widgetTarget, tc.ac)
			errContent := typesAsContent(tc.a.TypeConverter(), tc.ac)
			if (errAC == nil) != (errContent == nil) {
				t.Fatalf("typed as it is: %v; typed as content: %v", errAC, errContent)
			}
			if errAC != nil && !errors.Is(errAC, ssa.ErrInvalidInput) {
				t.Fatalf("%v does not wrap ErrInvalidInput", errAC)
			}
		})
	}
	// The refusal the shortcut must keep.
	err := lacking.CheckIntentSchemaAC(widgetTarget, acv1alpha1.Widget("w1", "ns").WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("e")))
	if !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("an intent naming status.endpoint, which the schema lacks: %v", err)
	}
}

// wired is an apply configuration type with JSON of its own, which the probe
// cannot stand for: each intent of it is typed.
type wired struct {
	w *acv1alpha1.WidgetApplyConfiguration
}

func (w wired) MarshalJSON() ([]byte, error) { return json.Marshal(w.w) }

// FuzzIntentSchemaProbe holds the shortcut (mustTypeIntent's cached verdict
// of the type) to the general path (typing the intent's content): an intent it
// lets through untyped types (also one of a type with JSON of its own), with a schema that has every field of the type and
// with one that lacks some; and typing an intent as it is agrees with typing its
// content.
func FuzzIntentSchemaProbe(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"status":{"conditions":[{"type":"A","status":"True","lastTransitionTime":"2026-01-02T03:04:05Z"}]}}`,
		`{"status":{"conditions":[{"status":"True"}]}}`,
		`{"status":{"conditions":[{"type":"A","lastTransitionTime":null}],"endpoint":"e"}}`,
		`{"status":{"attributes":{"a":"b","":""},"plan":{"id":"p1"},"phase":"On"}}`,
		`{"spec":{"size":3},"metadata":{"labels":{"a":"b"},"ownerReferences":[{"uid":"u"},{}],"finalizers":["x"]}}`,
		`{"metadata":{"ownerReferences":[{"name":"n"}]}}`,
	} {
		f.Add(seed)
	}
	full, fullTC := schemaApplier(f, widgetCRD(f))
	lacking, lackingTC := schemaApplier(f, widgetCRD(f, "endpoint", "plan"))
	generated := newGeneratedApplier(f)
	f.Fuzz(func(t *testing.T, in string) {
		ac := &acv1alpha1.WidgetApplyConfiguration{}
		if json.Unmarshal([]byte(in), ac) != nil {
			return
		}
		for _, x := range []struct {
			name string
			a    *ssa.Applier
			tc   managedfields.TypeConverter
		}{{"full", full, fullTC}, {"lacking", lacking, lackingTC}, {"generated", generated, generated.TypeConverter()}} {
			errContent := typesAsContent(x.tc, ac)
			for _, intent := range []any{ac, wired{ac}} {
				if !x.a.MustTypeIntent(widgetTarget, intent) && errContent != nil {
					body, _ := json.Marshal(ac)
					t.Fatalf("%s schema: %s (%T) is let through untyped, but typing it fails: %v", x.name, body, intent, errContent)
				}
				if errAC := x.a.CheckIntentSchemaAC(widgetTarget, intent); (errAC == nil) != (errContent == nil) {
					body, _ := json.Marshal(ac)
					t.Fatalf("%s schema: %s (%T) typed as it is: %v; as content: %v", x.name, body, intent, errAC, errContent)
				}
			}
		}
	})
}
