package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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

// overlay writes a go vet -overlay file laying testdata's legacy write and
// legacy test over the widgets package.
func overlay(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	replace := map[string]string{}
	for file, src := range map[string]string{"zz_legacy.go": "zz_legacy.go", "zz_legacy_test.go": "zz_legacy_test.go"} {
		abs, err := filepath.Abs(filepath.Join("testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(root, "examples", "widgets", file)] = abs
	}
	data, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// vetJSON runs go vet -json with the tool and returns the findings of the
// widgets package, its test variant's included, by analyzer.
func vetJSON(t *testing.T, args ...string) map[string][]diagnostic {
	t.Helper()
	stdout, stderr, err := goVet(t, append([]string{"-json"}, args...)...)
	if err != nil {
		t.Fatalf("go vet -json: %v\n%s", err, stderr)
	}
	got := map[string][]diagnostic{}
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var doc map[string]map[string][]diagnostic
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("go vet -json's output: %v\n%s", err, stdout)
		}
		for pkg, byAnalyzer := range doc {
			if !strings.HasPrefix(pkg, "github.com/statusapply/statusapply/examples/widgets") {
				continue
			}
			for a, ds := range byAnalyzer {
				for _, d := range ds {
					if !slices.ContainsFunc(got[a], func(x diagnostic) bool { return x.Posn == d.Posn }) {
						got[a] = append(got[a], d)
					}
				}
			}
		}
	}
	return got
}

// TestExamples runs the tool over the project's examples with go vet: they
// write status through statusapply only, so nothing is reported; with a
// legacy status write, a merge patch of a scalar, a bad status function and
// a test's status update laid over the widgets package (go vet -overlay),
// both analyzers report them, through go vet's -json, against the real
// controller-runtime and statusapply packages; with -skiptests, the test's
// write is left out.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the examples and their dependencies")
	}
	tool := buildTool(t)
	if _, stderr, err := goVet(t, "-vettool="+tool, "./examples/..."); err != nil {
		t.Fatalf("go vet -vettool over examples/...: %v\n%s", err, stderr)
	}
	ov := overlay(t)
	got := vetJSON(t, "-overlay="+ov, "-vettool="+tool, "./examples/widgets")
	w := got["statuswrite"]
	var merge, update int
	for _, d := range w {
		switch {
		case strings.Contains(d.Posn, "zz_legacy.go") &&
			strings.Contains(d.Message, "a merge patch (client.MergeFrom) of the status of *v1alpha1.Widget: it carries a list whole when the list changed since its snapshot, and status.conditions is handed to SetStatusCondition") &&
			strings.Contains(d.Message, "status.conditions is a map list (+listType=map)") && len(d.SuggestedFixes) == 1:
			merge++
		case strings.Contains(d.Posn, "zz_legacy_test.go") && strings.Contains(d.Message, "Status().Update of *v1alpha1.Widget"):
			update++
		}
	}
	if len(w) != 2 || merge != 1 || update != 1 {
		t.Errorf("statuswrite: %+v, want the legacy merge patch of a Widget's conditions (with a fix) and the test's update, not the scalar patch", w)
	}
	var msgs []string
	for _, d := range got["statusfunc"] {
		msgs = append(msgs, d.Message)
	}
	if all := strings.Join(msgs, "\n"); len(msgs) != 2 || !strings.Contains(all, "is refused: invalid input: empty field manager") ||
		!strings.Contains(all, "a request through the client (Get)") {
		t.Errorf("statusfunc:\n%s\nwant the empty manager and the request", all)
	}

	got = vetJSON(t, "-overlay="+ov, "-vettool="+tool, "-skiptests=true", "./examples/widgets")
	if w := got["statuswrite"]; len(w) != 1 || !strings.Contains(w[0].Posn, "zz_legacy.go") {
		t.Errorf("statuswrite with -skiptests: %+v, want the legacy merge patch alone", w)
	}

	// go fix -fixtool applies the fix as the docs show it (-diff: printed,
	// not written): the Edit under the constant the user must define.
	cmd := exec.Command("go", "fix", "-fixtool="+tool, "-diff", "-overlay="+ov, "./examples/widgets")
	cmd.Dir = repoRoot
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "+\treturn batcher.EditStatus(b, base, fieldManager, func(w *v1alpha1.Widget) error {") {
		t.Errorf("go fix -fixtool -diff:\n%s\nwant the Edit with the fieldManager constant", out)
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
