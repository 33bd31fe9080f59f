package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/statusapply/statusapply/config/crd"
)

// crdWithStatus builds a one-version CRD whose status schema is given in YAML.
func crdWithStatus(t *testing.T, statusYAML string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	status := apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal([]byte(statusYAML), &status); err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"status": status},
				}},
			}},
		},
	}
}

func TestLintCRDs(t *testing.T) {
	type want struct {
		path string
		sev  Severity
	}
	tests := []struct {
		name   string
		status string
		want   []want
	}{
		{
			name: "map-list conditions are clean",
			status: `{type: object, properties: {conditions: {type: array, x-kubernetes-list-type: map,
				x-kubernetes-list-map-keys: [type], items: {type: object, properties: {type: {type: string}}}}}}`,
		},
		{
			name:   "conditions without list type",
			status: `{type: object, properties: {conditions: {type: array, items: {type: object}}}}`,
			want:   []want{{"status.conditions", SeverityError}},
		},
		{
			name:   "atomic conditions",
			status: `{type: object, properties: {conditions: {type: array, x-kubernetes-list-type: atomic, items: {type: object}}}}`,
			want:   []want{{"status.conditions", SeverityError}},
		},
		{
			name: "conditions keyed by something else",
			status: `{type: object, properties: {conditions: {type: array, x-kubernetes-list-type: map,
				x-kubernetes-list-map-keys: [type, reason], items: {type: object}}}}`,
			want: []want{{"status.conditions", SeverityError}},
		},
		{
			name:   "conditions as a set",
			status: `{type: object, properties: {conditions: {type: array, x-kubernetes-list-type: set, items: {type: string}}}}`,
			want:   []want{{"status.conditions", SeverityError}},
		},
		{
			name: "atomic lists and maps elsewhere are warnings, their insides are not walked",
			status: `{type: object, properties: {
				hosts: {type: array, items: {type: string}},
				ports: {type: array, x-kubernetes-list-type: set, items: {type: integer}},
				plan: {type: object, properties: {steps: {type: array, x-kubernetes-list-type: atomic, items: {type: string}}}},
				selector: {type: object, x-kubernetes-map-type: atomic, properties: {inner: {type: array, items: {type: string}}}},
				labels: {type: object, x-kubernetes-map-type: granular, additionalProperties: {type: array, items: {type: string}}},
				nodes: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [name],
					items: {type: object, properties: {addresses: {type: array, items: {type: string}}}}}}}`,
			want: []want{
				{"status.hosts", SeverityWarning},
				{"status.labels.*", SeverityWarning},
				{"status.nodes[].addresses", SeverityWarning},
				{"status.plan.steps", SeverityWarning},
				{"status.selector", SeverityWarning},
			},
		},
		{
			name:   "no status, nothing to say",
			status: `{type: object}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := crdWithStatus(t, tt.status)
			c.Name = "things.example.com"
			findings := LintCRDs(c)
			if len(findings) != len(tt.want) {
				t.Fatalf("got %d findings, want %d:\n%s", len(findings), len(tt.want), findingsText(findings))
			}
			for i, f := range findings {
				if f.Path != tt.want[i].path || f.Severity != tt.want[i].sev {
					t.Errorf("finding %d = %s, want %s %s", i, f, tt.want[i].path, tt.want[i].sev)
				}
				if f.CRD != "things.example.com" || f.Version != "v1" || f.File != "" || f.Message == "" {
					t.Errorf("finding %d lacks its identity: %#v", i, f)
				}
			}
			if got := HasErrors(findings); got != (len(tt.want) > 0 && tt.want[0].sev == SeverityError) {
				t.Errorf("HasErrors = %v", got)
			}
		})
	}
}

func TestLintSkipsUnservedVersions(t *testing.T) {
	c := crdWithStatus(t, `{type: object, properties: {conditions: {type: array}}}`)
	c.Spec.Versions[0].Served = false
	if f := LintCRDs(c); len(f) != 0 {
		t.Errorf("unserved version linted: %s", findingsText(f))
	}
}

func TestLintEmbeddedCRDs(t *testing.T) {
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	findings := LintCRDs(crds...)
	got := findingsText(findings)
	for _, want := range []string{
		"gadgets.demo.statusapply.io v1alpha1 status.conditions: error",
		"widgets.demo.statusapply.io v1alpha1 status.plan.steps: warning",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if len(findings) != 2 {
		t.Errorf("want exactly two findings, got:\n%s", got)
	}
	if !strings.Contains(findings[0].Message, "+listType=map") || !strings.Contains(findings[0].Message, "+listMapKey=type") {
		t.Errorf("the error must name the fix: %s", findings[0].Message)
	}
}

func TestLintFiles(t *testing.T) {
	files, err := crd.Files()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// One multi-document file with both CRDs, a non-CRD document and an
	// empty document in between.
	var all []byte
	for _, name := range []string{"demo.statusapply.io_gadgets.yaml", "demo.statusapply.io_widgets.yaml"} {
		all = append(all, files[name]...)
		all = append(all, []byte("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n")...)
	}
	multi := filepath.Join(dir, "all.yaml")
	if err := os.WriteFile(multi, all, 0o600); err != nil {
		t.Fatal(err)
	}
	findings, err := LintFiles(multi)
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 2 || !HasErrors(findings) {
		t.Fatalf("findings:\n%s", findingsText(findings))
	}
	for _, f := range findings {
		if f.File != multi {
			t.Errorf("finding without file: %s", f)
		}
	}

	if _, err := LintFiles(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("kind: [unclosed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LintFiles(broken); err == nil || !strings.Contains(err.Error(), broken) {
		t.Errorf("broken file: err = %v, want one naming the file", err)
	}
}

// findingsText renders findings one per line.
func findingsText(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String())
		b.WriteString("\n")
	}
	return b.String()
}

// twoVersions is a CRD shaped like Cluster API's Machine: a deprecated
// v1beta1, still served, whose conditions are atomic, and the storage
// version v1beta2, whose conditions are a map list keyed by type.
func twoVersions(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	old := crdWithStatus(t, `{type: object, properties: {conditions: {type: array, items: {type: object}},
		addresses: {type: array, items: {type: object}}}}`)
	cur := crdWithStatus(t, `{type: object, properties: {conditions: {type: array, x-kubernetes-list-type: map,
		x-kubernetes-list-map-keys: [type], items: {type: object, properties: {type: {type: string}}}}}}`)
	c := old
	c.Name = "machines.example.com"
	c.Spec.Versions[0].Name, c.Spec.Versions[0].Storage = "v1beta1", false
	v2 := cur.Spec.Versions[0]
	v2.Name = "v1beta2"
	c.Spec.Versions = append(c.Spec.Versions, v2)
	return c
}

func TestLintServedNonStorageVersion(t *testing.T) {
	c := twoVersions(t)
	findings := LintCRDs(c)
	if len(findings) != 2 || HasErrors(findings) {
		t.Fatalf("want two warnings on v1beta1, got:\n%s", findingsText(findings))
	}
	for _, f := range findings {
		if f.Version != "v1beta1" || f.Severity != SeverityWarning {
			t.Errorf("finding %s: want a v1beta1 warning", f)
		}
		for _, want := range []string{"is served but is not the storage version (v1beta2)", "--version v1beta2", NotOwnedAdvice} {
			if !strings.Contains(f.Message, want) {
				t.Errorf("finding %s: message lacks %q", f, want)
			}
		}
	}
	if !strings.Contains(findings[1].Message, "+listType=map and +listMapKey=type") || findings[1].Path != "status.conditions" {
		t.Errorf("the conditions finding keeps the fix for the CRD's owner: %s", findings[1])
	}

	// --version narrows: the storage version alone is clean, v1beta1 alone
	// keeps its warnings.
	if f := LintCRDsWith(LintOptions{Versions: []string{"v1beta2"}}, c); len(f) != 0 {
		t.Errorf("v1beta2 only: %s", findingsText(f))
	}
	if f := LintCRDsWith(LintOptions{Versions: []string{"v1beta1"}}, c); len(f) != 2 || HasErrors(f) {
		t.Errorf("v1beta1 only: %s", findingsText(f))
	}
	if got := ServedVersions(c, c); !slices.Equal(got, []string{"v1beta1", "v1beta2"}) {
		t.Errorf("ServedVersions = %v", got)
	}

	// The controls: the same schema is an error when v1beta1 is the storage
	// version, and when the storage version is not served (writers have no
	// other version to write through).
	stored := twoVersions(t)
	stored.Spec.Versions[0].Storage, stored.Spec.Versions[1].Storage = true, false
	if f := LintCRDs(stored); !HasErrors(f) || strings.Contains(findingsText(f), "storage version") {
		t.Errorf("atomic conditions in the storage version must stay an error:\n%s", findingsText(f))
	}
	unserved := twoVersions(t)
	unserved.Spec.Versions[1].Served = false
	if f := LintCRDs(unserved); !HasErrors(f) {
		t.Errorf("with the storage version unserved, v1beta1's atomic conditions must stay an error:\n%s", findingsText(f))
	}
}
