package clisuite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// clusterCRDs returns the cluster's CRDs as kubectl get crd -o yaml prints
// them (kind List, each item with its kind), and as the API server's typed
// list (kind CustomResourceDefinitionList, items without kind), with their
// number.
func clusterCRDs(ctx context.Context) (list, typed string, n int) {
	GinkgoHelper()
	l := &apiextensionsv1.CustomResourceDefinitionList{}
	Expect(env.Client.List(ctx, l)).To(Succeed())
	items := make([]map[string]any, 0, len(l.Items))
	bare := make([]map[string]any, 0, len(l.Items))
	for _, crd := range l.Items {
		data, err := json.Marshal(crd)
		Expect(err).NotTo(HaveOccurred())
		var item map[string]any
		Expect(json.Unmarshal(data, &item)).To(Succeed())
		delete(item, "apiVersion")
		delete(item, "kind")
		bare = append(bare, item)
		withKind := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}
		for k, v := range item {
			withKind[k] = v
		}
		items = append(items, withKind)
	}
	y, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	Expect(err).NotTo(HaveOccurred())
	j, err := json.Marshal(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinitionList", "items": bare})
	Expect(err).NotTo(HaveOccurred())
	return string(y), string(j), len(l.Items)
}

var _ = Describe("gates that cannot pass on nothing", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	It("fail audit and migrate under --exit-code when they select no object, unless --allow-empty", func(ctx context.Context) {
		empty := "no widgets.demo.statusapply.io found in namespace " + ns

		r := run(ctx, "audit", "widgets", "-n", ns, "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.err).To(MatchError("nothing audited: " + empty + "; give --allow-empty if nothing is expected"))
		Expect(r.stderr).To(HavePrefix(empty + "\n"))
		r = run(ctx, "audit", "widgets", "-n", ns, "--exit-code", "--allow-empty")
		Expect(r.err).NotTo(HaveOccurred())

		migrate := []string{"migrate", "widgets", "-n", ns, "--from", legacyManager + "=summary"}
		r = run(ctx, append(migrate, "--exit-code")...)
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.err).To(MatchError("nothing to migrate or check: " + empty + "; give --allow-empty if nothing is expected"))
		Expect(r.stdout).To(BeEmpty())
		r = run(ctx, append(migrate, "--exit-code", "--apply")...)
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		r = run(ctx, append(migrate, "--exit-code", "--allow-empty")...)
		Expect(r.err).NotTo(HaveOccurred())
		By("without --exit-code nothing gates: an empty run is done, as before")
		r = run(ctx, migrate...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(HavePrefix(empty + "\n"))

		By("the control: one object, and the same gates pass or find")
		createLegacyWidget(ctx, ns, "w1")
		r = run(ctx, append(migrate, "--exit-code", "--new-destination", "summary")...)
		Expect(cli.ExitCode(r.err)).To(Equal(1), "it would change something")
		Expect(r.err).NotTo(MatchError(ContainSubstring("nothing to migrate")))
		r = run(ctx, "audit", "widgets", "-n", ns, "--exit-code")
		Expect(cli.ExitCode(r.err)).To(Equal(1), "a legacy writer is a finding")
		Expect(r.err).NotTo(MatchError(ContainSubstring("nothing audited")))

		By("the built binary prints why on stderr, one line")
		b := runBinary(ctx, nil, "statusapply", "audit", "widgets", "-n", ns, "-l", "app=none", "--exit-code",
			"--kubeconfig", kubeconfig, "--cache-dir", cacheDir)
		Expect(b.code).To(Equal(1))
		Expect(b.stderr).To(HaveSuffix("\nerror: nothing audited: " + empty + " matching app=none; give --allow-empty if nothing is expected\n"))
	})

	It("fail lint when it checked no CRD, unless --allow-empty, and unpack Lists from stdin and files", func(ctx context.Context) {
		dir := GinkgoT().TempDir()
		none := filepath.Join(dir, "none.yaml")
		Expect(os.WriteFile(none, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"), 0o600)).To(Succeed())

		r := run(ctx, "lint", none)
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.err).To(MatchError("no CustomResourceDefinition checked: the files hold none; give --allow-empty if nothing is expected"))
		Expect(r.stderr).To(Equal("warning: " + none + " holds no CustomResourceDefinition\n0 CRDs checked: 0 errors, 0 warnings\n"))
		Expect(r.stdout).To(BeEmpty())
		r = run(ctx, "lint", none, "--allow-empty")
		Expect(r.err).NotTo(HaveOccurred())
		r = runWithInput(ctx, "", "lint", "-")
		Expect(cli.ExitCode(r.err)).To(Equal(1), "an empty pipe checks nothing")

		By("kubectl get crd -o yaml | statusapply lint -: every CRD of the List is checked")
		list, typed, n := clusterCRDs(ctx)
		Expect(n).To(BeNumerically(">=", 3))
		r = runWithInput(ctx, list, "lint", "-", "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1), "the cluster serves Gadget's atomic conditions")
		var out lintJSON
		decode(r, &out)
		Expect(out.Summary.CRDs).To(Equal(n))
		Expect(out.Items).To(ContainElement(And(HaveField("File", "<stdin>"), HaveField("CRD", "gadgets.demo.statusapply.io"),
			HaveField("Severity", "error"))))
		r = run(ctx, "lint", "-o", "json")
		var fromCluster lintJSON
		decode(r, &fromCluster)
		Expect(out.Summary).To(Equal(fromCluster.Summary), "the List holds what the cluster lint checks")

		By("a typed list, as the API server returns it, in a file")
		file := filepath.Join(dir, "crds.json")
		Expect(os.WriteFile(file, []byte(typed), 0o600)).To(Succeed())
		r = run(ctx, "lint", file)
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		Expect(r.stderr).To(HavePrefix(fmt.Sprintf("%d CRDs checked: 1 error", n)))
	})

	It("print what lint read before a file it cannot read", func(ctx context.Context) {
		gadgets := crdFile("demo.statusapply.io_gadgets.yaml")
		missing := filepath.Join(GinkgoT().TempDir(), "missing.yaml")
		r := run(ctx, "lint", gadgets, missing)
		Expect(cli.ExitCode(r.err)).To(Equal(2), "a tool error wins over findings")
		Expect(r.err).To(MatchError(ContainSubstring("reading " + missing)))
		Expect(lineWith(r.stdout, gadgets, "gadgets.demo.statusapply.io", "status.conditions", "error")).NotTo(BeEmpty(),
			"the findings of the file read before the error")
		Expect(r.stderr).To(Equal("1 CRD checked: 1 error, 0 warnings\n"))
	})

	It("say which of several listed types found nothing", func(ctx context.Context) {
		createLegacyWidget(ctx, ns, "w1")
		// Qualified: other specs serve gadgets of other groups, some with a removed version.
		r := run(ctx, "owners", "widgets,gadgets.demo.statusapply.io", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(lineWith(r.stdout, "w1 ", " legacy ")).NotTo(BeEmpty())
		Expect(r.stderr).To(ContainSubstring("no gadgets.demo.statusapply.io found in namespace " + ns + "\n"))
		Expect(r.stderr).NotTo(ContainSubstring("no widgets"))

		By("the control: a type with objects is not reported")
		r = run(ctx, "owners", "widgets", "-n", ns)
		Expect(r.stderr).NotTo(ContainSubstring("found"))
	})
})

var _ = Describe("migrate from a legacy writer still active", func() {
	It("refuses --apply unless --allow-active, warns in a dry run, and ignores writers the plan does not take from", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		key := createLegacyWidget(ctx, ns, "w1")
		Expect(widgets.LegacyWrite(ctx, env.Client, key, "other", "", widgets.CS("C", "True"))).To(Succeed())
		args := []string{"migrate", "widgets", "-n", ns, "--condition", "A=readiness", "--new-destination", "readiness"}

		r := run(ctx, args...)
		Expect(r.err).NotTo(HaveOccurred(), "a dry run only warns")
		Expect(r.stderr).To(MatchRegexp(`(?m)^dry run: 1 object, 1 would change, .*\nwarning: legacy writer legacy wrote 1 object within 24h ` +
			`\(last [^)]+ ago\): --apply refuses to take its fields until it is switched to apply or stopped \(or --allow-active\)\n` +
			`warning: legacy writer other wrote 1 object within 24h \(last [^)]+ ago\): the plan takes none of its fields, and its writes go on\n$`))

		rv := getWidget(ctx, key).ResourceVersion
		r = run(ctx, append(args, "--apply")...)
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("legacy wrote 1 object within 24h")))
		Expect(r.err).NotTo(MatchError(ContainSubstring("other")), "other gives nothing up")
		Expect(r.stdout).To(BeEmpty())
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(rv), "nothing was written")

		By("a window the write falls outside of: not active")
		r = run(ctx, append(args, "--apply", "--window", "1ms")...)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).NotTo(ContainSubstring("warning"))
		Expect(inspect(ctx, key).ConditionTypes()).To(HaveKeyWithValue("readiness", []string{"A"}))
	})
})

