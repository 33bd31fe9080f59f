package clisuite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/test/widgets"
)

// terminal is a tmux server of its own, running one command at a time in a
// real terminal of a fixed size.
type terminal struct {
	socket string
}

// newTerminal starts a private tmux server, or skips the spec when tmux is
// not installed (make tmux installs it).
func newTerminal() *terminal {
	GinkgoHelper()
	if _, err := exec.LookPath("tmux"); err != nil {
		Skip("tmux is not installed and could not be (make test runs make tmux, which installs it with apt-get): " +
			"the terminal rendering is not checked")
	}
	t := &terminal{socket: fmt.Sprintf("statusapply-cli-%d", GinkgoRandomSeed()+int64(time.Now().Nanosecond()))}
	DeferCleanup(func() { _ = exec.Command("tmux", "-L", t.socket, "kill-server").Run() })
	return t
}

// run runs command in a new tmux session 200 columns wide and returns the
// screen, scrollback included, once the command has finished.
func (t *terminal) run(ctx context.Context, name, command string) string {
	GinkgoHelper()
	script := command + `; echo "[exit $?]"; sleep 600`
	out, err := exec.CommandContext(ctx, "tmux", "-L", t.socket, "new-session", "-d", "-s", name, "-x", "200", "-y", "50", script).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "tmux new-session: %s", out)
	var screen string
	Eventually(func() string {
		// -J joins wrapped lines, -S - starts at the top of the scrollback.
		out, err := exec.CommandContext(ctx, "tmux", "-L", t.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", name).Output()
		Expect(err).NotTo(HaveOccurred())
		screen = string(out)
		return screen
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(MatchRegexp(`\[exit \d+\]`))
	GinkgoWriter.Printf("tmux %s:\n%s\n", name, screen)
	return screen
}

// runRaw runs command as run does and also returns every byte the command
// wrote to the terminal, escape sequences and carriage returns included
// (tmux pipe-pane), which the screen no longer shows once a line is redrawn.
func (t *terminal) runRaw(ctx context.Context, name, command string) (screen, raw string) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	ready, log := filepath.Join(dir, "ready"), filepath.Join(dir, "raw")
	wait := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; ", ready)
	out, err := exec.CommandContext(ctx, "tmux", "-L", t.socket, "new-session", "-d", "-s", name, "-x", "200", "-y", "50",
		wait+command+`; echo "[exit $?]"; sleep 600`).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "tmux new-session: %s", out)
	out, err = exec.CommandContext(ctx, "tmux", "-L", t.socket, "pipe-pane", "-o", "-t", name, "cat >> "+log).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "tmux pipe-pane: %s", out)
	Expect(os.WriteFile(ready, nil, 0o600)).To(Succeed())
	Eventually(func() string {
		out, err := exec.CommandContext(ctx, "tmux", "-L", t.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", name).Output()
		Expect(err).NotTo(HaveOccurred())
		screen = string(out)
		return screen
	}).WithTimeout(time.Minute).WithPolling(100 * time.Millisecond).Should(MatchRegexp(`\[exit \d+\]`))
	Eventually(func() string {
		data, _ := os.ReadFile(log)
		raw = string(data)
		return raw
	}).WithTimeout(10 * time.Second).Should(ContainSubstring("[exit "))
	GinkgoWriter.Printf("tmux %s:\n%s\nraw: %q\n", name, screen, raw)
	return screen, raw
}

// tableLines returns the lines of screen from the one starting with header
// up to an empty line, the exit line, or what the command prints after its
// table (a summary or a note on stderr).
func tableLines(screen, header string) []string {
	var lines []string
	for line := range strings.Lines(screen) {
		line = strings.TrimRight(line, " \n")
		if len(lines) == 0 && !strings.HasPrefix(line, header) {
			continue
		}
		if line == "" || strings.HasPrefix(line, "[exit") || strings.HasPrefix(line, "dry run:") || strings.HasPrefix(line, "note:") ||
			strings.Contains(line, "managedFields entr") {
			break
		}
		lines = append(lines, line)
	}
	return lines
}

// expectAligned checks that every row has a cell starting exactly where each
// column header starts, after at least one space.
func expectAligned(lines []string) {
	GinkgoHelper()
	Expect(len(lines)).To(BeNumerically(">", 1), "a header and rows")
	header := lines[0]
	var starts []int
	for i := range header {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ' && (i < 2 || header[i-2] == ' ')) {
			starts = append(starts, i)
		}
	}
	for _, row := range lines[1:] {
		for _, at := range starts {
			Expect(len(row)).To(BeNumerically(">", at), "row %q ends before column %d", row, at)
			Expect(row[at]).NotTo(Equal(byte(' ')), "row %q has no cell at column %d:\n%s", row, at, strings.Join(lines, "\n"))
			if at > 0 {
				Expect(row[at-1]).To(Equal(byte(' ')), "row %q: the cell before column %d runs into it", row, at)
			}
		}
	}
}

