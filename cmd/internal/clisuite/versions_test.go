package clisuite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/cmd/internal/cli"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
)

// machineV1beta1 is the Machine's deprecated version, whose conditions are
// atomic.
var machineV1beta1 = schema.GroupVersionKind{Group: "cluster.test.statusapply.io", Version: "v1beta1", Kind: "Machine"}

// versionCondition is a condition as the writers of these specs set it: the
// same values each time, so that a writer restating another's condition
// shares it rather than conflicting.
func versionCondition(condType, status string) map[string]any {
	return map[string]any{"type": condType, "status": status, "reason": "Checked", "message": condType + " is " + status,
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
}

// mergePatchConditions sets conditions the legacy way, through the version
// of gvk: GET, set, JSON merge patch of /status as manager.
func mergePatchConditions(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey, manager string, conds ...map[string]any) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := env.Client.Get(ctx, key, u); err != nil {
		return err
	}
	base := u.DeepCopy()
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		i := slices.IndexFunc(list, func(item any) bool { return item.(map[string]any)["type"] == c["type"] })
		if i < 0 {
			list = append(list, c)
		} else {
			list[i] = c
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, list, "status", "conditions"); err != nil {
		return err
	}
	return env.Client.Status().Patch(ctx, u, client.MergeFrom(base), client.FieldOwner(manager))
}

// applyStatus applies status, through the version of gvk, as manager.
func applyStatus(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey, manager string, status map[string]any) error {
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	return env.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(manager))
}

// conditionsList is a status with the given conditions.
func conditionsList(conds ...map[string]any) map[string]any {
	list := make([]any, 0, len(conds))
	for _, c := range conds {
		list = append(list, c)
	}
	return map[string]any{"conditions": list}
}

// readObject reads an object of gvk.
func readObject(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) *unstructured.Unstructured {
	GinkgoHelper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	Expect(env.Client.Get(ctx, key, u)).To(Succeed())
	return u
}

