package crdschema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoac "k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/schemas"
	"github.com/statusapply/statusapply/schemas/internal/gears"
	"github.com/statusapply/statusapply/ssa"
)

var (
	_ managedfields.TypeConverter = (*CRDs)(nil)
)

func TestFromCRDYAMLServesTheSchema(t *testing.T) {
	manifest := "apiVersion: v1\nkind: Namespace\nmetadata: {name: skipped}\n---\n" + gears.YAML()
	c, err := FromCRDYAML([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); len(got) != 1 || got[0] != "gears.test.statusapply.io" {
		t.Fatalf("Names() = %v", got)
	}
	if got := c.Kinds(); len(got) != 1 || got[0] != gears.GVK {
		t.Fatalf("Kinds() = %v", got)
	}
	got := gears.MergedConditions(t, c, gears.Object(gears.GVK, []string{"A=True"}, nil), gears.Object(gears.GVK, []string{"B=False"}, nil))
	if strings.Join(got, ",") != "A,B" {
		t.Fatalf("merged conditions %v, want A and B: status.conditions must be a map list", got)
	}

	// Metadata has the ObjectMeta schema: labels merge per key.
	a, b := gears.Object(gears.GVK, nil, nil), gears.Object(gears.GVK, nil, nil)
	a.SetLabels(map[string]string{"x": "1"})
	b.SetLabels(map[string]string{"y": "2"})
	ta, _ := c.ObjectToTyped(a)
	tb, _ := c.ObjectToTyped(b)
	merged, err := ta.Merge(tb)
	if err != nil {
		t.Fatal(err)
	}
	obj, _ := c.TypedToObject(merged)
	if labels := obj.(*unstructured.Unstructured).GetLabels(); len(labels) != 2 {
		t.Fatalf("merged labels %v, want both", labels)
	}

	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, nil, map[string]any{"color": "red"})); err == nil {
		t.Fatal("a field the schema does not declare converted")
	}
}

func TestCRDsMiss(t *testing.T) {
	c, err := FromCRDs(gears.CRD(t))
	if err != nil {
		t.Fatal(err)
	}
	sprocket := schema.GroupVersionKind{Group: "test.statusapply.io", Version: "v1", Kind: "Sprocket"}
	_, err = c.ObjectToTyped(gears.Object(sprocket, nil, nil))
	var miss *schemas.MissError
	if !errors.As(err, &miss) || !errors.Is(err, ssa.ErrNoSchema) || miss.GVK != sprocket {
		t.Fatalf("error %v (%T), want a *schemas.MissError for %s wrapping ssa.ErrNoSchema", err, err, sprocket)
	}
	for _, want := range []string{"no schema for kind Sprocket (test.statusapply.io/v1)", "gears.test.statusapply.io", "schemas.FromCluster"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// Combined with the built-in kinds, as an Applier combines them: the
	// error still names the kind and the options.
	s := runtime.NewScheme()
	tc := ssa.TypeConverters(c, clientgoac.NewTypeConverter(s))
	_, err = tc.ObjectToTyped(gears.Object(sprocket, nil, nil))
	if !errors.Is(err, ssa.ErrNoSchema) || !errors.As(err, &miss) {
		t.Fatalf("combined error %v does not wrap ssa.ErrNoSchema and the *MissError", err)
	}
	for _, want := range []string{"no schema for kind Sprocket (test.statusapply.io/v1)", "WithTypeConverter", "schemas.FromCluster", "crdschema.FromCRDFiles"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("combined error %q does not mention %q", err, want)
		}
	}
	// A kind the converter has, with a field its schema lacks, is not a miss.
	_, err = tc.ObjectToTyped(gears.Object(gears.GVK, nil, map[string]any{"color": "red"}))
	if err == nil || errors.Is(err, ssa.ErrNoSchema) || !strings.Contains(err.Error(), "color") {
		t.Fatalf("error %v, want the schema's complaint about .status.color", err)
	}
}

func TestCRDsSetFollowsAChangedCRD(t *testing.T) {
	c, err := FromCRDs(gears.CRD(t))
	if err != nil {
		t.Fatal(err)
	}
	colored := gears.Object(gears.GVK, []string{"A=True"}, map[string]any{"color": "red"})
	if _, err := c.ObjectToTyped(colored); err == nil {
		t.Fatal("status.color converted before the CRD declared it")
	}
	before := c.SchemaVersion()
	combined, ok := ssa.TypeConverters(c, clientgoac.NewTypeConverter(runtime.NewScheme())).(interface{ SchemaVersion() uint64 })
	if !ok {
		t.Fatal("ssa.TypeConverters has no SchemaVersion")
	}
	combinedBefore := combined.SchemaVersion()
	if err := c.Set(gears.CRD(t, "color:string")); err != nil {
		t.Fatal(err)
	}
	if c.SchemaVersion() == before || combined.SchemaVersion() == combinedBefore {
		t.Error("SchemaVersion did not change")
	}
	if _, err := c.ObjectToTyped(colored, typed.AllowDuplicates); err != nil {
		t.Fatalf("after Set: %v", err)
	}
	// A second group, then removing the first.
	if err := c.Set(gears.WithGroup(gears.CRD(t), "other.statusapply.io")); err != nil {
		t.Fatal(err)
	}
	c.Remove("gears.test.statusapply.io")
	if _, err := c.ObjectToTyped(colored); !errors.Is(err, ssa.ErrNoSchema) {
		t.Fatalf("after Remove: %v, want a miss", err)
	}
	other := gears.GVK
	other.Group = "other.statusapply.io"
	if _, err := c.ObjectToTyped(gears.Object(other, nil, nil)); err != nil {
		t.Fatal(err)
	}
}

func TestFromCRDFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("gears.yaml", gears.YAML())
	write("kustomization.yaml", "resources: [gears.yaml]\n")
	write("README.md", "not a manifest")
	c, err := FromCRDFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ObjectToTyped(gears.Object(gears.GVK, []string{"A=True"}, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := FromCRDFiles(filepath.Join(dir, "kustomization.yaml")); err == nil || !strings.Contains(err.Error(), "no CustomResourceDefinition") {
		t.Fatalf("a file without CRDs: %v", err)
	}
	if _, err := FromCRDFiles(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatal("a missing file gave no error")
	}
}

func TestFromCRDYAMLRefusesWhatItCannotServe(t *testing.T) {
	for name, manifest := range map[string]string{
		"v1beta1":  strings.Replace(gears.YAML(), "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1),
		"no CRD":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"bad YAML": "apiVersion: [",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := FromCRDYAML([]byte(manifest)); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
