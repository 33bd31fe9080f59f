package plugin_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// customConfig is what the test reads of .custom-gcl.yml.
type customConfig struct {
	Version string `json:"version"`
	Name    string `json:"name"`
	Plugins []struct {
		Module  string `json:"module"`
		Import  string `json:"import"`
		Version string `json:"version"`
	} `json:"plugins"`
}

func readCustomConfig(t *testing.T) customConfig {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", ".custom-gcl.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg customConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".custom-gcl.yml: %v", err)
	}
	if cfg.Name == "" || len(cfg.Plugins) != 1 || cfg.Plugins[0].Import != "github.com/statusapply/statusapply/analyzers/plugin" {
		t.Fatalf(".custom-gcl.yml: %+v, want a name and the one plugin package", cfg)
	}
	return cfg
}

// TestCustomConfigVersion checks that .custom-gcl.yml builds the golangci-lint
// the project pins in hack/golangci-lint/go.mod.
func TestCustomConfigVersion(t *testing.T) {
	cfg := readCustomConfig(t)
	mod, err := os.ReadFile(filepath.Join("..", "..", "hack", "golangci-lint", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/golangci/golangci-lint/v2 (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("hack/golangci-lint/go.mod requires no github.com/golangci/golangci-lint/v2")
	}
	if cfg.Version != string(m[1]) {
		t.Errorf(".custom-gcl.yml builds golangci-lint %s, hack/golangci-lint/go.mod pins %s", cfg.Version, m[1])
	}
}

// TestCustomBinary builds golangci-lint with the plugin offline, as the
// README documents: hack/custom-gcl.sh (golangci-lint custom with its clone
// of GitHub served from the module cache) on .custom-gcl.yml's version, name
// and plugin, with the plugin and the statusapply module taken from this
// checkout by path; then it runs the binary with the linter enabled over
// testdata/legacy with the README's .golangci.yml and expects its one status
// write reported.
//
// It compiles all of golangci-lint: set STATUSAPPLY_CUSTOM_GCL=1 to run it
// (make test-plugin).
func TestCustomBinary(t *testing.T) {
	if os.Getenv("STATUSAPPLY_CUSTOM_GCL") == "" {
		t.Skip("builds golangci-lint with the plugin; set STATUSAPPLY_CUSTOM_GCL=1 (make test-plugin)")
	}
	start := time.Now()
	cfg := readCustomConfig(t)
	analyzersDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(analyzersDir)
	modfile := filepath.Join(root, "hack", "golangci-lint", "go.mod")

	// The pinned golangci-lint (-modfile needs GOWORK=off: analyzers/ has a go.work).
	gcl := strings.TrimSpace(run(t, analyzersDir, []string{"GOWORK=off"}, "go", "tool", "-modfile="+modfile, "-n", "golangci-lint"))

	// .custom-gcl.yml as documented, with both modules of this checkout by path.
	work := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	p := cfg.Plugins[0]
	custom := strings.Join([]string{
		"version: " + cfg.Version,
		"name: " + cfg.Name,
		"destination: ./bin",
		"plugins:",
		"  - module: " + p.Module,
		"    import: " + p.Import,
		"    path: " + analyzersDir,
		"  - module: github.com/statusapply/statusapply",
		"    import: github.com/statusapply/statusapply/ssa",
		"    path: " + root,
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(work, ".custom-gcl.yml"), []byte(custom), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, work, []string{"GOLANGCI_LINT=" + gcl}, "bash", filepath.Join(analyzersDir, "hack", "custom-gcl.sh"))
	bin := filepath.Join(work, "bin", cfg.Name)
	built := time.Since(start)

	// The linter enabled, over the testdata package, with the README's
	// .golangci.yml.
	golangci := readmeGolangciYML(t)
	conf := filepath.Join(work, ".golangci.yml")
	if err := os.WriteFile(conf, []byte(golangci), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--allow-parallel-runners", "--config", conf, "--path-mode=abs", "./plugin/testdata/legacy")
	cmd.Dir = analyzersDir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s run reported nothing:\n%s", cfg.Name, out)
	}
	want := "legacy.go:16:9: statuswrite: Status().Update of *v1alpha1.Widget: it sends the whole status, and every list in it replaces the stored one; status.conditions is a map list (+listType=map)"
	if !strings.Contains(string(out), want) || strings.Count(string(out), "(statusapply)") != 1 {
		t.Errorf("%s run:\n%s\nwant the one finding %q", cfg.Name, out, want)
	}
	t.Logf("built in %s, ran in %s", built.Round(time.Second), (time.Since(start) - built).Round(time.Second))
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// readmeGolangciYML returns the .golangci.yml snippet of the README: the
// indented block starting with version: "2".
func readmeGolangciYML(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case lines == nil && l == "    version: \"2\"":
			lines = append(lines, strings.TrimPrefix(l, "    "))
		case lines != nil && strings.HasPrefix(l, "    "):
			lines = append(lines, strings.TrimPrefix(l, "    "))
		case lines != nil:
			return strings.Join(lines, "\n") + "\n"
		}
	}
	t.Fatal(`README.md has no .golangci.yml block starting with version: "2"`)
	return ""
}