// conditionOwners maps each condition type of the object to its owners,
// "manager@version", sorted; a whole atomic list's owner owns every type.
func conditionOwners(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) map[string][]string {
	GinkgoHelper()
	u := readObject(ctx, gvk, key)
	o, err := ownership.Inspect(u)
	Expect(err).NotTo(HaveOccurred())
	out := map[string][]string{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, item := range list {
		t := item.(map[string]any)["type"].(string)
		out[t] = []string{}
		for _, e := range o.Entries {
			if slices.Contains(e.ConditionTypes(), t) || o.OwnsWholeConditionsList(e) {
				out[t] = append(out[t], e.Manager+"@"+e.APIVersion[strings.Index(e.APIVersion, "/")+1:])
			}
		}
		slices.Sort(out[t])
	}
	return out
}

// runFresh is run with a discovery cache of its own, for specs whose CRDs
// change versions under the commands.
func runFresh(ctx context.Context, args ...string) result {
	GinkgoHelper()
	return runFreshThrough(ctx, kubeconfig, args...)
}

// runFreshThrough is runFresh with another kubeconfig file.
func runFreshThrough(ctx context.Context, kubeconfig string, args ...string) result {
	GinkgoHelper()
	return runTree(ctx, cli.NewRootCommand(), kubeconfig,
		append(slices.Clone(args), "--cache-dir", GinkgoT().TempDir())...)
}

// auditDoc is the part of the audit document these specs read.
type auditDoc struct {
	StaleVersions []struct {
		APIVersion string   `json:"apiVersion"`
		Reason     string   `json:"reason"`
		ApplyError string   `json:"applyError"`
		Managers   []string `json:"managers"`
	} `json:"staleVersions"`
	Verdict struct {
		MigrationNeeded bool              `json:"migrationNeeded"`
		Conditions      map[string]string `json:"conditions"`
		Flags           []string          `json:"flags"`
		Unresolved      []string          `json:"unresolved"`
		Notes           []string          `json:"notes"`
	} `json:"verdict"`
	MigrateCommand string `json:"migrateCommand"`
}

var _ = Describe("a legacy writer through a served version whose conditions are atomic", func() {
	const (
		legacy  = "machine-legacy"
		network = "machine-network"
	)
	var (
		ns  string
		key client.ObjectKey
	)

	// The sequence up to the migration: the legacy writer
	// merge-patches Ready and NetworkReady through v1beta1 (atomic), the
	// network writer applies NetworkReady, with the same values, through
	// v1beta2 (a map list).
	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		key = client.ObjectKey{Namespace: ns, Name: "m1"}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterName": "c1"}}}
		u.SetGroupVersionKind(machineGVK)
		u.SetNamespace(ns)
		u.SetName("m1")
		Expect(env.Client.Create(ctx, u)).To(Succeed())
		Expect(mergePatchConditions(ctx, machineV1beta1, key, legacy,
			versionCondition("Ready", "True"), versionCondition("NetworkReady", "True"))).To(Succeed())
		Expect(applyStatus(ctx, machineGVK, key, network, conditionsList(versionCondition("NetworkReady", "True")))).To(Succeed())
		Expect(conditionOwners(ctx, machineGVK, key)).To(Equal(map[string][]string{
			"Ready":        {legacy + "@v1beta1"},
			"NetworkReady": {legacy + "@v1beta1", network + "@v1beta2"},
		}))
	})

	// phaseThroughLibrary is the network writer setting only status.phase
	// with a Mutator through the library, which starts from what the
	// manager owns.
	phaseThroughLibrary := func(ctx context.Context) {
		GinkgoHelper()
		w := newMachineWriter(network, "NetworkReady")
		b := batcher.New(w.applier)
		Expect(batcher.Status(b, readObject(ctx, machineGVK, key), network, func(ac, _ *unstructured.Unstructured) error {
			return unstructured.SetNestedField(ac.Object, "Provisioned", "status", "phase")
		})).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
	}

	It("is shown by owners and audit, and migrate hands every condition of its list to its writer, who keeps them", func(ctx context.Context) {
		By("owners shows the legacy writer owning the whole list through v1beta1")
		r := run(ctx, "owners", "machine/m1", "-n", ns, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var owners struct {
			Items []struct {
				Managers []managerJSON `json:"managers"`
			} `json:"items"`
		}
		decode(r, &owners)
		Expect(owners.Items).To(HaveLen(1))
		i := slices.IndexFunc(owners.Items[0].Managers, func(m managerJSON) bool { return m.Manager == legacy })
		Expect(i).NotTo(BeNumerically("<", 0), "owners lists %s", legacy)
		Expect(owners.Items[0].Managers[i].WholeConditionsList).To(BeTrue())
		Expect(owners.Items[0].Managers[i].Legacy).To(BeTrue())
		r = run(ctx, "owners", "machine/m1", "-n", ns)
		Expect(lineWith(r.stdout, legacy, "(whole list)")).NotTo(BeEmpty(), "the table shows the whole list:\n%s", r.stdout)

		By("audit counts each condition of the list as the legacy writer's, and --exit-code fails")
		r = run(ctx, "audit", "machines", "-n", ns, "--exit-code", "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		var doc auditDoc
		decode(r, &doc)
		Expect(doc.Verdict.MigrationNeeded).To(BeTrue())
		Expect(doc.Verdict.Conditions).To(HaveKeyWithValue("NetworkReady", network))
		Expect(doc.Verdict.Unresolved).To(ContainElement(ContainSubstring("condition Ready")))

		By("the network writer cannot change NetworkReady: the legacy writer owns the atomic list")
		err := applyStatus(ctx, machineGVK, key, network, conditionsList(versionCondition("NetworkReady", "False")))
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring(legacy))

		By("migrate hands the list, item by item in v1beta2, to the network writer")
		r = run(ctx, "migrate", "machine/m1", "-n", ns, "--from", legacy+"="+network, "--apply", "--allow-active")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(conditionOwners(ctx, machineGVK, key)).To(Equal(map[string][]string{
			"Ready":        {network + "@v1beta2"},
			"NetworkReady": {network + "@v1beta2"},
		}))

		By("the network writer sets only the phase through the library: Ready and NetworkReady stay, owned")
		phaseThroughLibrary(ctx)
		Expect(machineConditions(ctx, ns, "m1")).To(Equal(map[string]string{"Ready": "True", "NetworkReady": "True"}))
		Expect(conditionOwners(ctx, machineGVK, key)).To(Equal(map[string][]string{
			"Ready":        {network + "@v1beta2"},
			"NetworkReady": {network + "@v1beta2"},
		}))
		phase, _, _ := unstructured.NestedString(readObject(ctx, machineGVK, key).Object, "status", "phase")
		Expect(phase).To(Equal("Provisioned"))

		By("and changes NetworkReady without a conflict")
		Expect(applyStatus(ctx, machineGVK, key, network, conditionsList(
			versionCondition("Ready", "True"), versionCondition("NetworkReady", "False")))).To(Succeed())
		Expect(machineConditions(ctx, ns, "m1")).To(Equal(map[string]string{"Ready": "True", "NetworkReady": "False"}))
	})

	It("without the translation, dropping the legacy entry (as a cleanup that drops entries does) loses Ready: the control", func(ctx context.Context) {
		By("migrate without the CRD's versions refuses rather than drop the entry")
		m, err := fleet.NewMigrator(env.Client, fleet.Plan{Managers: map[string]string{legacy: network}}, fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		_, err = m.Migrate(ctx, readObject(ctx, machineGVK, key))
		Expect(err).To(MatchError(fleet.ErrAPIVersionMismatch))
		Expect(conditionOwners(ctx, machineGVK, key)).To(HaveKeyWithValue("Ready", []string{legacy + "@v1beta1"}))

		By("dropping the legacy entry by hand leaves Ready without an owner")
		u := readObject(ctx, machineGVK, key)
		kept := slices.DeleteFunc(u.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool { return e.Manager == legacy })
		patch, err := json.Marshal([]map[string]any{
			{"op": "replace", "path": "/metadata/managedFields", "value": kept},
			{"op": "replace", "path": "/metadata/resourceVersion", "value": u.GetResourceVersion()},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, patch))).To(Succeed())
		Expect(conditionOwners(ctx, machineGVK, key)).To(HaveKeyWithValue("Ready", BeEmpty()))

		By("the network writer's next write loses Ready")
		Expect(applyStatus(ctx, machineGVK, key, network, map[string]any{"phase": "Provisioned"})).To(Succeed())
		Expect(machineConditions(ctx, ns, "m1")).NotTo(HaveKey("Ready"))
	})
})

