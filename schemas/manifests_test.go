package schemas

import (
	"slices"
	"strings"
	"testing"
)

func TestDecodeCRDsUnpacksLists(t *testing.T) {
	crd := func(name string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n"
	}
	indent := func(s string) string {
		return "- " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
	}
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{
		{"documents", crd("a.x.io") + "---\n" + crd("b.x.io"), []string{"a.x.io", "b.x.io"}},
		{"kubectl get -o yaml: a List", "apiVersion: v1\nkind: List\nitems:\n" + indent(crd("a.x.io")) + indent(crd("b.x.io")),
			[]string{"a.x.io", "b.x.io"}},
		{"a List skips other kinds", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n" +
			indent(crd("a.x.io")), []string{"a.x.io"}},
		{"a typed list whose items carry no kind", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinitionList\n" +
			"items:\n- metadata:\n    name: a.x.io\n", []string{"a.x.io"}},
		{"JSON", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.x.io"}}]}`,
			[]string{"a.x.io"}},
		{"a list of something else", "apiVersion: v1\nkind: ConfigMapList\nitems:\n- metadata:\n    name: c\n", nil},
		{"an empty List", "apiVersion: v1\nkind: List\nitems: []\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crds, err := DecodeCRDs("m.yaml", []byte(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range crds {
				if c.Kind != "CustomResourceDefinition" {
					t.Errorf("%s: kind %q", c.Name, c.Kind)
				}
				got = append(got, c.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDecodeCRDsNamesTheListItemThatDoesNotDecode(t *testing.T) {
	_, err := DecodeCRDs("m.yaml", []byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: apiextensions.k8s.io/v1\n"+
		"  kind: CustomResourceDefinition\n  spec: 5\n"))
	if err == nil || !strings.Contains(err.Error(), "m.yaml: decoding document 1: List item 0:") {
		t.Fatalf("got %v", err)
	}
}
