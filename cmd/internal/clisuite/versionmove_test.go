package clisuite

import (
	"context"
	"fmt"
	"maps"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/cmd/internal/cli"
	statusconditions "github.com/statusapply/statusapply/conditions"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/schemas/crdschema"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
)

// gadgetWriters are the three kinds of status writer of the version move,
// each writing its own condition on every gadget, through the version it
// is set to: a Mutator through the library, an Edit through the library, and
// a legacy merge-patch writer. write is one round; each round flips the
// conditions' status, so every round changes every object.
type gadgetWriters struct {
	crd     *apiextensionsv1.CustomResourceDefinition
	keys    []client.ObjectKey
	applier *ssa.Applier
	schemas *crdschema.CRDs
	// version is what each writer writes through, by manager.
	version map[string]string
	round   int
	// legacyApplies says the legacy writer has moved to server-side apply
	// under its own name.
	legacyApplies bool
	// failed counts the writes that failed, by manager; lastErr keeps
	// the last error of each.
	failed  map[string]int
	lastErr map[string]error
}

// The writers' managers, and the condition each writes.
const (
	mutatorWriter = "gadget-mutator"
	editWriter    = "gadget-edit"
	legacyWriter  = "gadget-legacy"
)

var writerCondition = map[string]string{mutatorWriter: "Mutated", editWriter: "Edited", legacyWriter: "Patched"}

func newGadgetWriters(crd *apiextensionsv1.CustomResourceDefinition, keys []client.ObjectKey, version string) *gadgetWriters {
	GinkgoHelper()
	tc, err := crdschema.FromCRDs(crd)
	Expect(err).NotTo(HaveOccurred())
	a, err := ssa.NewApplier(env.Client, ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))
	Expect(err).NotTo(HaveOccurred())
	return &gadgetWriters{
		crd: crd, keys: keys, applier: a, schemas: tc,
		version: map[string]string{mutatorWriter: version, editWriter: version, legacyWriter: version},
		failed:  map[string]int{}, lastErr: map[string]error{},
	}
}

// crdChanged gives the writers' Applier the CRD as it is now, as a watch on
// CustomResourceDefinitions would.
func (w *gadgetWriters) crdChanged(ctx context.Context) {
	GinkgoHelper()
	cur := &apiextensionsv1.CustomResourceDefinition{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(w.crd), cur)).To(Succeed())
	Expect(w.schemas.Set(cur)).To(Succeed())
}

// status is the condition status of the current round.
func (w *gadgetWriters) status() metav1.ConditionStatus {
	if w.round%2 == 0 {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// condition is manager's condition of the current round.
func (w *gadgetWriters) condition(manager string) metav1.Condition {
	return metav1.Condition{Type: writerCondition[manager], Status: w.status(), Reason: "Round",
		Message: fmt.Sprintf("round %d", w.round)}
}

// write runs rounds: every writer writes its condition on every gadget.
func (w *gadgetWriters) write(ctx context.Context, rounds int) {
	for range rounds {
		w.round++
		for _, key := range w.keys {
			for _, manager := range []string{mutatorWriter, editWriter, legacyWriter} {
				if err := w.writeOne(ctx, manager, key); err != nil {
					w.failed[manager]++
					w.lastErr[manager] = err
				}
			}
		}
	}
}

// writeOne is one write of manager to key, through its version.
func (w *gadgetWriters) writeOne(ctx context.Context, manager string, key client.ObjectKey) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gadgetGVK(w.crd, w.version[manager]))
	if err := env.Client.Get(ctx, key, obj); err != nil {
		return err
	}
	cond := w.condition(manager)
	switch manager {
	case mutatorWriter:
		b := batcher.New(w.applier)
		err := batcher.Status(b, obj, manager, func(ac, _ *unstructured.Unstructured) error {
			c := statusconditions.Unstructured(ac)
			statusconditions.Set(c, cond)
			return c.Err()
		})
		if err != nil {
			return err
		}
		return b.Flush(ctx)
	case editWriter:
		b := batcher.New(w.applier)
		if err := statusconditions.StatusUnstructured(b, obj, manager, cond); err != nil {
			return err
		}
		return b.Flush(ctx)
	case legacyWriter:
		if w.legacyApplies {
			return applyStatus(ctx, obj.GroupVersionKind(), key, manager, conditionsList(map[string]any{
				"type": cond.Type, "status": string(cond.Status), "reason": cond.Reason, "message": cond.Message,
				"lastTransitionTime": "2026-01-02T03:04:05Z",
			}))
		}
		fallthrough
	default:
		base := obj.DeepCopy()
		c := statusconditions.Unstructured(obj)
		statusconditions.Set(c, cond)
		if err := c.Err(); err != nil {
			return err
		}
		return env.Client.Status().Patch(ctx, obj, client.MergeFrom(base), client.FieldOwner(manager))
	}
}

