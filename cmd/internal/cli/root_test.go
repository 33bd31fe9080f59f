package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// execute runs a command tree with args and returns its error.
func execute(t *testing.T, root *cobra.Command, args ...string) error {
	t.Helper()
	root.SetArgs(args)
	return root.Execute()
}

// runRoot runs a fresh command tree with args and returns what it printed.
func runRoot(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := NewRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = execute(t, root, args...)
	return out.String(), errOut.String(), err
}

func TestRootCommands(t *testing.T) {
	root := NewRootCommand()
	for _, name := range []string{"demo", "owners", "audit", "lint", "migrate", "version", "completion"} {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("no %s command: %v", name, err)
		}
	}
	for _, flag := range []string{"kubeconfig", "context", "namespace", "cluster"} {
		if root.PersistentFlags().Lookup(flag) == nil {
			t.Errorf("no --%s flag", flag)
		}
	}
	for _, cmd := range []string{"owners", "audit", "migrate"} {
		c, _, _ := root.Find([]string{cmd})
		for _, flag := range []string{"output", "no-headers", "chunk-size", "selector", "all-namespaces", "template"} {
			if c.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s flag", cmd, flag)
			}
		}
		if f := c.Flags().Lookup("chunk-size"); f.DefValue != "500" {
			t.Errorf("%s --chunk-size defaults to %s, want 500 as in kubectl", cmd, f.DefValue)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{withExitCode(exitFindings, errors.New("lint found 1 error")), 1},
		{withExitCode(exitFindings, nil), 1},
		{errors.New("connection refused"), 2},
		{withExitCode(exitUsage, errors.New("bad flag")), 2},
	} {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestPluginHelpSaysKubectl(t *testing.T) {
	root := NewPluginCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	if err := execute(t, root, "owners", "--help"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kubectl statusapply owners TYPE[/NAME]") {
		t.Fatalf("plugin usage does not say kubectl statusapply:\n%s", out.String())
	}
	root = NewPluginCommand()
	out.Reset()
	root.SetOut(&out)
	if err := execute(t, root, "completion", "bash"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "complete -o default -F __start_kubectl-statusapply kubectl-statusapply") {
		t.Fatalf("the plugin's completion script does not call kubectl-statusapply:\n%s", out.String())
	}

	stdout, _, err := runRoot(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubectl-statusapply", "statusapply [command]", "kubectl_complete-statusapply", "Exit codes"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("root help misses %q:\n%s", want, stdout)
		}
	}
}

