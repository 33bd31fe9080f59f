package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the main module's directory, which holds examples/.
const repoRoot = "../../.."

// buildTool builds statusapply-vet into a temporary directory.
func buildTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "statusapply-vet")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func goVet(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"vet"}, args...)...)
	cmd.Dir = repoRoot
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

type diagnostic struct {
	Posn           string `json:"posn"`
	Message        string `json:"message"`
	SuggestedFixes []struct {
		Message string `json:"message"`
	} `json:"suggested_fixes"`
}

// TestExamples runs the tool over the project's examples with go vet: they
// write status through statusapply only, so nothing is reported; with a
// legacy status write and a bad status function laid over the widgets
// package (go vet -overlay), both analyzers report them, through go vet's
// -json, against the real controller-runtime and statusapply packages.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the examples and their dependencies")
	}
	tool := buildTool(t)
	if _, stderr, err := goVet(t, "-vettool="+tool, "./examples/..."); err != nil {
		t.Fatalf("go vet -vettool over examples/...: %v\n%s", err, stderr)
	}

	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := filepath.Abs(filepath.Join("testdata", "legacy.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "examples", "widgets", "zz_legacy.go"): legacy}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := goVet(t, "-json", "-overlay="+overlayFile, "-vettool="+tool, "./examples/widgets")
	if err != nil {
		t.Fatalf("go vet -json: %v\n%s", err, stderr)
	}
	var doc map[string]map[string][]diagnostic
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("go vet -json's output: %v\n%s", err, stdout)
	}
	got := doc["github.com/statusapply/statusapply/examples/widgets"]
	if w := got["statuswrite"]; len(w) != 1 ||
		!strings.Contains(w[0].Message, "a merge patch (client.MergeFrom) of the status of *v1alpha1.Widget") ||
		!strings.Contains(w[0].Message, "status.conditions is a map list (+listType=map)") ||
		len(w[0].SuggestedFixes) != 1 {
		t.Errorf("statuswrite: %+v, want the merge patch of a Widget, its map list, and a fix", w)
	}
	var msgs []string
	for _, d := range got["statusfunc"] {
		msgs = append(msgs, d.Message)
	}
	if all := strings.Join(msgs, "\n"); len(msgs) != 2 || !strings.Contains(all, "is refused: invalid input: empty field manager") ||
		!strings.Contains(all, "a request through the client (Get)") {
		t.Errorf("statusfunc:\n%s\nwant the empty manager and the request", all)
	}
}

// TestCLIVet runs `statusapply vet` over the examples with the tool built
// here, in text and JSON.
func TestCLIVet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the statusapply CLI")
	}
	tool := buildTool(t)
	cli := filepath.Join(t.TempDir(), "statusapply")
	build := exec.Command("go", "build", "-o", cli, "./cmd/statusapply")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build statusapply: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"vet", "--vettool", tool, "./examples/..."}, {"vet", "--json", "--vettool", tool, "./examples/..."}} {
		cmd := exec.Command(cli, args...)
		cmd.Dir = repoRoot
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		// Text prints nothing; JSON prints an empty document per package.
		clean := out.Len() == 0 || strings.Trim(strings.ReplaceAll(out.String(), "{}", ""), "\n") == ""
		if err != nil || !clean || strings.TrimSpace(errOut.String()) != "0 findings" {
			t.Errorf("statusapply %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errOut.String())
		}
	}
}