// failures returns the failed writes by manager and resets the count.
func (w *gadgetWriters) failures() map[string]int {
	out := maps.Clone(w.failed)
	clear(w.failed)
	return out
}

// expectConditions checks that every gadget carries every writer's
// condition with the current round's status.
func (w *gadgetWriters) expectConditions(ctx context.Context) {
	GinkgoHelper()
	want := map[string]string{}
	for _, t := range writerCondition {
		want[t] = string(w.status())
	}
	for _, key := range w.keys {
		Expect(gadgetConditions(ctx, w.crd, "v1", key)).To(Equal(want), "conditions of %s", key.Name)
	}
}

// setServed sets whether crd serves version.
func setServed(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version string, served bool) {
	GinkgoHelper()
	cur := &apiextensionsv1.CustomResourceDefinition{}
	Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), cur)).To(Succeed())
	for i := range cur.Spec.Versions {
		if cur.Spec.Versions[i].Name == version {
			cur.Spec.Versions[i].Served = served
		}
	}
	Expect(env.Client.Update(ctx, cur)).To(Succeed())
	waitEstablished(ctx, cur)
}

var _ = Describe("moving a CRD from v1beta1 to v1 while its status writers keep writing", func() {
	var (
		ns       string
		crd      *apiextensionsv1.CustomResourceDefinition
		writers  *gadgetWriters
		resource string
	)

	// Up to the cleanup: v1beta1 is the storage version and every writer
	// writes through it; v1 is added; the Mutator writer moves to v1; v1
	// becomes the storage version and every object is rewritten in it; all
	// writers move to v1, and v1beta1 stops being served.
	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		crd = installGadgets(ctx, ns, gadgetVersion{"v1beta1", true, true})
		resource = "gadgets." + crd.Spec.Group
		var keys []client.ObjectKey
		for i := range 3 {
			keys = append(keys, createGadget(ctx, crd, "v1beta1", ns, fmt.Sprintf("g%d", i)))
		}
		writers = newGadgetWriters(crd, keys, "v1beta1")
		writers.write(ctx, 2)
		Expect(writers.failures()).To(BeEmpty(), "errors: %v", writers.lastErr)

		By("v1 is added beside v1beta1, and the Mutator writer moves to it")
		cur := &apiextensionsv1.CustomResourceDefinition{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), cur)).To(Succeed())
		both := gadgetCRD(crd.Spec.Group, gadgetVersion{"v1beta1", true, true}, gadgetVersion{"v1", true, false})
		cur.Spec.Versions = both.Spec.Versions
		Expect(env.Client.Update(ctx, cur)).To(Succeed())
		waitEstablished(ctx, cur)
		writers.crdChanged(ctx)
		writers.version[mutatorWriter] = "v1"
		writers.write(ctx, 2)
		Expect(writers.failures()).To(BeEmpty(), "errors: %v", writers.lastErr)

		By("v1 becomes the storage version; storage migration rewrites every object")
		moveStorage(ctx, crd, "v1")
		writers.crdChanged(ctx)
		writers.write(ctx, 1)
		Expect(writers.failures()).To(BeEmpty(), "errors: %v", writers.lastErr)

		By("every writer moves to v1, and v1beta1 is no longer served")
		writers.version[editWriter], writers.version[legacyWriter] = "v1", "v1"
		writers.write(ctx, 1)
		setServed(ctx, crd, "v1beta1", false)
		writers.crdChanged(ctx)
		writers.write(ctx, 2)
		Expect(writers.failures()).To(BeEmpty(), "errors: %v", writers.lastErr)
		writers.expectConditions(ctx)
	})

	It("rewrites the stale entries, removes v1beta1 and loses nothing: 0 conditions lost, 0 failed writes, audit clean", func(ctx context.Context) {
		By("audit flags the entries still recorded in v1beta1")
		r := runFresh(ctx, "audit", resource, "-n", ns, "--exit-code", "-o", "json")
		Expect(cli.ExitCode(r.err)).To(Equal(1))
		var doc auditDoc
		decode(r, &doc)
		Expect(doc.StaleVersions).To(HaveLen(1))
		Expect(doc.StaleVersions[0].Reason).To(Equal(fleet.StaleNotServed))
		Expect(doc.Verdict.Flags).To(ContainElement("--stale-versions"))

		By("migrate --stale-versions rewrites them to v1, then v1beta1 is removed")
		r = runFresh(ctx, "migrate", resource, "-n", ns, "--stale-versions", "--apply")
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
		for _, key := range writers.keys {
			for _, e := range readObject(ctx, gadgetGVK(crd, "v1"), key).GetManagedFields() {
				Expect(e.APIVersion).To(Equal(crd.Spec.Group+"/v1"), "%s of %s", e.Manager, key.Name)
			}
		}
		removeVersion(ctx, crd, "v1beta1")
		writers.crdChanged(ctx)

		By("every writer keeps writing: 0 failed writes, 0 conditions lost")
		writers.write(ctx, 3)
		Expect(writers.failures()).To(BeEmpty(), "errors: %v", writers.lastErr)
		writers.expectConditions(ctx)

		By("the legacy writer moves to apply under its name: audit proposes the move, migrate carries it out")
		r = runFresh(ctx, "audit", resource, "-n", ns, "--writer", legacyWriter+"="+writerCondition[legacyWriter], "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		doc = auditDoc{}
		decode(r, &doc)
		Expect(doc.StaleVersions).To(BeEmpty())
		Expect(doc.Verdict.Flags).To(Equal([]string{"--from", legacyWriter + "=" + legacyWriter, "--new-destination", legacyWriter}),
			"unresolved: %v", doc.Verdict.Unresolved)
		// The legacy writer wrote moments ago and is switching to apply now.
		r = runFresh(ctx, append(append([]string{"migrate", resource, "-n", ns}, doc.Verdict.Flags...),
			"--apply", "--allow-active")...)
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
		writers.legacyApplies = true
		writers.write(ctx, 2)
		Expect(writers.failures()).To(BeEmpty(), "errors: %v", writers.lastErr)
		writers.expectConditions(ctx)

		By("the audit finds nothing left")
		r = runFresh(ctx, "audit", resource, "-n", ns, "--exit-code")
		Expect(r.err).NotTo(HaveOccurred(), "exit code %d", cli.ExitCode(r.err))
	})

	It("without the cleanup, removing v1beta1 makes every apply fail (the control)", func(ctx context.Context) {
		removeVersion(ctx, crd, "v1beta1")
		writers.crdChanged(ctx)
		writers.write(ctx, 2)
		failed := writers.failures()
		Expect(failed[mutatorWriter]).To(Equal(2*len(writers.keys)), "every Mutator write fails")
		Expect(failed[editWriter]).To(Equal(2*len(writers.keys)), "every Edit write fails")
		Expect(failed).NotTo(HaveKey(legacyWriter), "merge patches still work")
		Expect(writers.lastErr[mutatorWriter]).To(MatchError(ContainSubstring(fleet.ApplyError)))
		Expect(writers.lastErr[editWriter]).To(MatchError(ContainSubstring(fleet.ApplyError)))
	})
})
