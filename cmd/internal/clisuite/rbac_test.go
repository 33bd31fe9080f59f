package clisuite

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/test/suite"
)

// docRBAC returns the RBAC objects of docs/cli.md's ready Role, the YAML
// block after its "rbac:" marker, as written.
func docRBAC() []*unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(), "docs", "cli.md"))
	Expect(err).NotTo(HaveOccurred())
	_, after, found := strings.Cut(string(data), "<!-- rbac:")
	Expect(found).To(BeTrue(), "docs/cli.md marks its Role YAML")
	_, block, found := strings.Cut(after, "```yaml\n")
	Expect(found).To(BeTrue())
	block, _, found = strings.Cut(block, "```")
	Expect(found).To(BeTrue())
	var out []*unstructured.Unstructured
	for doc := range strings.SplitSeq(block, "\n---\n") {
		u := &unstructured.Unstructured{}
		Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		out = append(out, u)
	}
	return out
}

// userKubeconfig adds an API server user without groups and returns the
// path of a kubeconfig file for it.
func userKubeconfig(name string) string {
	GinkgoHelper()
	user, err := env.Environment().ControlPlane.AddUser(envtest.User{Name: name}, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(suiteDir, name+".kubeconfig")
	Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
	return path
}

// grantUser gives user rules, in a Role of ns or, with ns "", in a
// ClusterRole, until the spec ends.
func grantUser(ctx context.Context, user, ns string, rules ...rbacv1.PolicyRule) {
	GinkgoHelper()
	name := "grant-" + user
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	objs := []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}},
	}
	if ns != "" {
		objs = []client.Object{
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}},
		}
	}
	for _, obj := range objs {
		Expect(env.Client.Create(ctx, obj)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, obj) })
	}
}

var _ = Describe("the RBAC docs/cli.md lists", func() {
	It("is enough for each command, and the read-only Role is not enough for migrate --apply", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		tracked := createLegacyWidget(ctx, ns, "tracked")
		untracked := createLegacyWidget(ctx, ns, "untracked")
		clearManagedFields(ctx, untracked)

		roles := map[string]string{} // name -> kind
		for _, u := range docRBAC() {
			u = u.DeepCopy()
			if u.GetKind() == "Role" {
				u.SetNamespace(ns)
			} else {
				u.SetName(u.GetName() + "-" + ns)
			}
			Expect(env.Client.Create(ctx, u)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, u) })
			roles[strings.TrimSuffix(u.GetName(), "-"+ns)] = u.GetKind()
		}
		Expect(roles).To(Equal(map[string]string{"statusapply-read": "Role", "statusapply-migrate": "Role", "statusapply-crds": "ClusterRole"}))
		bind := func(user, role string) {
			subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
			var b client.Object
			if roles[role] == "ClusterRole" {
				b = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role}, Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role + "-" + ns}}
			} else {
				b = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role, Namespace: ns}, Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role}}
			}
			Expect(env.Client.Create(ctx, b)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, b) })
		}
		reader, migrator := "reader-"+ns, "migrator-"+ns
		bind(reader, "statusapply-read")
		bind(reader, "statusapply-crds")
		bind(migrator, "statusapply-migrate")
		asReader, asMigrator := userKubeconfig(reader), userKubeconfig(migrator)

		By("the read Role: owners, audit (with the schema) and lint of the cluster")
		r := runThrough(ctx, asReader, "owners", "widgets", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		r = runThrough(ctx, asReader, "owners", "widget/tracked", "-n", ns)
		Expect(r.err).NotTo(HaveOccurred())
		r = runThrough(ctx, asReader, "audit", "widgets", "-n", ns, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var out auditJSON
		decode(r, &out)
		Expect(out.Objects).To(Equal(2))
		Expect(out.Schema.Checked).To(BeTrue(), "get on the CRD: %s", out.Schema.Unavailable)
		r = runThrough(ctx, asReader, "lint")
		Expect(cli.ExitCode(r.err)).To(Equal(1), "Gadget's finding, not a refusal: %v", r.err)

		By("the read Role: a dry run of objects that carry managedFields runs, then fails: --apply would be refused")
		r = runThrough(ctx, asReader, "migrate", "widget/tracked", "-n", ns, "--from", legacyManager+"=summary", "--new-destination", "summary")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("--apply would be refused: the user may not patch widgets")))

		By("the read Role: a dry run of an object without managedFields needs patch on widgets/status, for its dry-run seeding")
		r = runThrough(ctx, asReader, "migrate", "widget/untracked", "-n", ns, "--from", "before-first-apply=summary", "--new-destination", "summary")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.stdout).To(ContainSubstring(`cannot patch resource "widgets/status"`))

		By("the control: the read Role cannot migrate")
		rv := getWidget(ctx, tracked).ResourceVersion
		r = runThrough(ctx, asReader, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=summary",
			"--from", "before-first-apply=summary", "--new-destination", "summary", "--apply", "--allow-active")
		Expect(cli.ExitCode(r.err)).To(Equal(2))
		Expect(r.err).To(MatchError(ContainSubstring("not migrating, nothing was written: the user may not patch widgets")))
		Expect(getWidget(ctx, tracked).ResourceVersion).To(Equal(rv))

		By("the migrate Role: --apply, seeding the object without managedFields")
		r = runThrough(ctx, asMigrator, "migrate", "widgets", "-n", ns, "--from", legacyManager+"=summary",
			"--from", "before-first-apply=summary", "--new-destination", "summary", "--apply", "--allow-active")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.stderr).To(ContainSubstring("2 objects: 2 migrated, 0 unchanged, 0 failed"))
		for _, key := range []client.ObjectKey{tracked, untracked} {
			Expect(inspect(ctx, key).ConditionTypes()).To(Equal(map[string][]string{"summary": {"A", "B"}}), key.Name)
		}
	})
})
