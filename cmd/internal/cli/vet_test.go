package cli

import (
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
	got, err := readVetJSON([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Posn+" "+f.Message+" "+f.Analyzer)
	}
	want := "/src/a/a.go:7:1 in a statusfunc|/src/b/b.go:3:9 first statuswrite|/src/b/b.go:12:2 second statuswrite"
	if s := strings.Join(lines, "|"); s != want {
		t.Errorf("findings\n%s\nwant\n%s", s, want)
	}
	if f, err := readVetJSON(nil); err != nil || len(f) != 0 {
		t.Errorf("no output: %v, %v; want no finding", f, err)
	}
	if _, err := readVetJSON([]byte(`{"p": {"statuswrite": {"error": "boom"}}}`)); err == nil || !strings.Contains(err.Error(), "boom") {
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