func TestPluginExamplesSayKubectl(t *testing.T) {
	root := NewPluginCommand()
	var walk func(*cobra.Command)
	examples := 0
	walk = func(c *cobra.Command) {
		for line := range strings.Lines(c.Example) {
			if strings.HasPrefix(strings.TrimSpace(line), "statusapply ") {
				t.Errorf("%s: example %q says statusapply, not kubectl statusapply", c.Name(), strings.TrimSpace(line))
			}
			if strings.Contains(line, "kubectl statusapply ") {
				examples++
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if examples == 0 {
		t.Fatal("no example says kubectl statusapply")
	}
	var out bytes.Buffer
	root.SetOut(&out)
	if err := execute(t, root, "migrate", "--help"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n  kubectl statusapply migrate widgets -n shop --from legacy-controller=readiness\n") {
		t.Errorf("plugin help:\n%s", out.String())
	}

	// The bare binary keeps its own name.
	stdout, _, err := runRoot(t, "migrate", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "\n  statusapply migrate widgets -n shop --from legacy-controller=readiness\n") {
		t.Errorf("statusapply help:\n%s", stdout)
	}
}

func TestVerbosityFlag(t *testing.T) {
	root := NewRootCommand()
	v := root.PersistentFlags().ShorthandLookup("v")
	if v == nil || v.Name != "v" || v.DefValue != "0" {
		t.Fatalf("-v is not kubectl's --v verbosity: %+v", v)
	}
	for _, cmd := range []string{"owners", "migrate", "audit", "lint"} {
		c, _, _ := root.Find([]string{cmd})
		if f := c.Flags().ShorthandLookup("v"); f != nil && f != v {
			t.Errorf("%s has its own -v: %s", cmd, f.Name)
		}
	}
	for _, args := range [][]string{{"migrate", "widgets", "--from", "a=b", "-v"}, {"migrate", "widgets", "-v", "--from", "a=b"}} {
		_, _, err := runRoot(t, args...)
		if ExitCode(err) != exitUsage || !strings.Contains(fmt.Sprint(err), "-o wide") {
			t.Errorf("%v: %v, want a usage error pointing at -o wide", args, err)
		}
	}
}

func TestLintFilesNeedsNoCluster(t *testing.T) {
	tests := []struct {
		file     string
		wantCode int
		want     string
	}{
		{file: "demo.statusapply.io_gadgets.yaml", wantCode: 1, want: "1 CRD checked: 1 error, 0 warnings"},
		{file: "demo.statusapply.io_widgets.yaml", wantCode: 0, want: "1 CRD checked: 0 errors, 1 warning"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, stderr, err := runRoot(t, "lint", exampleCRD(tt.file), "--kubeconfig", "does-not-exist")
			if ExitCode(err) != tt.wantCode {
				t.Fatalf("error = %v, exit code %d, want %d", err, ExitCode(err), tt.wantCode)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Fatalf("stderr misses the summary %q:\n%s", tt.want, stderr)
			}
		})
	}

	_, _, err := runRoot(t, "lint", filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") || ExitCode(err) != exitUsage {
		t.Fatalf("a missing file: error %v, exit code %d, want 2", err, ExitCode(err))
	}
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte("kind: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runRoot(t, "lint", broken); err == nil || ExitCode(err) != exitUsage {
		t.Fatalf("an undecodable file: error %v, exit code %d, want 2", err, ExitCode(err))
	}
}

func TestUsageErrorsBeforeConnecting(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"migrate", "widgets"}, want: "nothing to migrate"},
		{args: []string{"migrate", "widgets", "--condition", "Ready"}, want: "--condition"},
		{args: []string{"migrate", "widgets", "--from", "a=b", "-o", "yml"}, want: `unknown output format "yml"`},
		{args: []string{"migrate", "widgets", "--from", "a=b", "--concurrency", "0"}, want: "--concurrency 0"},
		{args: []string{"migrate", "widgets", "--from", "a=b", "--window", "0s"}, want: "--window 0s: must be positive"},
		{args: []string{"migrate"}, want: "migrate needs a resource type, such as widgets or widget/w1 (see 'statusapply migrate --help')"},
		{args: []string{"owners", "widget/a", "b"}, want: "give every argument as TYPE/NAME"},
		{args: []string{"audit"}, want: "audit needs a resource type, such as widgets (see 'statusapply audit --help')"},
		{args: []string{"audit", "widgets", "w1"}, want: "audit takes one resource type, not 2 arguments (widgets w1): " +
			"it audits every object of the type; narrow it with -n or -l (see 'statusapply audit --help')"},
		{args: []string{"audit", "widget/w1"}, want: "audit takes a resource type, not objects"},
		{args: []string{"audit", "widgets", "-o", "name"}, want: "-o name is not supported"},
		{args: []string{"audit", "widgets", "--window", "0s"}, want: "--window 0s"},
		{args: []string{"audit", "widgets", "--chunk-size", "-1"}, want: "--chunk-size -1"},
		{args: []string{"owners", "widgets", "w1", "-A"}, want: "across all namespaces"},
		{args: []string{"owners", "widgets", "w1", "-l", "app=web"}, want: "--selector applies to lists"},
		{args: []string{"owners", "widgets", "-l", "app in (web"}, want: "--selector"},
		{args: []string{"owners", "widgets", "--chunk-size", "-1"}, want: "--chunk-size -1"},
		{args: []string{"owners", "widgets", "-o", "jsonpath={.items"}, want: "unclosed action"},
		{args: []string{"owners", "widgets", "--no-such-flag"}, want: "unknown flag"},
		{args: []string{"version", "-o", "name"}, want: "version prints text or a document"},
		{args: []string{"completion", "tcsh"}, want: "give one shell"},
		{args: []string{"demo", "--embedded", "--context", "prod"}, want: "--embedded runs the demo on its own API server"},
		{args: []string{"demo", "--against", "a", "--kubeconfig", "b"}, want: "--against is --kubeconfig"},
		{args: []string{"nosuchcommand"}, want: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := runRoot(t, append(tt.args, "--kubeconfig", "does-not-exist")...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			if ExitCode(err) != exitUsage {
				t.Fatalf("exit code %d, want %d", ExitCode(err), exitUsage)
			}
		})
	}
}

