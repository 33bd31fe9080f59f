package clisuite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/test/widgets"
)

// legacyFleet is createLegacyWidgets with a proxy that watches them.
func legacyFleet(ctx context.Context, n int) (string, *watchingProxy) {
	GinkgoHelper()
	ns := createLegacyWidgets(ctx, n)
	return ns, newWatchingProxy(ns)
}

// migrateToSummary are the migrate arguments that hand the legacy writer's
// status to summary, a new field manager, in ns.
// The legacy writer wrote moments ago; --allow-active stands for it being
// switched off before the migration.
func migrateToSummary(ns string, more ...string) []string {
	return append([]string{"migrate", "widgets", "-n", ns, "--from", legacyManager + "=summary", "--new-destination", "summary",
		"--allow-active"}, more...)
}

// failedLine matches a failed object's line.
var failedLine = regexp.MustCompile(`(?m)^Widget \S+: failed: `)

var _ = Describe("migrate at the API server's pace", func() {
	It("reads each object once, in the list, and sends one guarded write per object that changes", func(ctx context.Context) {
		ns, proxy := legacyFleet(ctx, 6)

		r := runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns)...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("dry run: 6 objects, 6 would change, 0 unchanged, 0 failed"))
		counts, _ := proxy.take()
		Expect(counts).To(Equal(map[string]int{"LIST": 1}), "a dry run of tracked objects reads the list and nothing else")

		r = runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, "--apply")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("6 objects: 6 migrated, 0 unchanged, 0 failed"))
		counts, _ = proxy.take()
		Expect(counts).To(Equal(map[string]int{"LIST": 1, http.MethodPatch: 6}), "one write per object, no second read")

		r = runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, "--apply")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("6 objects: 0 migrated, 6 unchanged, 0 failed"))
		counts, _ = proxy.take()
		Expect(counts).To(Equal(map[string]int{"LIST": 1}), "a re-run that changes nothing sends nothing but the list")
	})

	It("refuses a write to an object that changed after the list, reads it again and keeps the other writer's change", func(ctx context.Context) {
		ns, proxy := legacyFleet(ctx, 2)
		key := widgetKey(ns, "w00")
		var raced atomic.Bool
		raceErr := make(chan error, 1)
		proxy.setHold(func(r *http.Request, _ int) bool {
			if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/w00") && raced.CompareAndSwap(false, true) {
				// Another writer lands between the list and the write.
				raceErr <- widgets.LegacyWrite(context.Background(), env.Client, key, "other", "Stopped", widgets.CS("C", "True"))
			}
			return true
		})
		r := runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, "--apply", "-o", "wide")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(raceErr).To(Receive(BeNil()), "the other writer's write")
		Expect(lineWith(r.stdout, "w00 ", " migrated ", " 2 ")).NotTo(BeEmpty(), "two rounds for w00:\n%s", r.stdout)
		counts, _ := proxy.take()
		Expect(counts).To(Equal(map[string]int{"LIST": 1, http.MethodPatch: 3, http.MethodGet: 1}),
			"the listed resourceVersion is refused (409), the object read again and written")
		Expect(conditions(ctx, key)).To(HaveKeyWithValue("C", metav1.ConditionTrue), "the other writer's condition survives")
		Expect(inspect(ctx, key).ConditionTypes()).To(HaveKeyWithValue("summary", []string{"A", "B"}))
	})

	It("runs --concurrency objects at once, as fast as --qps and --burst let it", func(ctx context.Context) {
		slow := func(*http.Request, int) bool { time.Sleep(300 * time.Millisecond); return true }
		for _, tc := range []struct {
			flags []string
			want  int
		}{
			{[]string{"--concurrency", "4", "--qps", "-1"}, 4},
			{[]string{"--concurrency", "4"}, 4},
			{[]string{"--concurrency", "1"}, 1},
			{[]string{"--concurrency", "4", "--qps", "1", "--burst", "1"}, 1},
		} {
			ns, proxy := legacyFleet(ctx, 4)
			proxy.setHold(slow)
			r := runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, append(tc.flags, "--apply")...)...)
			Expect(r.err).NotTo(HaveOccurred(), "%v", tc.flags)
			Expect(r.stderr).To(ContainSubstring("4 objects: 4 migrated"), "%v", tc.flags)
			counts, inFlight := proxy.take()
			Expect(counts[http.MethodPatch]).To(Equal(4), "%v", tc.flags)
			Expect(inFlight).To(Equal(tc.want), "%v: writes in flight at once", tc.flags)
		}
	})

	It("refuses request rates that cannot work before sending anything", func(ctx context.Context) {
		ns, proxy := legacyFleet(ctx, 1)
		for _, tc := range []struct {
			flags []string
			want  string
		}{
			{[]string{"--qps", "0"}, "--qps 0: give the requests per second, or a negative value for no client-side limit"},
			{[]string{"--burst", "0"}, "--burst 0: must be 1 or more"},
		} {
			r := runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, tc.flags...)...)
			Expect(r.err).To(MatchError(ContainSubstring(tc.want)), "%v", tc.flags)
			Expect(cli.ExitCode(r.err)).To(Equal(2))
			Expect(r.stdout).To(BeEmpty())
		}
		r := runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, "--qps", "-1", "--burst", "0")...)
		Expect(r.err).NotTo(HaveOccurred(), "no client-side limit: --burst does not matter")
		counts, _ := proxy.take()
		Expect(counts).To(Equal(map[string]int{"LIST": 1}), "only the last run sent requests")
	})
})

