package clisuite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/cmd/internal/cli"
)

// syncBuffer is a bytes.Buffer a process writes to while a spec reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// childProcess is a process started by the demo.
type childProcess struct {
	pid     int
	cmdline string
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []childProcess {
	GinkgoHelper()
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	var out []childProcess
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if ppid, ok := strings.CutPrefix(line, "PPid:"); ok && strings.TrimSpace(ppid) == strconv.Itoa(pid) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				out = append(out, childProcess{pid: child, cmdline: strings.ReplaceAll(string(cmdline), "\x00", " ")})
			}
		}
	}
	return out
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

var _ = Describe("demo", func() {
	It("runs on the cluster of --kubeconfig, and --against still works as a deprecated alias", func(ctx context.Context) {
		r := run(ctx, "demo")
		Expect(r.err).NotTo(HaveOccurred(), r.stdout)
		Expect(r.stdout).To(ContainSubstring("statusapply demo against https://127.0.0.1:"))
		Expect(r.stdout).To(ContainSubstring("working in namespace statusapply-demo-"))
		Expect(r.stdout).NotTo(ContainSubstring("embedded"))
		for _, file := range []string{"cmd/internal/demo/writers.go", "cmd/internal/demo/migration.go", "cmd/internal/demo/policies.go", "cmd/internal/demo/plan.go"} {
			Expect(r.stdout).To(ContainSubstring("      read: "+file), "every step names the file to read")
			Expect(filepath.Join(moduleRoot(), file)).To(BeAnExistingFile())
		}
		Expect(r.stdout).To(MatchRegexp(`round 1: Bound=\w+; vanished: Ready \(set by readiness\), Reachable \(set by networking\)`),
			"step 2 names the conditions that vanished")
		Expect(r.stdout).NotTo(ContainSubstring("map["), "no Go map printed")
		Expect(r.stdout).To(MatchRegexp(`\n      Fail         manager intruder cannot change 3 fields of [^\n]*:\n {19}- \.status\.conditions\[type="Ready"\]`),
			"the conflict message keeps its lines under its first")

		root := cli.NewRootCommand()
		var stdout, stderr bytes.Buffer
		root.SetOut(&stdout)
		root.SetErr(&stderr)
		root.SetArgs([]string{"demo", "--against", kubeconfig, "--cache-dir", cacheDir})
		Expect(root.ExecuteContext(ctx)).To(Succeed(), stdout.String())
		Expect(stdout.String()).To(ContainSubstring("statusapply demo against https://127.0.0.1:"))
		// cobra prints flag deprecations where the command prints its output.
		Expect(stdout.String() + stderr.String()).To(ContainSubstring("Flag --against has been deprecated, use --kubeconfig"))
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		It(fmt.Sprintf("stops on %v, leaving no kube-apiserver, etcd or temporary directory behind", sig), func(ctx context.Context) {
			tmp := filepath.Join(suiteDir, "demo-tmp-"+strconv.Itoa(int(sig)))
			Expect(os.MkdirAll(tmp, 0o700)).To(Succeed())
			cmd := exec.Command(filepath.Join(builtBinaries(), "statusapply"), "demo")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var out syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			Expect(cmd.Start()).To(Succeed())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			DeferCleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
				}
			})

			Eventually(out.String).WithTimeout(2*time.Minute).WithPolling(50*time.Millisecond).
				Should(ContainSubstring("API server ready"), "the demo starts its API server")
			children := childrenOf(cmd.Process.Pid)
			var names []string
			for _, c := range children {
				names = append(names, filepath.Base(strings.Fields(c.cmdline)[0]))
			}
			Expect(names).To(ContainElements("kube-apiserver", "etcd"))
			dirs, err := os.ReadDir(tmp)
			Expect(err).NotTo(HaveOccurred())
			Expect(dirs).NotTo(BeEmpty(), "the API server's data and certificates live in TMPDIR")

			Expect(cmd.Process.Signal(sig)).To(Succeed())
			var waitErr error
			Eventually(exited).WithTimeout(time.Minute).Should(Receive(&waitErr), out.String())
			GinkgoWriter.Println(out.String())
			Expect(cmd.ProcessState.ExitCode()).To(Equal(2), "interrupted: exit code 2\n%s", out.String())
			Expect(out.String()).To(MatchRegexp(`error: interrupted [^\n]*signal received`))
			Expect(out.String()).To(ContainSubstring("stopping the embedded kube-apiserver and etcd"))
			for _, c := range children {
				Expect(alive(c.pid)).To(BeFalse(), "%s (pid %d) survived", c.cmdline, c.pid)
			}
			dirs, err = os.ReadDir(tmp)
			Expect(err).NotTo(HaveOccurred())
			Expect(dirs).To(BeEmpty(), "temporary directories left behind")
		})
	}
})