var _ = Describe("in a terminal", func() {
	It("prints aligned kubectl-style tables and progress on the terminal's stderr", func(ctx context.Context) {
		term := newTerminal()
		ns := createNamespaceWithWidgets(ctx, "w1", "a-widget-with-a-longer-name")
		for _, name := range []string{"w1", "a-widget-with-a-longer-name"} {
			key := widgetKey(ns, name)
			legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
			Expect(widgets.ApplyExisting(ctx, env.Client, key, "networking", "B")).To(Succeed())
			Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("R", "True"))).To(Succeed())
		}
		bin := filepath.Join(builtBinaries(), "statusapply")
		flags := fmt.Sprintf("--kubeconfig %s --cache-dir %s", kubeconfig, cacheDir)

		screen := term.run(ctx, "owners", fmt.Sprintf("%s owners widgets -n %s %s", bin, ns, flags))
		Expect(screen).To(ContainSubstring("[exit 0]"))
		lines := tableLines(screen, "NAME")
		Expect(lines[0]).To(MatchRegexp(`^NAME {3,}MANAGER {3,}OPERATION {3,}SUBRESOURCE {3,}OWNS {3,}NOTES$`))
		Expect(lines).To(HaveLen(11), "a header and five rows per object")
		expectAligned(lines)
		Expect(lineWith(screen, "a-widget-with-a-longer-name ", " legacy ", " Update ", " status ", " condition B ",
			"legacy writer; shared with networking")).NotTo(BeEmpty())
		Expect(screen).To(ContainSubstring("2 managedFields entries own no status field and are not shown"))

		screen = term.run(ctx, "owners-wide", fmt.Sprintf("%s owners widgets -A -o wide %s", bin, flags))
		lines = tableLines(screen, "NAMESPACE")
		Expect(lines[0]).To(MatchRegexp(`^NAMESPACE {3,}NAME {3,}MANAGER {3,}OPERATION {3,}SUBRESOURCE {3,}OWNS {3,}API VERSION {3,}UPDATED {3,}NOTES$`))
		expectAligned(lines)

		By("an object without managedFields: a short cell, and the note once after the table, which fits the terminal")
		untrackedNS := createNamespaceWithWidgets(ctx, "u1")
		legacyWrite(ctx, widgetKey(untrackedNS, "u1"), "Running", widgets.CS("A", "True"))
		clearManagedFields(ctx, widgetKey(untrackedNS, "u1"))
		screen = term.run(ctx, "owners-untracked", fmt.Sprintf("%s owners widgets -n %s %s", bin, untrackedNS, flags))
		lines = tableLines(screen, "NAME")
		Expect(lines).To(HaveLen(2))
		expectAligned(lines)
		for _, l := range lines {
			Expect(len(l)).To(BeNumerically("<=", 200), "a row wider than the 200-column terminal wraps: %q", l)
		}
		Expect(screen).To(MatchRegexp(`(?m)^note: 1 object without managedFields: who owns its status is unknown`))

		screen, raw := term.runRaw(ctx, "migrate", fmt.Sprintf("%s migrate widgets -n %s --from legacy=summary -o wide %s", bin, ns, flags))
		Expect(screen).To(ContainSubstring("[exit 0]"))
		lines = tableLines(screen, "NAME")
		Expect(lines).To(HaveLen(3))
		expectAligned(lines)
		Expect(screen).To(MatchRegexp(`(?m)^dry run: 2 objects, 2 would change`), "the summary starts its own line")

		By("progress on a terminal redraws one line: carriage return and erase, no new line per object, erased at the end")
		first := fmt.Sprintf("\r\x1b[2K[1/2] Widget %s/a-widget-with-a-longer-name: would migrate", ns)
		second := fmt.Sprintf("\r\x1b[2K[2/2] Widget %s/w1: would migrate", ns)
		Expect(raw).To(ContainSubstring(first + second + "\r\x1b[2K"))
		Expect(screen).NotTo(ContainSubstring("[1/2]"), "the progress line was redrawn and erased:\n%s", screen)
		Expect(screen).NotTo(ContainSubstring("[2/2]"))

		By("not on a terminal, --progress prints a line per object")
		screen = term.run(ctx, "migrate-piped", fmt.Sprintf("%s migrate widgets -n %s --from legacy=summary --progress %s 2>&1 | cat", bin, ns, flags))
		Expect(screen).To(ContainSubstring(fmt.Sprintf("[1/2] Widget %s/a-widget-with-a-longer-name: would migrate\n[2/2] Widget %s/w1: would migrate\n", ns, ns)))
	})
})