var _ = Describe("an interrupted migrate", func() {
	It("on SIGINT, counts the objects it did not finish as not attempted, prints one line, and says how to resume", func(ctx context.Context) {
		ns, proxy := legacyFleet(ctx, 10)
		var proc atomic.Pointer[os.Process]
		proxy.setHold(func(r *http.Request, n int) bool {
			if n != 4 {
				return true
			}
			// Ctrl-C while the fourth write is on its way: the server never
			// gets it.
			for proc.Load() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			_ = proc.Load().Signal(os.Interrupt)
			cancelled(r)
			return false
		})
		args := migrateToSummary(ns, "--apply")
		cmd := exec.CommandContext(ctx, filepath.Join(builtBinaries(), "statusapply"),
			append(args, "--kubeconfig", proxy.kubeconfig, "--cache-dir", cacheDir)...)
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		Expect(cmd.Start()).To(Succeed())
		proc.Store(cmd.Process)
		err := cmd.Wait()
		GinkgoWriter.Printf("stdout:\n%s\nstderr:\n%s\n", stdout.String(), stderr.String())
		ee, ok := errors.AsType[*exec.ExitError](err)
		Expect(ok).To(BeTrue(), "%v", err)
		Expect(ee.ExitCode()).To(Equal(2))
		Expect(stdout.String()).To(BeEmpty(), "no failure line per object")
		Expect(withoutWarnings(stderr.String())).To(Equal("10 objects: 3 migrated, 0 unchanged, 0 failed, 7 not attempted\n" +
			"error: interrupted by interrupt signal received: 7 of 10 objects not attempted; to finish, run the same command again: " +
			"the objects migrated so far are found unchanged and left as they are\n"))

		r := run(ctx, args...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("10 objects: 7 migrated, 3 unchanged, 0 failed"))
	})

	It("cancelled with objects in flight, reports none of them as failed", func(ctx context.Context) {
		ns, proxy := legacyFleet(ctx, 12)
		runCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		proxy.setHold(func(r *http.Request, n int) bool {
			if n == 6 {
				cancel(errors.New("interrupt signal received"))
			}
			if n >= 5 {
				cancelled(r)
				return false
			}
			return true
		})
		r := runThrough(runCtx, proxy.kubeconfig, migrateToSummary(ns, "--apply", "--concurrency", "4", "-o", "json")...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(MatchRegexp(`^interrupted by interrupt signal received: \d+ of 12 objects not attempted; to finish, run the same command again`)))
		var out struct {
			Summary struct{ Total, Changed, Unchanged, Failed, NotAttempted int }
			Items   []struct{ Outcome string }
		}
		decode(r, &out)
		Expect(out.Summary.Failed).To(BeZero())
		Expect(out.Summary.Total).To(Equal(12))
		Expect(out.Summary.Changed + out.Summary.NotAttempted).To(Equal(12))
		Expect(out.Summary.NotAttempted).To(BeNumerically(">=", 8), "the writes held and those never sent; those let through may be cut off too")
		Expect(out.Items).To(HaveEach(HaveField("Outcome", "migrated")), "objects not attempted are not items")
		Expect(r.stderr).NotTo(ContainSubstring("context canceled"))
		Expect(failedLine.FindAllString(r.stderr, -1)).To(BeEmpty())
	})
})

