package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statusapply/statusapply/fleet"
)

// exampleCRD is the path of an example CRD manifest from this package.
func exampleCRD(name string) string {
	return filepath.Join("..", "..", "..", "config", "crd", name)
}

func TestLintOutputAdd(t *testing.T) {
	r := newLintOutput()
	r.add(2, []fleet.Finding{
		{File: "f.yaml", CRD: "a.example.com", Version: "v1", Path: "status.conditions", Severity: fleet.SeverityError, Message: "m1"},
		{CRD: "b.example.com", Version: "v1", Path: "status.items", Severity: fleet.SeverityWarning, Message: "m2"},
	})
	r.add(1, nil)
	if r.Summary != (lintSummary{CRDs: 3, Errors: 1, Warnings: 1}) || len(r.Items) != 2 {
		t.Fatalf("counts %+v", r)
	}
	if r.Items[0].Severity != "error" || r.Items[1].File != "" || r.Items[0].Kind != "LintFinding" {
		t.Fatalf("findings %+v", r.Items)
	}
	names := r.crdsWithFindings()
	if len(names) != 2 {
		t.Fatalf("CRDs with findings: %v", names)
	}
	var b bytes.Buffer
	if err := printNames(&b, names); err != nil {
		t.Fatal(err)
	}
	if want := "customresourcedefinition.apiextensions.k8s.io/a.example.com\n" +
		"customresourcedefinition.apiextensions.k8s.io/b.example.com\n"; b.String() != want {
		t.Fatalf("-o name printed %q, want %q", b.String(), want)
	}
}

