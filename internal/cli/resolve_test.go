package cli

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// exampleMapper knows Widget (namespaced) and a cluster-scoped Gadget.
func exampleMapper() meta.RESTMapper {
	gv := schema.GroupVersion{Group: "demo.statusapply.io", Version: "v1alpha1"}
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	m.Add(gv.WithKind("Widget"), meta.RESTScopeNamespace)
	m.Add(gv.WithKind("Gadget"), meta.RESTScopeRoot)
	return m
}

func TestResolveResource(t *testing.T) {
	tests := []struct {
		arg     string
		want    string
		wantErr string
	}{
		{arg: "widgets", want: "Widget"},
		{arg: "widget", want: "Widget"},
		{arg: "widgets.demo.statusapply.io", want: "Widget"},
		{arg: "widgets.v1alpha1.demo.statusapply.io", want: "Widget"},
		{arg: "Widget", want: "Widget"},
		{arg: "gadgets", want: "Gadget"},
		{arg: "sprockets", wantErr: `the server does not have a resource type "sprockets"`},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			m, err := resolveResource(exampleMapper(), tt.arg)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.GroupVersionKind.Kind != tt.want {
				t.Fatalf("kind %s, want %s", m.GroupVersionKind.Kind, tt.want)
			}
		})
	}
}

func TestStubAndScope(t *testing.T) {
	mapper := exampleMapper()
	widgets, err := resolveResource(mapper, "widgets")
	if err != nil {
		t.Fatal(err)
	}
	gadgets, err := resolveResource(mapper, "gadgets")
	if err != nil {
		t.Fatal(err)
	}
	s := scope{Namespace: "shop"}
	if u := stub(widgets, s, "w1"); u.GetNamespace() != "shop" || u.GetName() != "w1" || u.GetKind() != "Widget" {
		t.Fatalf("namespaced stub %v", u.Object)
	}
	if u := stub(gadgets, s, "g1"); u.GetNamespace() != "" {
		t.Fatalf("cluster-scoped stub has namespace %q", u.GetNamespace())
	}

	sel, err := labels.Parse("app=web")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		s    scope
		m    *meta.RESTMapping
		want string
	}{
		{scope{Namespace: "shop"}, widgets, "no widgets.demo.statusapply.io found in namespace shop"},
		{scope{AllNamespaces: true, Selector: sel}, widgets, "no widgets.demo.statusapply.io found in any namespace matching app=web"},
		{scope{Namespace: "shop"}, gadgets, "no gadgets.demo.statusapply.io found"},
	} {
		if got := tt.s.describe(tt.m); got != tt.want {
			t.Errorf("describe = %q, want %q", got, tt.want)
		}
	}

	if err := (scope{AllNamespaces: true}).validate(target{Resource: "widgets", Names: []string{"w1"}}); err == nil ||
		!strings.Contains(err.Error(), "across all namespaces") {
		t.Fatalf("-A with a name: %v", err)
	}
}