// gadgetVersion is one version of the gadget CRD these specs change.
type gadgetVersion struct {
	name            string
	served, storage bool
}

// gadgetCRD is a CRD of kind Gadget in its own group, whose versions all
// have the same schema: conditions a map list keyed by type, and a phase.
func gadgetCRD(group string, versions ...gadgetVersion) *apiextensionsv1.CustomResourceDefinition {
	listType := "map"
	conditions := apiextensionsv1.JSONSchemaProps{
		Type: "array", XListType: &listType, XListMapKeys: []string{"type"},
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Required: []string{"type", "status"},
			Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"type": {Type: "string"}, "status": {Type: "string"}, "reason": {Type: "string"},
				"message": {Type: "string"}, "lastTransitionTime": {Type: "string", Format: "date-time"},
				"observedGeneration": {Type: "integer", Format: "int64"},
			},
		}},
	}
	schemaProps := &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
			"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
			"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"phase": {Type: "string"}, "conditions": conditions,
			}},
		},
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", ListKind: "GadgetList", Plural: "gadgets", Singular: "gadget"},
		},
	}
	crd.Spec.Versions = gadgetVersions(schemaProps, versions...)
	return crd
}

// gadgetVersions builds the CRD versions, each with schema s.
func gadgetVersions(s *apiextensionsv1.JSONSchemaProps, versions ...gadgetVersion) []apiextensionsv1.CustomResourceDefinitionVersion {
	var out []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range versions {
		out = append(out, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v.name, Served: v.served, Storage: v.storage,
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: s.DeepCopy()},
		})
	}
	return out
}

