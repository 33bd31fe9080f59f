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

// TestCustomBinary builds golangci-lint with the plugin the way
// `golangci-lint custom` builds it for a user, from .custom-gcl.yml's version,
// name and plugin, with the plugin and the statusapply module taken from this
// checkout by path; then it runs the binary with the linter enabled over
// testdata/legacy and expects its one status write reported.
//
// golangci-lint custom clones golangci-lint from GitHub at the version asked
// for: the clone is served from the pinned version's source in the module
// cache instead, so GitHub is not needed; modules missing from the cache come
// from GOPROXY. It compiles all of golangci-lint: set STATUSAPPLY_CUSTOM_GCL=1
// to run it (make test-plugin).
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

	// The pinned golangci-lint, and its source in the module cache.
	gcl := strings.TrimSpace(run(t, analyzersDir, nil, "go", "tool", "-modfile="+modfile, "-n", "golangci-lint"))
	srcDir := strings.TrimSpace(run(t, analyzersDir, nil, "go", "list", "-modfile="+modfile, "-m", "-f", "{{.Dir}}", "github.com/golangci/golangci-lint/v2"))

	// A git repository of that source, tagged as the version, for the clone.
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "golangci-lint.git")
	if err := os.CopyFS(repo, os.DirFS(srcDir)); err != nil {
		t.Fatal(err)
	}
	git := []string{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}
	run(t, repo, nil, "git", append(git, "init", "-q")...)
	run(t, repo, nil, "git", append(git, "add", "-A")...)
	run(t, repo, nil, "git", append(git, "commit", "-q", "--no-verify", "-m", cfg.Version)...)
	run(t, repo, nil, "git", append(git, "tag", cfg.Version)...)

	// .custom-gcl.yml as documented, with both modules of this checkout by path.
	work := filepath.Join(tmp, "work")
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
	env := []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=url.file://" + filepath.ToSlash(repo) + ".insteadOf",
		"GIT_CONFIG_VALUE_0=https://github.com/golangci/golangci-lint.git",
		// go mod tidy in golangci-lint's tree also loads the tests of the
		// plugin's dependencies, one of which meets an ambiguous
		// google.golang.org/genproto import there; the build needs none of them.
		"GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -e"),
	}
	run(t, work, env, gcl, "custom", "-v")
	bin := filepath.Join(work, "bin", cfg.Name)
	built := time.Since(start)

	// The linter enabled, over the testdata package.
	golangci := `version: "2"
linters:
  default: none
  enable:
    - statusapply
  settings:
    custom:
      statusapply:
        type: module
        description: status writes to move to statusapply
`
	conf := filepath.Join(work, ".golangci.yml")
	if err := os.WriteFile(conf, []byte(golangci), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", conf, "--path-mode=abs", "./plugin/testdata/legacy")
	cmd.Dir = analyzersDir
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s run reported nothing:\n%s", cfg.Name, out)
	}
	want := "legacy.go:16:9: statuswrite: Status().Update of *v1alpha1.Widget replaces the whole status; status.conditions is a map list (+listType=map)"
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "1 issues") {
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