var _ = Describe("migrate's permissions", func() {
	// userWith returns a kubeconfig for a new user whom a Role in ns grants
	// verbs on widgets (and, with status, patch on widgets/status).
	userWith := func(ctx context.Context, ns string, status bool, verbs ...string) string {
		GinkgoHelper()
		name := "migrator-" + ns
		path := userKubeconfig(name)
		rules := []rbacv1.PolicyRule{{APIGroups: []string{"demo.statusapply.io"}, Resources: []string{"widgets"}, Verbs: verbs}}
		if status {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"demo.statusapply.io"}, Resources: []string{"widgets/status"}, Verbs: []string{"patch"}})
		}
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "migrator"}, Rules: rules}
		Expect(env.Client.Create(ctx, role)).To(Succeed())
		Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "migrator"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "migrator"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		})).To(Succeed())
		return path
	}
	// grant replaces the Role's rules.
	grant := func(ctx context.Context, ns string, verbs ...string) {
		GinkgoHelper()
		role := &rbacv1.Role{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "migrator"}, role)).To(Succeed())
		role.Rules[0].Verbs = verbs
		Expect(env.Client.Update(ctx, role)).To(Succeed())
	}
	resourceVersions := func(ctx context.Context, ns string, n int) []string {
		GinkgoHelper()
		var out []string
		for i := range n {
			out = append(out, getWidget(ctx, widgetKey(ns, fmt.Sprintf("w%02d", i))).ResourceVersion)
		}
		return out
	}

	It("checks in the dry run what --apply needs, and --apply refuses to start without it", func(ctx context.Context) {
		ns, _ := legacyFleet(ctx, 3)
		kubeconfig := userWith(ctx, ns, true, "get", "list")
		before := resourceVersions(ctx, ns, 3)
		missing := fmt.Sprintf("the user may not patch widgets.demo.statusapply.io in namespace %s (objects there would change)", ns)

		r := runThrough(ctx, kubeconfig, migrateToSummary(ns)...)
		Expect(r.err).To(MatchError("--apply would be refused: " + missing))
		Expect(cli.ExitCode(r.err)).To(Equal(2), "a dry run of what cannot be applied fails, --exit-code or not")
		Expect(r.stderr).To(ContainSubstring("dry run: 3 objects, 3 would change, 0 unchanged, 0 failed"), "it still shows what would change")
		Expect(r.stdout).To(BeEmpty())

		r = runThrough(ctx, kubeconfig, migrateToSummary(ns, "--apply")...)
		Expect(r.err).To(MatchError("not migrating, nothing was written: " + missing))
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.stdout).To(BeEmpty())
		Expect(r.stderr).To(BeEmpty(), "no object was attempted")
		Expect(resourceVersions(ctx, ns, 3)).To(Equal(before), "nothing was written")

		By("the control: with patch granted, the same commands pass")
		grant(ctx, ns, "get", "list", "patch")
		r = runThrough(ctx, kubeconfig, migrateToSummary(ns)...)
		Expect(r.err).NotTo(HaveOccurred())
		r = runThrough(ctx, kubeconfig, migrateToSummary(ns, "--apply")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("3 objects: 3 migrated"))
	})

	It("names the status subresource an object without managedFields needs", func(ctx context.Context) {
		ns, _ := legacyFleet(ctx, 2)
		clearManagedFields(ctx, widgetKey(ns, "w01"))
		kubeconfig := userWith(ctx, ns, false, "get", "list", "patch")
		r := runThrough(ctx, kubeconfig, migrateToSummary(ns, "--apply")...)
		Expect(r.err).To(MatchError(fmt.Sprintf("not migrating, nothing was written: the user may not "+
			"patch widgets.demo.statusapply.io/status in namespace %s (objects there have no managedFields)", ns)))
		Expect(cli.ExitCode(r.err)).To(Equal(2))
	})

	It("stops --apply at the first object the API server refuses, unless --continue-on-error", func(ctx context.Context) {
		ns, proxy := legacyFleet(ctx, 5)
		proxy.setHold(func(r *http.Request, _ int) bool { return r.Method != http.MethodPatch })
		r := runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, "--apply")...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(fmt.Sprintf("stopped: Widget %s/w00 was refused by the API server (forbidden), 4 of 5 objects "+
			"not attempted (--continue-on-error attempts every object); to finish, run the same command again: "+
			"the objects migrated so far are found unchanged and left as they are", ns)))
		Expect(failedLine.FindAllString(r.stdout, -1)).To(HaveLen(1), "one Forbidden line:\n%s", r.stdout)
		Expect(r.stderr).To(ContainSubstring("5 objects: 0 migrated, 0 unchanged, 1 failed, 4 not attempted"))
		counts, _ := proxy.take()
		Expect(counts[http.MethodPatch]).To(Equal(1))

		By("the control: --continue-on-error attempts every object")
		r = runThrough(ctx, proxy.kubeconfig, migrateToSummary(ns, "--apply", "--continue-on-error")...)
		Expect(r.err).To(MatchError("5 of 5 objects failed to migrate"))
		Expect(failedLine.FindAllString(r.stdout, -1)).To(HaveLen(5))
		counts, _ = proxy.take()
		Expect(counts[http.MethodPatch]).To(Equal(5))
	})
})

// withoutWarnings drops the warning lines (an active legacy writer's, say)
// from a command's stderr.
func withoutWarnings(stderr string) string {
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "warning: ") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}