// installGadgets installs a gadget CRD in a group of the spec's own and
// waits until it is established; it is removed after the spec.
func installGadgets(ctx context.Context, ns string, versions ...gadgetVersion) *apiextensionsv1.CustomResourceDefinition {
	GinkgoHelper()
	crd := gadgetCRD(ns+".versions.test.statusapply.io", versions...)
	Expect(env.Client.Create(ctx, crd)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(env.Client.Delete(ctx, crd))).To(Succeed())
	})
	waitEstablished(ctx, crd)
	return crd
}

// waitEstablished waits until the CRD's current versions are served.
func waitEstablished(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cur := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), cur)).To(Succeed())
		established := false
		for _, c := range cur.Status.Conditions {
			established = established || c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		}
		g.Expect(established).To(BeTrue())
		for _, v := range cur.Spec.Versions {
			if !v.Served {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: cur.Spec.Group, Version: v.Name, Kind: "GadgetList"})
			g.Expect(env.Client.List(ctx, list, client.InNamespace("default"))).To(Succeed())
		}
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// gadgetGVK is the kind Gadget of crd in version.
func gadgetGVK(crd *apiextensionsv1.CustomResourceDefinition, version string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: "Gadget"}
}

// createGadget creates gadget name through version.
func createGadget(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version, ns, name string) client.ObjectKey {
	GinkgoHelper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
	u.SetGroupVersionKind(gadgetGVK(crd, version))
	u.SetNamespace(ns)
	u.SetName(name)
	Expect(env.Client.Create(ctx, u)).To(Succeed())
	return client.ObjectKeyFromObject(u)
}

// gadgetConditions returns the gadget's conditions as type -> status.
func gadgetConditions(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version string, key client.ObjectKey) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	list, _, _ := unstructured.NestedSlice(readObject(ctx, gadgetGVK(crd, version), key).Object, "status", "conditions")
	for _, item := range list {
		m := item.(map[string]any)
		out[m["type"].(string)] = m["status"].(string)
	}
	return out
}

// moveStorage makes version the only stored version of crd: it becomes the
// storage version, every object is rewritten in it (what a storage version
// migration does), and the CRD's storedVersions say so.
func moveStorage(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version string) {
	GinkgoHelper()
	cur := &apiextensionsv1.CustomResourceDefinition{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), cur)).To(Succeed())
	for i := range cur.Spec.Versions {
		cur.Spec.Versions[i].Storage = cur.Spec.Versions[i].Name == version
	}
	Expect(env.Client.Update(ctx, cur)).To(Succeed())
	waitEstablished(ctx, cur)
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: "GadgetList"})
	Expect(env.Client.List(ctx, list)).To(Succeed())
	for i := range list.Items {
		Expect(env.Client.Update(ctx, &list.Items[i])).To(Succeed())
	}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), cur)).To(Succeed())
	cur.Status.StoredVersions = []string{version}
	Expect(env.Client.Status().Update(ctx, cur)).To(Succeed())
}

// removeVersion removes version from crd's versions.
func removeVersion(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version string) {
	GinkgoHelper()
	cur := &apiextensionsv1.CustomResourceDefinition{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), cur)).To(Succeed())
	cur.Spec.Versions = slices.DeleteFunc(cur.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		return v.Name == version
	})
	Expect(env.Client.Update(ctx, cur)).To(Succeed())
	waitEstablished(ctx, cur)
}