func TestWriteLintOutput(t *testing.T) {
	tests := []struct {
		name       string
		r          lintOutput
		want       string
		wantStderr string
	}{
		{
			name: "findings from a file and the cluster",
			r: lintOutput{Summary: lintSummary{CRDs: 2, Errors: 1, Warnings: 1}, Items: []findingView{
				{File: "f.yaml", CRD: "a.example.com", Version: "v1", Path: "status.conditions", Severity: "error", Message: "atomic"},
				{CRD: "b.example.com", Version: "v2", Path: "status.x", Severity: "warning", Message: "map"},
			}},
			want: "SOURCE    CRD             VERSION   PATH                SEVERITY   MESSAGE\n" +
				"f.yaml    a.example.com   v1        status.conditions   error      atomic\n" +
				"cluster   b.example.com   v2        status.x            warning    map\n",
			wantStderr: "2 CRDs checked: 1 error, 1 warning\n",
		},
		{name: "clean", r: lintOutput{Summary: lintSummary{CRDs: 1}}, wantStderr: "1 CRD checked: 0 errors, 0 warnings\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := writeLintOutput(&stdout, &stderr, boundOutputFlags(t), tt.r); err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tt.want {
				t.Errorf("stdout\n%s\nwant\n%s", stdout.String(), tt.want)
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

// TestLintStdoutHoldsOnlyTheOutput runs lint as a pipe would: with -o name,
// --no-headers or a template, stdout holds the names, the rows or the
// template's output and nothing else; the summary line is on stderr (not
// for documents, which hold the counts).
func TestLintStdoutHoldsOnlyTheOutput(t *testing.T) {
	gadgets, widgets := exampleCRD("demo.statusapply.io_gadgets.yaml"), exampleCRD("demo.statusapply.io_widgets.yaml")
	const summary = "2 CRDs checked: 1 error, 1 warning\n"
	tests := []struct {
		name       string
		args       []string
		want       func(string) bool
		wantStderr string
	}{{
		name: "-o name",
		args: []string{"-o", "name"},
		want: func(s string) bool {
			return s == "customresourcedefinition.apiextensions.k8s.io/gadgets.demo.statusapply.io\n"+
				"customresourcedefinition.apiextensions.k8s.io/widgets.demo.statusapply.io\n"
		},
		wantStderr: summary,
	}, {
		name: "--no-headers",
		args: []string{"--no-headers"},
		want: func(s string) bool {
			lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
			return len(lines) == 2 && strings.HasPrefix(lines[0], gadgets+" ") && strings.HasPrefix(lines[1], widgets+" ")
		},
		wantStderr: summary,
	}, {
		name:       "jsonpath",
		args:       []string{"-o", "jsonpath={.summary.errors}"},
		want:       func(s string) bool { return s == "1" },
		wantStderr: "",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runRoot(t, append([]string{"lint", gadgets, widgets, "--kubeconfig", "does-not-exist"}, tt.args...)...)
			if ExitCode(err) != exitFindings {
				t.Fatalf("error = %v, exit code %d, want 1", err, ExitCode(err))
			}
			if !tt.want(stdout) {
				t.Errorf("stdout holds more or less than the output:\n%s", stdout)
			}
			if stderr != tt.wantStderr {
				t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
			}
		})
	}
}

func TestLintFileFromStdinAndEmptyManifest(t *testing.T) {
	data, err := os.ReadFile(exampleCRD("demo.statusapply.io_gadgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	r := newLintOutput()
	if err := lintFile(bytes.NewReader(data), &stderr, "-", fleet.LintOptions{}, &r); err != nil {
		t.Fatal(err)
	}
	if r.Summary.CRDs != 1 || r.Summary.Errors != 1 || r.Items[0].File != stdinName {
		t.Fatalf("stdin: %+v", r)
	}

	empty := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(empty, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := lintFile(nil, &stderr, empty, fleet.LintOptions{}, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "holds no CustomResourceDefinition") {
		t.Fatalf("no warning for a manifest without CRDs: %q", stderr.String())
	}
	if err := lintFile(nil, &stderr, filepath.Join(t.TempDir(), "missing.yaml"), fleet.LintOptions{}, &r); err == nil ||
		!strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: error %v", err)
	}
}

// machineCRD is the CLI suite's fixture shaped like Cluster API's Machine:
// v1beta1 served but not stored, with atomic conditions; v1beta2 stored,
// with a map list.
func machineCRD() string {
	return filepath.Join("..", "clisuite", "testdata", "cluster.test.statusapply.io_machines.yaml")
}

func TestLintVersions(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{{
		name: "every served version: the deprecated one's atomic conditions are a warning",
		args: []string{machineCRD()},
		want: []string{"1 CRD checked: 0 errors, 1 warning",
			"v1beta1 is served but is not the storage version (v1beta2)", fleet.NotOwnedAdvice},
	}, {
		name: "--version of the storage version alone is clean",
		args: []string{machineCRD(), "--version", "v1beta2"},
		want: []string{"1 CRD checked: 0 errors, 0 warnings"},
	}, {
		name: "--version is repeatable, and still only warns on the deprecated version",
		args: []string{machineCRD(), "--version", "v1beta1", "--version", "v1beta2"},
		want: []string{"1 CRD checked: 0 errors, 1 warning"},
	}, {
		name:     "an error in another CRD's version still fails (the control)",
		args:     []string{machineCRD(), exampleCRD("demo.statusapply.io_gadgets.yaml"), "--version", "v1beta2", "--version", "v1alpha1"},
		wantCode: 1,
		want:     []string{"2 CRDs checked: 1 error, 0 warnings"},
	}, {
		name:     "a version no CRD serves is a usage error, not a clean pass",
		args:     []string{machineCRD(), "--version", "v1beta3"},
		wantCode: exitUsage,
		want:     []string{"--version v1beta3: no CRD checked serves it (served: v1beta1, v1beta2)"},
	}, {
		name:     "an empty version is a usage error",
		args:     []string{machineCRD(), "--version", ""},
		wantCode: exitUsage,
		want:     []string{"--version: empty version name"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runRoot(t, append(append([]string{"lint"}, tt.args...), "--kubeconfig", "does-not-exist")...)
			if ExitCode(err) != tt.wantCode {
				t.Fatalf("error = %v, exit code %d, want %d\n%s", err, ExitCode(err), tt.wantCode, stdout)
			}
			got := stdout + stderr
			if err != nil {
				got += err.Error()
			}
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("output misses %q:\n%s", want, got)
				}
			}
		})
	}
}
