package ssa

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTargetValidate(t *testing.T) {
	good := Target{
		GVK:       schema.GroupVersionKind{Group: "demo.statusapply.io", Version: "v1alpha1", Kind: "Widget"},
		Namespace: "ns", Name: "w1", Subresource: StatusSubresource, Manager: "readiness",
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Target)
		want   string // "" for valid
	}{
		{"valid", func(*Target) {}, ""},
		{"cluster-scoped main resource", func(t *Target) { t.Namespace, t.Subresource = "", MainResource }, ""},
		{"manager of 128 characters", func(t *Target) { t.Manager = strings.Repeat("m", 128) }, ""},
		{"no kind", func(t *Target) { t.GVK.Kind = "" }, "no kind"},
		{"no name", func(t *Target) { t.Name = "" }, "no name"},
		{"other subresource", func(t *Target) { t.Subresource = "scale" }, "unsupported subresource"},
		{"empty manager", func(t *Target) { t.Manager = "" }, "empty field manager"},
		{"manager of 129 characters", func(t *Target) { t.Manager = strings.Repeat("m", 129) }, "more than 128"},
		{"manager with a tab", func(t *Target) { t.Manager = "bad\tmanager" }, "invalid character U+0009"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := good
			tc.mutate(&target)
			err := target.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidInput mentioning %q", err, tc.want)
			}
		})
	}
}

func TestTargetString(t *testing.T) {
	target := Target{GVK: schema.GroupVersionKind{Group: "demo.statusapply.io", Version: "v1alpha1", Kind: "Widget"},
		Namespace: "ns", Name: "w1", Subresource: StatusSubresource, Manager: "readiness"}
	if got, want := target.String(), `status of Widget ns/w1 as "readiness"`; got != want {
		t.Fatalf("String() = %s, want %s", got, want)
	}
}

func TestValidateFieldManager(t *testing.T) {
	for _, tc := range []struct {
		name    string
		manager string
		want    string // "" for valid
	}{
		{"plain", "readiness", ""},
		{"128 characters", strings.Repeat("m", 128), ""},
		{"unicode printable", "contrôleur/état-✓", ""},
		{"empty", "", "empty field manager"},
		{"129 characters", strings.Repeat("m", 129), "may not be more than 128 bytes"},
		{"tab", "bad\tmanager", "invalid character U+0009"},
		{"newline", "bad\nmanager", "invalid character U+000A"},
		{"NUL", "bad\x00manager", "invalid character U+0000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateFieldManager(tc.manager)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalidInput mentioning %q", err, tc.want)
			}
		})
	}
}

// TestValidateFieldManagerPlainNamesCostNothing: every Apply checks its
// manager, so a name of printable ASCII up to the length limit (the edges
// included) is accepted without building the API server's error list, which
// allocates. Other valid names take the full check.
func TestValidateFieldManagerPlainNamesCostNothing(t *testing.T) {
	for _, name := range []string{"readiness", " spaced ~tilde ", strings.Repeat("m", 128)} {
		if n := testing.AllocsPerRun(10, func() { _ = ValidateFieldManager(name) }); n != 0 {
			t.Errorf("ValidateFieldManager(%q) allocated %v times, want none", name, n)
		}
	}
	if n := testing.AllocsPerRun(10, func() { _ = ValidateFieldManager("contrôleur") }); n == 0 {
		t.Error("a name beyond ASCII took the fast path; the API server's check must decide it")
	}
}
