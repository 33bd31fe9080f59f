package clisuite

import (
	"context"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/test/suite"
)

// stopServing stops serving version of crd, keeping it in the CRD.
func stopServing(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version string) {
	GinkgoHelper()
	cur := &apiextensionsv1.CustomResourceDefinition{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), cur)).To(Succeed())
	for i := range cur.Spec.Versions {
		if cur.Spec.Versions[i].Name == version {
			cur.Spec.Versions[i].Served = false
		}
	}
	Expect(env.Client.Update(ctx, cur)).To(Succeed())
	waitEstablished(ctx, cur)
}

// staleCommand matches the migrate command owners' note proposes.
var staleCommand = regexp.MustCompile(`run statusapply (migrate [^()]*--stale-versions) \(a dry run\)`)

var _ = Describe("owners and a CRD version no longer served", func() {
	It("marks the entries recorded in it, not those in served versions, and names the migrate command that fixes them", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		crd := installGadgets(ctx, ns, gadgetVersion{"v1beta1", true, true}, gadgetVersion{"v1", true, false})
		v1beta1, v1 := gadgetGVK(crd, "v1beta1"), gadgetGVK(crd, "v1")
		key := createGadget(ctx, crd, "v1beta1", ns, "g1")
		Expect(applyStatus(ctx, v1beta1, key, "wa", conditionsList(versionCondition("A", "True")))).To(Succeed())
		Expect(mergePatchConditions(ctx, v1beta1, key, "legacy", versionCondition("B", "True"))).To(Succeed())
		Expect(applyStatus(ctx, v1, key, "wc", conditionsList(versionCondition("C", "True")))).To(Succeed())
		creator := ""
		for _, mf := range readObject(ctx, v1, key).GetManagedFields() {
			if mf.Subresource == "" {
				creator = mf.Manager
			}
		}
		Expect(creator).NotTo(BeEmpty())
		resource := "gadgets." + crd.Spec.Group
		owners := func() result {
			GinkgoHelper()
			r := runFresh(ctx, "owners", resource+"/g1", "-n", ns, "-o", "wide")
			Expect(cli.ExitCode(r.err)).To(Equal(0), "owners is a view: %v", r.err)
			return r
		}
		row := func(r result, manager string) string {
			GinkgoHelper()
			line := lineWith(r.stdout, " "+manager+" ")
			Expect(line).NotTo(BeEmpty(), "a row for %s:\n%s", manager, r.stdout)
			return line
		}

		By("the control: while both versions are served, nothing is marked and the creator's entry is hidden")
		r := owners()
		for _, m := range []string{"wa", "legacy", "wc"} {
			Expect(row(r, m)).NotTo(ContainSubstring("recorded in"))
		}
		Expect(r.stdout).NotTo(ContainSubstring(" " + creator + " "))
		Expect(r.stderr).NotTo(ContainSubstring("--stale-versions"))

		By("v1beta1 no longer served: its entries are marked, the creator's too, since it keeps applies from working once v1beta1 is removed")
		moveStorage(ctx, crd, "v1")
		stopServing(ctx, crd, "v1beta1")
		r = owners()
		for _, m := range []string{"wa", "legacy", creator} {
			Expect(row(r, m)).To(ContainSubstring(crd.Spec.Group+"/v1beta1"), "the API VERSION column")
			Expect(row(r, m)).To(ContainSubstring("recorded in v1beta1, no longer served"))
		}
		Expect(row(r, "legacy")).To(ContainSubstring("legacy writer; recorded in v1beta1, no longer served"))
		Expect(row(r, "wc")).NotTo(ContainSubstring("recorded in"), "v1 is served")
		Expect(r.stderr).To(ContainSubstring("note: 3 managedFields entries recorded in API versions the CRD no longer serves: " +
			"server-side applies work until the version is removed from the CRD, then fail"))

		By("v1beta1 removed: the same entries are marked as removed, and the note gives the error every apply gets")
		removeVersion(ctx, crd, "v1beta1")
		Expect(applyStatus(ctx, v1, key, "wc", conditionsList(versionCondition("C", "False")))).
			To(MatchError(ContainSubstring(fleet.ApplyError)))
		r = owners()
		for _, m := range []string{"wa", "legacy", creator} {
			Expect(row(r, m)).To(ContainSubstring("recorded in v1beta1, removed from the CRD"))
		}
		Expect(row(r, "wc")).NotTo(ContainSubstring("recorded in"), "v1 is served")
		Expect(r.stderr).To(ContainSubstring(`every server-side apply to an object with an entry in a removed version fails with "` +
			fleet.ApplyError + `"`))
		command := staleCommand.FindStringSubmatch(r.stderr)
		Expect(command).NotTo(BeNil(), "the migrate command in:\n%s", r.stderr)
		Expect(command[1]).To(Equal("migrate " + resource + "/g1 -n " + ns + " --stale-versions"))

		By("the documents carry the reason per entry")
		r = runFresh(ctx, "owners", resource+"/g1", "-n", ns, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var doc struct {
			Items []struct {
				Managers []struct {
					Manager      string `json:"manager"`
					StaleVersion string `json:"staleVersion"`
				} `json:"managers"`
			} `json:"items"`
		}
		decode(r, &doc)
		Expect(doc.Items).To(HaveLen(1))
		stale := map[string]string{}
		for _, m := range doc.Items[0].Managers {
			stale[m.Manager] = m.StaleVersion
		}
		Expect(stale).To(Equal(map[string]string{
			"wa": fleet.StaleRemoved, "legacy": fleet.StaleRemoved, creator: fleet.StaleRemoved, "wc": "",
		}))

		By("the command the note names, with --apply, makes applies work again; owners then marks nothing")
		r = runFresh(ctx, append(strings.Fields(command[1]), "--apply")...)
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
		Expect(applyStatus(ctx, v1, key, "wc", conditionsList(versionCondition("C", "False")))).To(Succeed())
		r = owners()
		Expect(r.stdout).NotTo(ContainSubstring("recorded in"))
		Expect(r.stderr).NotTo(ContainSubstring("--stale-versions"))
		Expect(conditionOwners(ctx, v1, key)).To(Equal(map[string][]string{
			"A": {"wa@v1"}, "B": {"legacy@v1"}, "C": {"wc@v1"},
		}))
	})
})