func TestMissingKubeconfigIsOneClearError(t *testing.T) {
	t.Run("a --kubeconfig that does not exist", func(t *testing.T) {
		_, stderr, err := runRoot(t, "owners", "widgets", "--kubeconfig", "does-not-exist")
		if err == nil || !strings.Contains(err.Error(), "does-not-exist") || ExitCode(err) != exitUsage {
			t.Fatalf("error %v (exit %d), want one naming the file, exit 2", err, ExitCode(err))
		}
		if stderr != "" {
			t.Fatalf("stderr %q", stderr)
		}
	})
	t.Run("no kubeconfig at all", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("KUBECONFIG", "")
		t.Setenv("KUBERNETES_SERVICE_HOST", "")
		for _, args := range [][]string{{"owners", "widgets"}, {"migrate", "widgets", "--from", "a=b"}, {"lint"}} {
			_, _, err := runRoot(t, args...)
			if err == nil || !strings.Contains(err.Error(), "no kubeconfig found") || strings.Contains(err.Error(), "localhost:8080") {
				t.Fatalf("%v: error %v, want a clear one without localhost:8080", args, err)
			}
		}
		// A kubeconfig without current-context would fall back too.
		cfg := filepath.Join(home, "config")
		data := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
		if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := runRoot(t, "owners", "widgets", "--kubeconfig", cfg); err == nil ||
			!strings.Contains(err.Error(), "no current-context") {
			t.Fatalf("error %v, want one about current-context", err)
		}
	})
}

func TestVersion(t *testing.T) {
	stdout, _, err := runRoot(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "statusapply ") || !strings.Contains(stdout, "\ngo: go1.") || !strings.Contains(stdout, "commit: ") {
		t.Fatalf("version printed\n%s", stdout)
	}
	stdout, _, err = runRoot(t, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ APIVersion, Kind, Version, GoVersion string }
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if v.APIVersion != DocumentGroupVersion || v.Kind != "Version" || v.Version == "" || !strings.HasPrefix(v.GoVersion, "go1.") {
		t.Fatalf("version document %+v", v)
	}
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "bash completion V2 for statusapply",
		"zsh":  "#compdef statusapply",
		"fish": "fish completion for statusapply",
	} {
		stdout, _, err := runRoot(t, "completion", shell)
		if err != nil || !strings.Contains(stdout, want) {
			t.Errorf("completion %s: error %v, output without %q", shell, err, want)
		}
	}
	// The protocol kubectl's plugin completion speaks: cobra's __complete.
	stdout, _, err := runRoot(t, "__complete", "owners", "widgets", "-o", "")
	if err != nil || !strings.Contains(stdout, "jsonpath") || !strings.Contains(stdout, "wide") {
		t.Fatalf("-o completion: error %v, output\n%s", err, stdout)
	}
	// audit: formats without name (it prints no objects), types only, never files.
	stdout, _, err = runRoot(t, "__complete", "audit", "widgets", "-o", "")
	if err != nil || !strings.Contains(stdout, "yaml") || strings.Contains(stdout, "\nname\n") {
		t.Fatalf("audit -o completion: error %v, output\n%s", err, stdout)
	}
	for _, args := range [][]string{{"audit", ""}, {"audit", "widgets", ""}} {
		stdout, _, err = runRoot(t, append([]string{"__complete", "--kubeconfig", "does-not-exist"}, args...)...)
		if err != nil || !strings.HasSuffix(strings.TrimSpace(stdout), ":4") {
			t.Fatalf("%v completion: error %v, output\n%s (want no file completion, :4)", args, err, stdout)
		}
	}
}
