package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// boundOutputFlags returns output flags bound to a command and parsed from
// args.
func boundOutputFlags(t *testing.T, args ...string) *outputFlags {
	t.Helper()
	out := newOutputFlags()
	cmd := &cobra.Command{Use: "x"}
	out.addFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOutputModes(t *testing.T) {
	tests := []struct {
		args    []string
		want    outputMode
		wantErr string
	}{
		{args: nil, want: modeTable},
		{args: []string{"-o", "wide"}, want: modeWide},
		{args: []string{"-o", "name"}, want: modeName},
		{args: []string{"-o", "json"}, want: modeDocument},
		{args: []string{"-o", "yaml"}, want: modeDocument},
		{args: []string{"-o", "jsonpath={.kind}"}, want: modeDocument},
		{args: []string{"-o", "go-template={{.kind}}"}, want: modeDocument},
		{args: []string{"--template", "{{.kind}}"}, want: modeDocument},
		{args: []string{"-o", "yml"}, want: modeDocument, wantErr: `unknown output format "yml": use wide, json, yaml`},
		{args: []string{"-o", "jsonpath={.kind"}, want: modeDocument, wantErr: "unclosed action"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := boundOutputFlags(t, tt.args...)
			if got := out.mode(); got != tt.want {
				t.Fatalf("mode = %d, want %d", got, tt.want)
			}
			err := out.check()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("check() = %v, want %q", err, tt.wantErr)
			}
			if err != nil && ExitCode(err) != exitUsage {
				t.Fatalf("a bad format exits %d, want %d", ExitCode(err), exitUsage)
			}
		})
	}
}

// exampleDoc is a List-shaped document as the commands print them.
type exampleDoc struct {
	typeMeta `json:",inline"`
	Count    int           `json:"count"`
	Items    []exampleItem `json:"items"`
}

type exampleItem struct {
	typeMeta `json:",inline"`
	Name     string `json:"name"`
	Note     string `json:"note,omitempty"`
}

func TestPrintDocument(t *testing.T) {
	doc := exampleDoc{typeMeta: documentType("ExampleList"), Count: 2, Items: []exampleItem{
		{typeMeta: documentType("Example"), Name: "a", Note: "+listMapKey=<field>"},
		{typeMeta: documentType("Example"), Name: "b"},
	}}
	for _, tt := range []struct {
		args   []string
		decode func([]byte, any) error
		want   string
	}{
		{args: []string{"-o", "json"}, decode: json.Unmarshal},
		{args: []string{"-o", "yaml"}, decode: func(b []byte, v any) error { return yaml.Unmarshal(b, v) }},
		{args: []string{"-o", "jsonpath={.items[*].name}"}, want: "a b"},
		{args: []string{"-o", "go-template={{.count}} {{range .items}}{{.name}}{{end}}"}, want: "2 ab"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var b bytes.Buffer
			if err := boundOutputFlags(t, tt.args...).printDocument(&b, doc); err != nil {
				t.Fatal(err)
			}
			if tt.decode == nil {
				if b.String() != tt.want {
					t.Fatalf("printed %q, want %q", b.String(), tt.want)
				}
				return
			}
			var got exampleDoc
			if err := tt.decode(b.Bytes(), &got); err != nil {
				t.Fatalf("%v:\n%s", err, b.String())
			}
			if got.APIVersion != DocumentGroupVersion || got.Kind != "ExampleList" || got.Count != 2 ||
				len(got.Items) != 2 || got.Items[0].Note != "+listMapKey=<field>" || got.Items[1].Kind != "Example" {
				t.Fatalf("decoded %+v from\n%s", got, b.String())
			}
		})
	}
}

// widget returns an unstructured Widget.
func widget(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("demo.statusapply.io/v1alpha1")
	u.SetKind("Widget")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestPrintTables(t *testing.T) {
	build := func() *tablesByKind {
		ts := newTablesByKind(column("Name", false, ""), column("Value", false, ""), column("Extra", true, ""))
		ts.of(widget("ns1", "w1")).row(widget("ns1", "w1"), "w1", "a", "x")
		ts.of(widget("ns2", "longer-name")).row(widget("ns2", "longer-name"), "longer-name", "", "y")
		return ts
	}
	tests := []struct {
		name          string
		args          []string
		allNamespaces bool
		want          string
	}{
		{name: "default", want: "NAME          VALUE\nw1            a\nlonger-name   <none>\n"},
		{name: "wide", args: []string{"-o", "wide"}, want: "NAME          VALUE    EXTRA\nw1            a        x\nlonger-name   <none>   y\n"},
		{name: "no headers", args: []string{"--no-headers"}, want: "w1            a\nlonger-name   <none>\n"},
		{name: "all namespaces", allNamespaces: true,
			want: "NAMESPACE   NAME          VALUE\nns1         w1            a\nns2         longer-name   <none>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := build().print(&b, boundOutputFlags(t, tt.args...), tt.allNamespaces); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}

	t.Run("several kinds", func(t *testing.T) {
		ts := build()
		gadget := &unstructured.Unstructured{}
		gadget.SetGroupVersionKind(schema.GroupVersionKind{Group: "demo.statusapply.io", Version: "v1alpha1", Kind: "Gadget"})
		gadget.SetName("g1")
		ts.of(gadget).row(gadget, "g1", "b", "z")
		var b bytes.Buffer
		if err := ts.print(&b, boundOutputFlags(t), false); err != nil {
			t.Fatal(err)
		}
		want := "NAME                                     VALUE\n" +
			"widget.demo.statusapply.io/w1            a\n" +
			"widget.demo.statusapply.io/longer-name   <none>\n" +
			"\n" +
			"NAME                            VALUE\n" +
			"gadget.demo.statusapply.io/g1   b\n"
		if b.String() != want {
			t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
		}
	})
}
