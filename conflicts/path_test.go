package conflicts

import (
	"errors"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/statusapply/statusapply/ownership"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want fieldpath.Path
	}{
		{"", nil},
		{".status.phase", fieldpath.MakePathOrDie("status", "phase")},
		{`.status.conditions[type="Ready"].status`, fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Ready"), "status")},
		{`.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"].hostPort`,
			fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "app"), "ports",
				fieldpath.KeyByFields("containerPort", 80, "protocol", "TCP"), "hostPort")},
		{`.metadata.finalizers[="example.com/x"]`, fieldpath.MakePathOrDie("metadata", "finalizers", fieldpath.PathElement{Value: ptrValue("example.com/x")})},
		{`.status.plan.steps[3]`, fieldpath.MakePathOrDie("status", "plan", "steps", 3)},
		{`.a[k=true,n=null,f=1.5]`, fieldpath.MakePathOrDie("a", fieldpath.KeyByFields("f", 1.5, "k", true, "n", nil))},
		{`.a[k="quote \" and ] and ,"]`, fieldpath.MakePathOrDie("a", fieldpath.KeyByFields("k", `quote " and ] and ,`))},
		{`.a[k="\u00e9\x00"]`, fieldpath.MakePathOrDie("a", fieldpath.KeyByFields("k", "\u00e9\x00"))},
		{`.a[-1]`, fieldpath.MakePathOrDie("a", -1)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePath(tt.in)
			if err != nil {
				t.Fatalf("ParsePath(%q): %v", tt.in, err)
			}
			if !got.Equals(tt.want) {
				t.Fatalf("ParsePath(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if got.String() != tt.want.String() {
				t.Fatalf("printed %q, want %q", got.String(), tt.want.String())
			}
		})
	}
}

func TestParsePathRoundTripsPrintedPaths(t *testing.T) {
	for _, p := range []fieldpath.Path{
		ownership.ConditionPath("Ready"),
		fieldpath.MakePathOrDie("status", "attributes", "zone"),
		fieldpath.MakePathOrDie("a", fieldpath.KeyByFields("x", int64(-7), "y", "tab\there")),
	} {
		got, err := ParsePath(p.String())
		if err != nil || !got.Equals(p) {
			t.Errorf("ParsePath(%q) = %v, %v; want %v", p.String(), got, err, p)
		}
	}
}

func TestParsePathMalformed(t *testing.T) {
	for _, in := range []string{
		"status", ".", "..a", ".a[", ".a[]", ".a[k]", `.a[k="x"`, `.a[k="x`, ".a[k=]", ".a[=]", ".a[=x]",
		".a[k=1,]", `.a[k=1,k=2]`, ".a[1", ".a[=1", ".a[k=bare]", `.a[k="x"y]`, ".a[=1.5.5]",
	} {
		t.Run(in, func(t *testing.T) {
			p, err := ParsePath(in)
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePath(%q) = %v, %v; want a *PathError", in, p, err)
			}
			if pe.Input != in || pe.Offset < 0 || pe.Offset > len(in) || pe.Reason == "" {
				t.Fatalf("unhelpful error %+v", pe)
			}
		})
	}
}

// A conflict's ConditionType is ownership.ConditionTypeAt of the parsed path.
func TestConditionTypeOfAParsedPath(t *testing.T) {
	tests := map[string]string{
		`.status.conditions[type="Ready"]`:                      "Ready",
		`.status.conditions[type="Ready"].status`:               "Ready",
		`.status.conditions`:                                    "",
		`.status.phase`:                                         "",
		`.spec.conditions[type="Ready"]`:                        "",
		`.status.conditions[type="Ready",other="x"].status`:     "",
		`.status.conditions[type=1]`:                            "",
		`.status.components[name="x"].conditions[type="Ready"]`: "",
	}
	for in, want := range tests {
		if got := newConflict(Conflict{}, MustParsePath(in)).ConditionType; got != want {
			t.Errorf("ConditionType of %s = %q, want %q", in, got, want)
		}
	}
}

func ptrValue(v interface{}) *value.Value {
	x := value.NewValueInterface(v)
	return &x
}
