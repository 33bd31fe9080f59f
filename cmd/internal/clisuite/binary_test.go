package clisuite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// binaries are the statusapply and kubectl-statusapply binaries built from
// this work tree, with kubectl_complete-statusapply next to them, built once
// for the suite by builtBinaries.
var (
	binariesOnce sync.Once
	binariesDir  string
	binariesErr  error
)

// moduleRoot is the repository root, found from this file.
func moduleRoot() string {
	GinkgoHelper()
	_, self, _, ok := runtime.Caller(0)
	Expect(ok).To(BeTrue())
	return filepath.Join(filepath.Dir(self), "..", "..", "..")
}

// builtBinaries builds the binaries on first use and returns their
// directory. The build records the VCS state (-buildvcs=true), as a release
// build does, whatever GOFLAGS says.
func builtBinaries() string {
	GinkgoHelper()
	root := moduleRoot()
	binariesOnce.Do(func() {
		binariesDir = filepath.Join(suiteDir, "bin")
		for _, pkg := range []string{"statusapply", "kubectl-statusapply"} {
			cmd := exec.Command("go", "build", "-buildvcs=true", "-o", filepath.Join(binariesDir, pkg), "./cmd/"+pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				binariesErr = err
				GinkgoWriter.Printf("go build ./cmd/%s: %s\n", pkg, out)
				return
			}
		}
		script, err := os.ReadFile(filepath.Join(root, "cmd", "kubectl-statusapply", "kubectl_complete-statusapply"))
		if err == nil {
			err = os.WriteFile(filepath.Join(binariesDir, "kubectl_complete-statusapply"), script, 0o755)
		}
		binariesErr = err
	})
	Expect(binariesErr).NotTo(HaveOccurred(), "building the binaries")
	return binariesDir
}

// binaryResult is what a run of a built binary printed and its exit code.
type binaryResult struct {
	stdout, stderr string
	code           int
}

// runBinary runs a built binary with args; env replaces the environment
// when not nil (PATH then includes the binaries' directory).
func runBinary(ctx context.Context, env []string, name string, args ...string) binaryResult {
	GinkgoHelper()
	dir := builtBinaries()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, name), args...)
	if env != nil {
		cmd.Env = append(slices.Clone(env), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	GinkgoWriter.Printf("$ %s %s\n%s%s(exit %d)\n", name, strings.Join(args, " "), stdout.String(), stderr.String(), code)
	return binaryResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// isolatedEnv is an environment with a fresh HOME, no KUBECONFIG and no
// in-cluster configuration.
func isolatedEnv() []string {
	GinkgoHelper()
	home := filepath.Join(suiteDir, "home-"+strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	Expect(os.MkdirAll(home, 0o700)).To(Succeed())
	return []string{"HOME=" + home}
}

var _ = Describe("the built binaries", func() {
	It("print the module version and the VCS commit they were built from", func(ctx context.Context) {
		r := runBinary(ctx, nil, "statusapply", "version")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(MatchRegexp(`^statusapply \S+ \(github.com/statusapply/statusapply\)\n`))
		Expect(r.stdout).To(MatchRegexp(`\ncommit: [0-9a-f]{40} \(\d{4}-\d\d-\d\dT`))

		r = runBinary(ctx, nil, "kubectl-statusapply", "version", "-o", "jsonpath={.commit}")
		Expect(r.code).To(Equal(0))
		Expect(r.stdout).To(MatchRegexp(`^[0-9a-f]{40}$`))
		head, err := exec.Command("git", "-C", moduleRoot(), "rev-parse", "HEAD").Output()
		if err == nil {
			Expect(r.stdout).To(Equal(strings.TrimSpace(string(head))))
		}
	})

	It("give one clear error without a kubeconfig, and without a reachable server", func(ctx context.Context) {
		r := runBinary(ctx, isolatedEnv(), "statusapply", "owners", "widgets")
		Expect(r.code).To(Equal(2))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(MatchRegexp(`^error: no kubeconfig found [^\n]*\n$`), "one line")
		Expect(r.stderr).NotTo(ContainSubstring("reachable"), "no connection was tried: no hint")

		r = runBinary(ctx, isolatedEnv(), "statusapply", "audit", "widgets", "w1")
		Expect(r.code).To(Equal(2))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(Equal("error: audit takes one resource type, not 2 arguments (widgets w1): it audits every object "+
			"of the type; narrow it with -n or -l (see 'statusapply audit --help')\n"), "one line, no usage dump")
		Expect(r.stderr).NotTo(ContainSubstring("localhost:8080"))

		unreachable := filepath.Join(suiteDir, "unreachable.kubeconfig")
		Expect(os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: nowhere
  context: {cluster: nowhere, user: nobody}
users:
- name: nobody
  user: {token: x}
current-context: nowhere
`), 0o600)).To(Succeed())
		for _, args := range [][]string{
			{"owners", "widgets"},
			{"migrate", "widgets", "--from", "a=b"},
			{"lint"},
		} {
			r = runBinary(ctx, isolatedEnv(), "statusapply", append(args, "--kubeconfig", unreachable)...)
			Expect(r.code).To(Equal(2), "%v", args)
			Expect(r.stderr).To(MatchRegexp(`^error: [^\n]*127\.0\.0\.1:1[^\n]*\n$`), "%v: one line, no client-go log lines", args)
			Expect(r.stderr).To(HaveSuffix("connection refused (is the API server reachable? check --kubeconfig, --context or --server)\n"),
				"%v: a hint, as kubectl gives", args)
		}
	})

	It("complete resource types and names for kubectl's plugin completion through kubectl_complete-statusapply", func(ctx context.Context) {
		ns := createNamespaceWithWidgets(ctx, "completion-a", "completion-b")
		env := append(isolatedEnv(), "KUBECONFIG="+kubeconfig)

		r := runBinary(ctx, env, "kubectl_complete-statusapply", "owners", "wid")
		Expect(r.code).To(Equal(0))
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		Expect(lines).To(ContainElement("widgets"))
		Expect(lines[len(lines)-1]).To(Equal(":4"), "cobra's directive: no file completion")

		r = runBinary(ctx, env, "kubectl_complete-statusapply", "migrate", "widgets", "-n", ns, "")
		Expect(r.code).To(Equal(0))
		Expect(strings.Split(strings.TrimSpace(r.stdout), "\n")).To(Equal([]string{"completion-a", "completion-b", ":4"}))

		r = runBinary(ctx, env, "kubectl_complete-statusapply", "owners", "-n", ns, "widget/")
		Expect(strings.Split(strings.TrimSpace(r.stdout), "\n")).To(ContainElements("widget/completion-a", "widget/completion-b"))
	})
})
