package cli

import (
	"bytes"
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

func TestRootCommands(t *testing.T) {
	root := NewRootCommand()
	for _, name := range []string{"demo", "owners", "lint", "migrate"} {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("no %s command: %v", name, err)
		}
	}
	for _, flag := range []string{"kubeconfig", "context", "namespace", "cluster"} {
		if root.PersistentFlags().Lookup(flag) == nil {
			t.Errorf("no --%s flag", flag)
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

	root = NewRootCommand()
	out.Reset()
	root.SetOut(&out)
	if err := execute(t, root, "--help"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kubectl-statusapply") || !strings.Contains(out.String(), "statusapply [command]") {
		t.Fatalf("root help does not explain the plugin:\n%s", out.String())
	}
}

func TestLintFilesNeedsNoCluster(t *testing.T) {
	tests := []struct {
		file    string
		wantErr bool
		want    string
	}{
		{file: "demo.statusapply.io_gadgets.yaml", wantErr: true, want: "1 CRD checked: 1 error, 0 warnings"},
		{file: "demo.statusapply.io_widgets.yaml", want: "1 CRD checked: 0 errors, 1 warning"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			root := NewRootCommand()
			var out, errOut bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errOut)
			err := execute(t, root, "lint", exampleCRD(tt.file), "--kubeconfig", "does-not-exist")
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Fatalf("output misses %q:\n%s", tt.want, out.String())
			}
		})
	}
}

func TestMigrateRefusesBadFlagsBeforeConnecting(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"migrate", "widgets"}, want: "nothing to migrate"},
		{args: []string{"migrate", "widgets", "--condition", "Ready"}, want: "--condition"},
		{args: []string{"migrate", "widgets", "-o", "yaml"}, want: "unknown output format"},
		{args: []string{"migrate"}, want: "requires at least 1 arg"},
		{args: []string{"owners", "widget/a", "b"}, want: "give every argument as TYPE/NAME"},
		{args: []string{"owners", "widgets", "w1", "-A"}, want: "across all namespaces"},
		{args: []string{"owners", "widgets", "w1", "-l", "app=web"}, want: "--selector applies to lists"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := NewRootCommand()
			root.SetOut(&bytes.Buffer{})
			root.SetErr(&bytes.Buffer{})
			err := execute(t, root, append(tt.args, "--kubeconfig", "does-not-exist")...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