var _ = Describe("completion", func() {
	// complete runs cobra's completion protocol in-process, the connection
	// flags before the word to complete (which is the last argument).
	complete := func(ctx context.Context, args ...string) (values []string, directive string) {
		GinkgoHelper()
		root := cli.NewRootCommand()
		var stdout, stderr bytes.Buffer
		root.SetOut(&stdout)
		root.SetErr(&stderr)
		root.SetArgs(slices.Concat([]string{"__complete", args[0], "--kubeconfig", kubeconfig, "--cache-dir", cacheDir}, args[1:]))
		Expect(root.ExecuteContext(ctx)).To(Succeed())
		GinkgoWriter.Printf("$ statusapply __complete %s\n%s", strings.Join(args, " "), stdout.String())
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		return lines[:len(lines)-1], lines[len(lines)-1]
	}

	It("completes namespaces, contexts, managers from the objects, and kinds, never file names", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		key := createLegacyWidget(ctx, ns, "w1")
		Expect(widgets.ApplyConditions(ctx, env.Client, key, "readiness", widgets.CS("R", "True"))).To(Succeed())

		values, directive := complete(ctx, "owners", "widgets", "-n", "")
		Expect(values).To(ContainElements(ns, "default", "kube-system"))
		Expect(directive).To(Equal(":4"), "no file completion")
		values, directive = complete(ctx, "audit", "widgets", "--namespace", "")
		Expect(values).To(ContainElement(ns))
		Expect(directive).To(Equal(":4"))

		config, err := clientcmd.LoadFromFile(kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(config.Contexts).NotTo(BeEmpty())
		values, directive = complete(ctx, "owners", "widgets", "--context", "")
		Expect(values).To(ConsistOf(slices.Collect(func(yield func(string) bool) {
			for name := range config.Contexts {
				if !yield(name) {
					return
				}
			}
		})))
		Expect(directive).To(Equal(":4"))

		values, directive = complete(ctx, "migrate", "widgets", "-n", ns, "--from", "")
		Expect(values).To(Equal([]string{legacyManager + "="}), "the legacy writers of the objects")
		Expect(directive).To(Equal(":6"), "no space after =, no file completion")
		values, directive = complete(ctx, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=")
		Expect(values).To(Equal([]string{legacyManager + "=readiness"}), "the apply managers")
		Expect(directive).To(Equal(":4"))
		values, _ = complete(ctx, "migrate", "widgets", "-n", ns, "--condition", "")
		Expect(values).To(Equal([]string{"A=", "B="}), "the condition types legacy writers hold")
		values, _ = complete(ctx, "migrate", "widgets", "-n", ns, "--from", "legacy=summary", "--new-destination", "")
		Expect(values).To(Equal([]string{"summary"}), "the destinations of the plan")
		values, _ = complete(ctx, "audit", "widgets", "-n", ns, "--writer", "readiness=")
		Expect(values).To(Equal([]string{"readiness=A", "readiness=B"}))

		values, directive = complete(ctx, "owners", "wid")
		Expect(values).To(ContainElement("widgets"))
		Expect(directive).To(Equal(":4"))
		values, _ = complete(ctx, "audit", "")
		Expect(values).To(ContainElements("widgets", "gadgets", "namespaces"))

		By("the control: without objects, no managers")
		values, _ = complete(ctx, "migrate", "widgets", "-n", "no-such-namespace", "--from", "")
		Expect(values).To(BeEmpty())
	})
})
