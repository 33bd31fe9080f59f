package kindschema

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoac "k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
)

// widgetConverter serves the Widget's group from its generated schema and
// every other kind from client-go's.
func widgetConverter(t testing.TB) managedfields.TypeConverter {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return byGroup{own: applyconfiguration.NewTypeConverter(s), other: clientgoac.NewTypeConverter(s)}
}

type byGroup struct{ own, other managedfields.TypeConverter }

func (c byGroup) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	if obj.GetObjectKind().GroupVersionKind().Group == v1alpha1.SchemeGroupVersion.Group {
		return c.own.ObjectToTyped(obj, opts...)
	}
	return c.other.ObjectToTyped(obj, opts...)
}

func (c byGroup) TypedToObject(tv *typed.TypedValue) (runtime.Object, error) {
	return c.own.TypedToObject(tv)
}

// sameConditions compares what Conditions says, not where the items' type is.
func sameConditions(a, b Conditions) bool {
	return a.Atomic == b.Atomic && a.KeyedByType == b.KeyedByType && a.Metav1 == b.Metav1
}

func TestConditionsOf(t *testing.T) {
	tc := widgetConverter(t)
	group := v1alpha1.SchemeGroupVersion
	for _, c := range []struct {
		name string
		gvk  schema.GroupVersionKind
		want Conditions
	}{
		{"Widget: a map list of metav1.Condition", group.WithKind("Widget"), Conditions{KeyedByType: true, Metav1: true}},
		{"Gadget: an atomic list of metav1.Condition", group.WithKind("Gadget"), Conditions{Atomic: true, Metav1: true}},
		{"Pod: a map list by type of its own shape", corev1.SchemeGroupVersion.WithKind("Pod"), Conditions{KeyedByType: true}},
		{"Deployment: a map list by type of its own shape", appsv1.SchemeGroupVersion.WithKind("Deployment"), Conditions{KeyedByType: true}},
		{"ConfigMap: no status", corev1.SchemeGroupVersion.WithKind("ConfigMap"), Conditions{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := Of(tc, c.gvk)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Conditions; !sameConditions(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
	t.Run("no schema (deduced)", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}}}
		u.SetGroupVersionKind(group.WithKind("Widget"))
		tv, err := typed.DeducedParseableType.FromUnstructured(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		if got := conditionsOf(tv.Schema(), tv.TypeRef()); got != (Conditions{}) {
			t.Fatalf("got %+v, want nothing known", got)
		}
	})
}

func TestHas(t *testing.T) {
	tc := widgetConverter(t)
	for gvk, want := range map[schema.GroupVersionKind]bool{
		v1alpha1.SchemeGroupVersion.WithKind("Widget"):                            true,
		corev1.SchemeGroupVersion.WithKind("Pod"):                                 true,
		v1alpha1.SchemeGroupVersion.WithKind("Sprocket"):                          false,
		{Group: "nope.example.com", Version: "v1", Kind: "Thing"}:                 false,
		{Group: v1alpha1.SchemeGroupVersion.Group, Version: "v9", Kind: "Widget"}: false,
	} {
		if got := Has(tc, gvk); got != want {
			t.Errorf("Has(%s) = %v, want %v", gvk, got, want)
		}
	}
}
