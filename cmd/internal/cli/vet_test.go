package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadVetJSON(t *testing.T) {
	out := `{
	"example.com/b": {
		"statuswrite": [
			{"posn": "/src/b/b.go:12:2", "end": "/src/b/b.go:12:40", "message": "second"},
			{"posn": "/src/b/b.go:3:9", "end": "/src/b/b.go:3:20", "message": "first"}
		]
	}
}
{
	"example.com/a": {
		"statusfunc": [{"posn": "/src/a/a.go:7:1", "message": "in a"}]
	}
}
`
	got, packages, err := readVetJSON([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if packages != 2 {
		t.Errorf("%d packages, want 2", packages)
	}
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Posn+" "+f.Message+" "+f.Analyzer)
	}
	want := "/src/a/a.go:7:1 in a statusfunc|/src/b/b.go:3:9 first statuswrite|/src/b/b.go:12:2 second statuswrite"
	if s := strings.Join(lines, "|"); s != want {
		t.Errorf("findings\n%s\nwant\n%s", s, want)
	}
	if f, n, err := readVetJSON(nil); err != nil || len(f) != 0 || n != 0 {
		t.Errorf("no output: %v, %d, %v; want no finding and no package", f, n, err)
	}
	if f, n, err := readVetJSON([]byte("{}\n{}\n")); err != nil || len(f) != 0 || n != 2 {
		t.Errorf("two clean packages: %v, %d, %v", f, n, err)
	}
	if _, _, err := readVetJSON([]byte(`{"p": {"statuswrite": {"error": "boom"}}}`)); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("an analyzer's error: %v", err)
	}
}

func TestVetWithoutTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := runRoot(t, "vet", "./...")
	if ExitCode(err) != exitUsage || !strings.Contains(err.Error(), "go install github.com/statusapply/statusapply/analyzers/cmd/statusapply-vet") {
		t.Errorf("vet without the tool: %v (exit %d), want exit 2 saying how to install it", err, ExitCode(err))
	}
	_, _, err = runRoot(t, "vet", "--vettool", filepath.Join(t.TempDir(), "missing"))
	if ExitCode(err) != exitUsage {
		t.Errorf("vet with a missing --vettool: %v, want exit 2", err)
	}
}

// TestVetOnNothing runs vet with a go that vets what it is told: nothing
// (no JSON document, as go vet prints for patterns that match no package),
// or one clean package.
func TestVetOnNothing(t *testing.T) {
	bin := t.TempDir()
	tool := filepath.Join(bin, vetToolName)
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeGo := func(output string) {
		t.Helper()
		script := "#!/bin/sh\nprintf '" + output + "'\n"
		if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)

	fakeGo("")
	_, stderr, err := runRoot(t, "vet", "./config/...")
	if ExitCode(err) != exitFindings || err == nil ||
		err.Error() != "no package vetted: ./config/... matched none; give --allow-empty if nothing is expected" {
		t.Errorf("vet of nothing: %v (exit %d), want exit 1 saying why", err, ExitCode(err))
	}
	if stderr != "0 findings\n" {
		t.Errorf("stderr %q", stderr)
	}
	if _, _, err := runRoot(t, "vet", "./config/...", "--allow-empty"); err != nil {
		t.Errorf("vet of nothing with --allow-empty: %v", err)
	}
	fakeGo("{}\\n")
	if _, _, err := runRoot(t, "vet", "./..."); err != nil {
		t.Errorf("vet of a clean package: %v, want exit 0", err)
	}
}

func TestRelPosn(t *testing.T) {
	dir := filepath.FromSlash("/src/proj")
	for _, tc := range []struct{ posn, want string }{
		{filepath.FromSlash("/src/proj/internal/c.go") + ":12:3", filepath.FromSlash("internal/c.go") + ":12:3"},
		{filepath.FromSlash("/src/proj/c.go") + ":1:1", "c.go:1:1"},
		{filepath.FromSlash("/src/other/c.go") + ":1:1", filepath.FromSlash("/src/other/c.go") + ":1:1"},
		{"c.go:4:2", "c.go:4:2"},
	} {
		if got := relPosn(dir, tc.posn); got != tc.want {
			t.Errorf("relPosn(%q, %q) = %q, want %q", dir, tc.posn, got, tc.want)
		}
	}
}

func TestSkippedSummary(t *testing.T) {
	all := []vetFinding{
		{Posn: "a.go:1:1", Message: "a finding", Category: "whole-list"},
		{Posn: "a.go:2:1", Message: "not analyzed: a status patch of *v1.Widget: its patch is built where it cannot be followed", Category: skippedCategory},
		{Posn: "a.go:3:1", Message: "not analyzed: a status patch of *v1.Gadget: its patch is built where it cannot be followed", Category: skippedCategory},
		{Posn: "a.go:4:1", Message: "not analyzed: a raw merge patch (client.RawPatch) of the status of *v1.Widget: its data is built where it cannot be followed", Category: skippedCategory},
	}
	findings, skipped := splitSkipped(all)
	if len(findings) != 1 || len(skipped) != 3 {
		t.Fatalf("split: %d findings, %d skipped; want 1 and 3", len(findings), len(skipped))
	}
	want := "3 status writes not analyzed: 2 a status patch (its patch is built where it cannot be followed); 1 a raw merge patch (client.RawPatch) of the status (its data is built where it cannot be followed)"
	if got := skippedSummary(skipped); got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
}
