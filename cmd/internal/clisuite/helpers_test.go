package clisuite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// legacyManager is the merge-patch writer the specs start from.
const legacyManager = "legacy"

// result is what one command run printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

// run executes the statusapply command tree in-process with args, connected
// to the suite's API server through the kubeconfig file.
func run(ctx context.Context, args ...string) result {
	GinkgoHelper()
	return runThrough(ctx, kubeconfig, args...)
}

// runPlugin is run with the command tree of the kubectl plugin.
func runPlugin(ctx context.Context, args ...string) result {
	GinkgoHelper()
	return runTree(ctx, cli.NewPluginCommand(), kubeconfig, args...)
}

// runThrough is run with another kubeconfig file.
func runThrough(ctx context.Context, kubeconfig string, args ...string) result {
	GinkgoHelper()
	return runTree(ctx, cli.NewRootCommand(), kubeconfig, args...)
}

// runTree executes the command tree root in-process with args, connected to
// an API server through the kubeconfig file.
func runTree(ctx context.Context, root *cobra.Command, kubeconfig string, args ...string) result {
	GinkgoHelper()
	return runTreeWithInput(ctx, root, kubeconfig, "", args...)
}

// runWithInput is run with stdin reading input.
func runWithInput(ctx context.Context, input string, args ...string) result {
	GinkgoHelper()
	return runTreeWithInput(ctx, cli.NewRootCommand(), kubeconfig, input, args...)
}

// runTreeWithInput is runTree with stdin reading input.
func runTreeWithInput(ctx context.Context, root *cobra.Command, kubeconfig, input string, args ...string) result {
	GinkgoHelper()
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetIn(strings.NewReader(input))
	root.SetArgs(append(slices.Clone(args), "--kubeconfig", kubeconfig, "--cache-dir", cacheDir))
	err := root.ExecuteContext(ctx)
	GinkgoWriter.Printf("$ %s %s\n%s%s", root.DisplayName(), strings.Join(args, " "), stdout.String(), stderr.String())
	if err != nil {
		GinkgoWriter.Printf("error: %v\n", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// decode parses a command's JSON output into v.
func decode(r result, v any) {
	GinkgoHelper()
	Expect(json.Unmarshal([]byte(r.stdout), v)).To(Succeed(), "stdout is one JSON document:\n%s", r.stdout)
}

// crdFile is the path of an example CRD manifest, found from this file so
// that the specs do not depend on the working directory.
func crdFile(name string) string {
	GinkgoHelper()
	_, self, _, ok := runtime.Caller(0)
	Expect(ok).To(BeTrue())
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "config", "crd", name)
}

// machineCRDName is the CRD in testdata shaped like Cluster API's Machine,
// which the suite installs.
const machineCRDName = "machines.cluster.test.statusapply.io"

// machineCRDFile is the path of its manifest.
func machineCRDFile() string {
	GinkgoHelper()
	_, self, _, ok := runtime.Caller(0)
	Expect(ok).To(BeTrue())
	return filepath.Join(filepath.Dir(self), "testdata", "cluster.test.statusapply.io_machines.yaml")
}

// createNamespaceWithWidgets creates a namespace for the spec with empty
// Widgets of the given names, and returns the namespace.
func createNamespaceWithWidgets(ctx context.Context, names ...string) string {
	GinkgoHelper()
	ns := suite.Namespace(ctx, env)
	for _, name := range names {
		createWidget(ctx, ns, name)
	}
	return ns
}

// widgetKey is the key of a Widget.
func widgetKey(ns, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: ns, Name: name}
}

// createWidget creates an empty Widget and returns its key.
func createWidget(ctx context.Context, ns, name string) client.ObjectKey {
	GinkgoHelper()
	key, err := widgets.CreateEmpty(ctx, env.Client, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return key
}

// createLegacyWidget creates a Widget in ns whose status only the legacy
// merge-patch writer wrote: conditions A and B, and the phase.
func createLegacyWidget(ctx context.Context, ns, name string) client.ObjectKey {
	key := createWidget(ctx, ns, name)
	legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
	return key
}

// createLegacyWidgets creates a namespace with n Widgets w00, w01, ... that
// only the legacy writer wrote, and returns it.
func createLegacyWidgets(ctx context.Context, n int) string {
	GinkgoHelper()
	ns := suite.Namespace(ctx, env)
	for i := range n {
		createLegacyWidget(ctx, ns, fmt.Sprintf("w%02d", i))
	}
	return ns
}

// legacyWrite sets conditions and the phase the way the controllers being
// migrated do: GET, change, JSON merge patch of /status.
func legacyWrite(ctx context.Context, key client.ObjectKey, phase string, conds map[string]metav1.ConditionStatus) {
	GinkgoHelper()
	Expect(widgets.LegacyWrite(ctx, env.Client, key, legacyManager, phase, conds)).To(Succeed())
}

// clearManagedFields makes the object look never tracked: a single empty
// entry is the API server's spelling of "reset".
func clearManagedFields(ctx context.Context, key client.ObjectKey) {
	GinkgoHelper()
	Expect(widgets.ClearManagedFields(ctx, env.Client, key)).To(Succeed())
	Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())
}

// getWidget reads the Widget from the API server.
func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w, err := widgets.Get(ctx, env.Client, key)
	Expect(err).NotTo(HaveOccurred())
	return w
}

// inspect reads the Widget and decodes its managedFields.
func inspect(ctx context.Context, key client.ObjectKey) *ownership.Ownership {
	GinkgoHelper()
	o, err := ownership.Inspect(getWidget(ctx, key))
	Expect(err).NotTo(HaveOccurred())
	return o
}

// conditions returns the object's conditions as type -> status.
func conditions(ctx context.Context, key client.ObjectKey) map[string]metav1.ConditionStatus {
	GinkgoHelper()
	return widgets.Conditions(getWidget(ctx, key))
}

// lineWith returns the first line of out containing every part, or "".
func lineWith(out string, parts ...string) string {
	for line := range strings.Lines(out) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}

// conditionsByManager collects manager -> condition types from a JSON
// ownership view, the shape ownership.Ownership.ConditionTypes returns.
func conditionsByManager(managers []managerJSON) map[string][]string {
	out := map[string][]string{}
	for _, m := range managers {
		if len(m.Conditions) > 0 {
			out[m.Manager] = append(out[m.Manager], m.Conditions...)
		}
	}
	return out
}