var _ = Describe("writers through several versions of a CRD", func() {
	It("audit proposes a condition move across versions with the same paths, and migrate accepts it", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		crd := installGadgets(ctx, ns, gadgetVersion{"v1beta1", true, false}, gadgetVersion{"v1", true, true})
		v1beta1, v1 := gadgetGVK(crd, "v1beta1"), gadgetGVK(crd, "v1")
		key := createGadget(ctx, crd, "v1", ns, "g1")
		Expect(mergePatchConditions(ctx, v1beta1, key, "legacy",
			versionCondition("A", "True"), versionCondition("B", "True"))).To(Succeed())
		Expect(applyStatus(ctx, v1, key, "wb", conditionsList(versionCondition("B", "True")))).To(Succeed())
		Expect(conditionOwners(ctx, v1, key)).To(Equal(map[string][]string{
			"A": {"legacy@v1beta1"}, "B": {"legacy@v1beta1", "wb@v1"},
		}))

		By("the audit proposes B for wb, noting the move across versions")
		resource := "gadgets." + crd.Spec.Group
		r := runFresh(ctx, "audit", resource, "-n", ns, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var doc auditDoc
		decode(r, &doc)
		Expect(doc.Verdict.Conditions).To(HaveKeyWithValue("B", "wb"))
		Expect(doc.Verdict.Notes).To(ContainElement(ContainSubstring("where it has the same paths")))
		Expect(doc.MigrateCommand).NotTo(BeEmpty())

		By("the control: the same plan without the CRD's versions is refused")
		m, err := fleet.NewMigrator(env.Client, doc.verdictPlan(), fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())
		_, err = m.Migrate(ctx, readObject(ctx, v1, key))
		Expect(err).To(MatchError(fleet.ErrAPIVersionMismatch))

		By("migrate runs the proposed command")
		args := append([]string{"migrate", resource, "-n", ns}, doc.Verdict.Flags...)
		r = runFresh(ctx, append(args, "--apply", "--allow-active")...)
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
		// B was translated to v1 as it moved; the legacy writer keeps A in
		// the version it writes through.
		Expect(conditionOwners(ctx, v1, key)).To(Equal(map[string][]string{
			"A": {"legacy@v1beta1"}, "B": {"wb@v1"},
		}))

		By("wb now changes B alone, through v1")
		Expect(applyStatus(ctx, v1, key, "wb", conditionsList(versionCondition("B", "False")))).To(Succeed())
		Expect(gadgetConditions(ctx, crd, "v1", key)).To(Equal(map[string]string{"A": "True", "B": "False"}))

		By("the legacy writer's next merge patch through v1beta1 keeps A its own")
		Expect(mergePatchConditions(ctx, v1beta1, key, "legacy", versionCondition("A", "False"))).To(Succeed())
		Expect(conditionOwners(ctx, v1, key)).To(Equal(map[string][]string{
			"A": {"legacy@v1beta1"}, "B": {"wb@v1"},
		}))
		Expect(gadgetConditions(ctx, crd, "v1", key)).To(Equal(map[string]string{"A": "False", "B": "False"}))
	})

	It("after a version is removed, audit flags its entries and migrate --stale-versions makes applies work again, keeping every owner", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		crd := installGadgets(ctx, ns, gadgetVersion{"v1beta1", true, true}, gadgetVersion{"v1", true, false})
		v1beta1, v1 := gadgetGVK(crd, "v1beta1"), gadgetGVK(crd, "v1")
		key := createGadget(ctx, crd, "v1beta1", ns, "g1")
		Expect(applyStatus(ctx, v1beta1, key, "wa", conditionsList(versionCondition("A", "True")))).To(Succeed())
		Expect(mergePatchConditions(ctx, v1beta1, key, "legacy", versionCondition("B", "True"))).To(Succeed())
		Expect(applyStatus(ctx, v1, key, "wc", conditionsList(versionCondition("C", "True")))).To(Succeed())

		moveStorage(ctx, crd, "v1")
		removeVersion(ctx, crd, "v1beta1")

		By("every apply fails; a merge patch still works (the control)")
		err := applyStatus(ctx, v1, key, "wc", conditionsList(versionCondition("C", "False")))
		Expect(err).To(MatchError(ContainSubstring(fleet.ApplyError)))
		err = applyStatus(ctx, v1, key, "wa", conditionsList(versionCondition("A", "False")))
		Expect(err).To(MatchError(ContainSubstring(fleet.ApplyError)))
		Expect(mergePatchConditions(ctx, v1, key, "legacy", versionCondition("B", "True"))).To(Succeed())

		By("audit flags the removed version, and --exit-code fails")
		resource := "gadgets." + crd.Spec.Group
		r := runFresh(ctx, "audit", resource, "-n", ns, "--exit-code", "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		var doc auditDoc
		decode(r, &doc)
		Expect(doc.StaleVersions).To(HaveLen(1))
		Expect(doc.StaleVersions[0].APIVersion).To(Equal(crd.Spec.Group + "/v1beta1"))
		Expect(doc.StaleVersions[0].Reason).To(Equal(fleet.StaleRemoved))
		Expect(doc.StaleVersions[0].ApplyError).To(Equal(fleet.ApplyError))
		Expect(doc.StaleVersions[0].Managers).To(ContainElements("wa", "legacy"))
		Expect(doc.Verdict.Flags).To(ContainElement("--stale-versions"))
		r = runFresh(ctx, "audit", resource, "-n", ns)
		Expect(r.stderr).To(ContainSubstring("stale version: " + crd.Spec.Group + "/v1beta1 (removed)"))
		Expect(r.stderr).To(ContainSubstring(fleet.ApplyError))

		By("a dry run writes nothing")
		before := readObject(ctx, v1, key).GetManagedFields()
		r = runFresh(ctx, "migrate", resource, "-n", ns, "--stale-versions")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(readObject(ctx, v1, key).GetManagedFields()).To(Equal(before))

		By("a user who may read the gadgets but not patch them: the dry run fails, --apply refuses to start")
		reader := "stale-reader-" + ns
		asReader := userKubeconfig(reader)
		grantUser(ctx, reader, ns, rbacv1.PolicyRule{APIGroups: []string{crd.Spec.Group}, Resources: []string{"gadgets"},
			Verbs: []string{"get", "list"}})
		grantUser(ctx, reader, "", rbacv1.PolicyRule{APIGroups: []string{apiextensionsv1.GroupName},
			Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get"}})
		missing := fmt.Sprintf("the user may not patch %s in namespace %s (objects there would change)", resource, ns)
		r = runFreshThrough(ctx, asReader, "migrate", resource, "-n", ns, "--stale-versions")
		Expect(r.err).To(MatchError("--apply would be refused: " + missing))
		r = runFreshThrough(ctx, asReader, "migrate", resource, "-n", ns, "--stale-versions", "--apply")
		Expect(r.err).To(MatchError("not migrating, nothing was written: " + missing))
		Expect(readObject(ctx, v1, key).GetManagedFields()).To(Equal(before))

		By("migrate --stale-versions --apply rewrites the entries to v1 (the control: the suite's user may patch)")
		r = runFresh(ctx, "migrate", resource, "-n", ns, "--stale-versions", "--apply")
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
		Expect(conditionOwners(ctx, v1, key)).To(Equal(map[string][]string{
			"A": {"wa@v1"}, "B": {"legacy@v1"}, "C": {"wc@v1"},
		}))

		By("every writer applies again, owning what it owned")
		Expect(applyStatus(ctx, v1, key, "wc", conditionsList(versionCondition("C", "False")))).To(Succeed())
		Expect(applyStatus(ctx, v1, key, "wa", conditionsList(versionCondition("A", "False")))).To(Succeed())
		Expect(gadgetConditions(ctx, crd, "v1", key)).To(Equal(map[string]string{"A": "False", "B": "True", "C": "False"}))
		r = runFresh(ctx, "audit", resource, "-n", ns, "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		doc = auditDoc{}
		decode(r, &doc)
		Expect(doc.StaleVersions).To(BeEmpty())
	})
})

// verdictPlan is the verdict's plan, as migrate parses its flags.
func (d auditDoc) verdictPlan() fleet.Plan {
	GinkgoHelper()
	p := fleet.Plan{Conditions: map[string]string{}, Managers: map[string]string{}}
	for i := 0; i < len(d.Verdict.Flags); i++ {
		switch d.Verdict.Flags[i] {
		case "--condition", "--from":
			k, v, _ := strings.Cut(d.Verdict.Flags[i+1], "=")
			if d.Verdict.Flags[i] == "--condition" {
				p.Conditions[k] = v
			} else {
				p.Managers[k] = v
			}
			i++
		case "--release-shared":
			p.ReleaseShared = true
		}
	}
	return p
}

var _ = Describe("fields held by before-first-apply after managedFields were cleared, writers in two versions", func() {
	It("audit proposes handing them back to their writers, and migrate does, so that removals take effect", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		crd := installGadgets(ctx, ns, gadgetVersion{"v1beta1", true, false}, gadgetVersion{"v1", true, true})
		v1beta1, v1 := gadgetGVK(crd, "v1beta1"), gadgetGVK(crd, "v1")
		resource := "gadgets." + crd.Spec.Group
		key := createGadget(ctx, crd, "v1", ns, "g1")
		Expect(applyStatus(ctx, v1, key, "mutator", conditionsList(versionCondition("A", "True")))).To(Succeed())
		Expect(applyStatus(ctx, v1beta1, key, "edit", conditionsList(versionCondition("B", "True")))).To(Succeed())

		By("managedFields are cleared; the mutator applies again and co-owns A with before-first-apply, the edit sends nothing")
		u := readObject(ctx, v1, key)
		Expect(env.Client.Patch(ctx, u, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)))).To(Succeed())
		Expect(applyStatus(ctx, v1, key, "mutator", conditionsList(versionCondition("A", "True")))).To(Succeed())
		owners := conditionOwners(ctx, v1, key)
		Expect(owners["A"]).To(ContainElements(HavePrefix("mutator@"), HavePrefix(ownership.BeforeFirstApplyManager+"@")))
		Expect(owners["B"]).To(ConsistOf(HavePrefix(ownership.BeforeFirstApplyManager + "@")))

		By("the audit finds before-first-apply, and --exit-code fails")
		r := runFresh(ctx, "audit", resource, "-n", ns, "--exit-code", "--writer", "edit=B", "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		var doc auditDoc
		decode(r, &doc)
		Expect(doc.Verdict.Conditions).To(Equal(map[string]string{"A": "mutator", "B": "edit"}))
		Expect(doc.Verdict.Flags).To(ContainElement("--release-shared"))

		By("the control: before the migration, the mutator's removal of A does not take effect")
		Expect(applyStatus(ctx, v1, key, "mutator", map[string]any{"phase": "Running"})).To(Succeed())
		Expect(gadgetConditions(ctx, crd, "v1", key)).To(HaveKey("A"))
		Expect(applyStatus(ctx, v1, key, "mutator", conditionsList(versionCondition("A", "True")))).To(Succeed())

		By("migrate runs the audit's command")
		r = runFresh(ctx, append(append([]string{"migrate", resource, "-n", ns}, doc.Verdict.Flags...),
			"--new-destination", "edit", "--apply")...)
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
		owners = conditionOwners(ctx, v1, key)
		Expect(owners["A"]).To(Equal([]string{"mutator@v1"}))
		Expect(owners["B"]).To(ConsistOf(HavePrefix("edit@")))

		By("each writer's removal and change now take effect, through its own version")
		Expect(applyStatus(ctx, v1beta1, key, "edit", conditionsList(versionCondition("B", "False")))).To(Succeed())
		Expect(applyStatus(ctx, v1, key, "mutator", map[string]any{"phase": "Running"})).To(Succeed())
		Expect(gadgetConditions(ctx, crd, "v1", key)).To(Equal(map[string]string{"B": "False"}))
		r = runFresh(ctx, "audit", resource, "-n", ns, "--exit-code")
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
	})
})
