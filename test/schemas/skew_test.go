package schemas

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conditions"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
)

// A writer built from an older CRD YAML keeps writing what its schema has,
// while another manager writes a field the CRD gained since: it types only
// the fields it owns and those it states.
var _ = Describe("a writer whose schema is older than the CRD", func() {
	It("keeps writing its condition beside a field its schema lacks, and is refused one it names", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		crd := installCopy(skewGroup.Group)
		old := crd.DeepCopy()
		gvk := skewGroup.WithKind("Sprocket")
		key := create(ctx, gvk, ns, "s1")
		stale := newWriter(fromYAML(old))
		spin := func(st metav1.ConditionStatus) func(*batcher.Batch, *unstructured.Unstructured) error {
			return func(b *batcher.Batch, obj *unstructured.Unstructured) error {
				return batcher.Status(b, obj, spinner, spinning(st))
			}
		}
		Expect(stale.reconcile(ctx, gvk, key, spin(metav1.ConditionTrue))).To(Succeed())

		By("the CRD gains status.gears and another manager sets a gear")
		gainGears(ctx, crd, gvk, key)

		By("the control: typing the whole object with the older schema refuses it")
		_, err := fromYAML(old).ObjectToTyped(get(ctx, gvk, key), typed.AllowDuplicates)
		Expect(err).To(MatchError(ContainSubstring("gears")))

		By("the older writer changes its condition; the gear stays, the other manager's; then it sends nothing")
		keepsSpinningBesideGear(ctx, &stale, gvk, key, spin(metav1.ConditionFalse))

		By("its intent naming the field its schema lacks is refused before any request")
		err = stale.reconcile(ctx, gvk, key, func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.Status(b, obj, spinner, func(ac, _ *unstructured.Unstructured) error { return putGear(ac, "a", 8) })
		})
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(err).To(MatchError(ContainSubstring("the intent does not match the schema of Sprocket")))
		Expect(stale.requests.Total()).To(BeZero(), "%s", stale.requests)
		Expect(gearNames(get(ctx, gvk, key))).To(Equal([]string{"b"}))
	})
})

// An Edit types what it changed and removed alone, as a Mutator types its
// intent: a field another manager set, which its schema lacks, is none of its
// business, and its own edit of such a field is refused before any request.
var _ = Describe("an Edit writer whose schema is older than the CRD", func() {
	It("keeps editing its condition beside a field its schema lacks, and is refused an edit of it", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		crd := installCopy(editSkewGroup.Group)
		old := crd.DeepCopy()
		gvk := editSkewGroup.WithKind("Sprocket")
		key := create(ctx, gvk, ns, "s1")
		stale := newWriter(fromYAML(old))
		spin := func(st metav1.ConditionStatus) func(*batcher.Batch, *unstructured.Unstructured) error {
			return func(b *batcher.Batch, obj *unstructured.Unstructured) error {
				return batcher.EditStatus(b, obj, spinner, conditions.EditUnstructured(metav1.Condition{
					Type: "Spinning", Status: st, Reason: "Motor", Message: "spinning is " + string(st)}))
			}
		}
		Expect(stale.reconcile(ctx, gvk, key, spin(metav1.ConditionTrue))).To(Succeed())

		By("the CRD gains status.gears and another manager sets a gear")
		gainGears(ctx, crd, gvk, key)

		By("the control: typing the whole edited object with the older schema refuses it")
		edited := get(ctx, gvk, key)
		conditions.Set(conditions.Unstructured(edited), metav1.Condition{
			Type: "Spinning", Status: metav1.ConditionFalse, Reason: "Motor", Message: "spinning is False"})
		_, err := fromYAML(old).ObjectToTyped(edited, typed.AllowDuplicates)
		Expect(err).To(MatchError(ContainSubstring("gears")))

		By("the older writer's Edit changes its condition; the gear stays, the other manager's; then it sends nothing")
		keepsSpinningBesideGear(ctx, &stale, gvk, key, spin(metav1.ConditionFalse))

		By("its Edit setting a gear is refused before any request")
		stale.requests.Reset()
		err = stale.reconcile(ctx, gvk, key, func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.EditStatus(b, obj, spinner, func(u *unstructured.Unstructured) error { return putGear(u, "a", 8) })
		})
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(err).To(MatchError(ContainSubstring("the edited object does not match the schema of")))
		Expect(stale.requests.Total()).To(BeZero(), "%s", stale.requests)

		By("and so is its Edit removing the gears")
		err = stale.reconcile(ctx, gvk, key, func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.EditStatus(b, obj, spinner, func(u *unstructured.Unstructured) error {
				unstructured.RemoveNestedField(u.Object, "status", "gears")
				return nil
			})
		})
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(err).To(MatchError(ContainSubstring("what the edit removes does not match the schema of")))
		Expect(stale.requests.Total()).To(BeZero(), "%s", stale.requests)
		obj := get(ctx, gvk, key)
		Expect(gearNames(obj)).To(Equal([]string{"b"}))
		Expect(conditionTypes(obj)).To(Equal(map[string]string{"Spinning": "False"}))
	})
})

// keepsSpinningBesideGear has stale set Spinning False through reconcile,
// with one apply that leaves the mesher's gear b and takes none of it, and
// then has it send nothing for the same reconcile.
func keepsSpinningBesideGear(ctx context.Context, stale *writer, gvk schema.GroupVersionKind, key client.ObjectKey,
	reconcile func(*batcher.Batch, *unstructured.Unstructured) error) {
	GinkgoHelper()
	stale.requests.Reset()
	Expect(stale.reconcile(ctx, gvk, key, reconcile)).To(Succeed())
	Expect(stale.requests.Count("apply")).To(Equal(1), "%s", stale.requests)
	obj := get(ctx, gvk, key)
	Expect(conditionTypes(obj)).To(Equal(map[string]string{"Spinning": "False"}))
	Expect(owns(obj, spinner, "Spinning")).To(BeTrue())
	Expect(gearNames(obj)).To(Equal([]string{"b"}))
	Expect(ownsGear(obj, mesher, "b")).To(BeTrue())
	Expect(ownsGear(obj, spinner, "b")).To(BeFalse())

	stale.requests.Reset()
	Expect(stale.reconcile(ctx, gvk, key, reconcile)).To(Succeed())
	Expect(stale.requests.Total()).To(BeZero(), "%s", stale.requests)
}

// gainGears adds status.gears to crd as installed and has the mesher set gear
// b on the object key once the API server serves the field.
func gainGears(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, gvk schema.GroupVersionKind, key client.ObjectKey) {
	Eventually(func() error {
		current := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), current); err != nil {
			return err
		}
		addGears(current)
		return env.Client.Update(ctx, current)
	}).Should(Succeed())
	Eventually(func(g Gomega) {
		gear := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"gears": []any{map[string]any{"name": "b", "size": int64(12)}}}}}
		gear.SetGroupVersionKind(gvk)
		gear.SetNamespace(key.Namespace)
		gear.SetName(key.Name)
		g.Expect(env.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(gear), client.FieldOwner(mesher))).To(Succeed())
		g.Expect(gearNames(get(ctx, gvk, key))).To(Equal([]string{"b"}))
	}).Should(Succeed())
}
