package integration

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// A status function is ordinary Go: one that restates what it owns by handing
// the observed object's map to its apply configuration, and a later one that
// adds a key with the generated With builder (which writes into the map it
// finds), must write what the same functions write with fresh values, and the
// Applier must never write into, or remember, an object its caller holds.
// Applier.Apply is driven directly: it gets the caller's object itself, where
// a batch would hand the functions a copy. The control keeps the apply
// configuration a reconcile built for the next one, as a memory that reuses
// what it built would: the second reconcile's With builder writes into the
// first reconcile's observed object, and an edit the caller makes to its own
// object later is taken for what the manager owns, so an apply that adds the
// same key is skipped and never reaches the API server.
var _ = Describe("a status function that puts the observed object's maps into its apply configuration", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	It("writes what fresh values write, and nothing into the caller's objects", func(ctx context.Context) {
		a, _ := newApplierCounted()
		apply := func(key client.ObjectKey, o *v1alpha1.Widget, m widgets.Mutator) bool {
			GinkgoHelper()
			t, err := a.TargetFor(o, ssa.StatusSubresource, "attributes")
			Expect(err).NotTo(HaveOccurred())
			res, err := a.Apply(ctx, t, o, typedBuild(m))
			Expect(err).NotTo(HaveOccurred())
			return res.Sent
		}
		shared := client.ObjectKeyFromObject(createWidget(ctx, ns, "shares-maps"))
		fresh := client.ObjectKeyFromObject(createWidget(ctx, ns, "copies-maps"))
		for _, key := range []client.ObjectKey{shared, fresh} {
			Expect(apply(key, getWidget(ctx, key), addAttribute("a", "1"))).To(BeTrue())
		}
		for round := range 3 {
			for _, key := range []client.ObjectKey{shared, fresh} {
				restate := keepAttributes
				if key == fresh {
					restate = keepAttributesFresh
				}
				first := getWidget(ctx, key)
				before := first.DeepCopy()
				Expect(apply(key, first, restate)).To(BeFalse(), "restating what it owns sends nothing")

				By("another writer moves the object on; the next reconcile adds a key")
				forceCondition(ctx, key, "other", "Other", metav1.ConditionStatus([]string{"True", "False"}[round%2]))
				Expect(apply(key, getWidget(ctx, key), addAttribute(fmt.Sprintf("k%d", round), "v"))).To(BeTrue())
				Expect(first).To(Equal(before), "the first reconcile's observed object was written into (round %d, %s)", round, key.Name)

				By("a reconcile that restates the map and changes the phase is sent; then the caller edits its own object")
				third := getWidget(ctx, key)
				Expect(apply(key, third, both(restate, setPhase(fmt.Sprintf("round-%d", round))))).To(BeTrue())
				third.Status.Attributes[fmt.Sprintf("local%d", round)] = "x"
				Expect(apply(key, getWidget(ctx, key), addAttribute(fmt.Sprintf("local%d", round), "x"))).To(BeTrue(),
					"an attribute the caller set on its own object was taken for one the manager owns")
			}
			Expect(getWidget(ctx, shared).Status.Attributes).To(Equal(getWidget(ctx, fresh).Status.Attributes))
		}
		Expect(getWidget(ctx, shared).Status.Attributes).To(HaveLen(7))
		Expect(ownsAttribute(getWidget(ctx, shared), "attributes", "local2")).To(BeTrue())
	})

	It("control: an apply configuration kept from one reconcile for the next writes into the caller's objects", func(ctx context.Context) {
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "kept-ac"))
		mem := &reusingMemory{key: key}
		Expect(mem.apply(ctx, getWidget(ctx, key), addAttribute("a", "1"))).To(BeTrue())

		first := getWidget(ctx, key)
		before := first.DeepCopy()
		Expect(mem.apply(ctx, first, keepAttributes)).To(BeFalse())
		forceCondition(ctx, key, "other", "Other", metav1.ConditionTrue)
		Expect(mem.apply(ctx, getWidget(ctx, key), addAttribute("k0", "v"))).To(BeTrue())
		Expect(first).NotTo(Equal(before), "the control no longer writes into the object it shares maps with")
		Expect(first.Status.Attributes).To(HaveKey("k0"))

		third := getWidget(ctx, key)
		Expect(mem.apply(ctx, third, both(keepAttributes, setPhase("round-0")))).To(BeTrue())
		third.Status.Attributes["local0"] = "x"
		Expect(mem.apply(ctx, getWidget(ctx, key), addAttribute("local0", "x"))).To(BeFalse(),
			"the control sent the attribute the caller set on its own object")
		Expect(getWidget(ctx, key).Status.Attributes).NotTo(HaveKey("local0"))
	})
})

func withAttributesStatus(ac *acv1alpha1.WidgetApplyConfiguration) {
	if ac.Status == nil {
		ac.WithStatus(acv1alpha1.WidgetStatus())
	}
}

// keepAttributes restates the attributes the manager owns by handing over
// the observed object's map; keepAttributesFresh copies it.
func keepAttributes(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
	withAttributesStatus(ac)
	ac.Status.Attributes = o.Status.Attributes
	return nil
}

func keepAttributesFresh(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
	withAttributesStatus(ac)
	ac.Status.Attributes = maps.Clone(o.Status.Attributes)
	return nil
}

func addAttribute(k, v string) widgets.Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		withAttributesStatus(ac)
		ac.Status.WithAttributes(map[string]string{k: v})
		return nil
	}
}

func setPhase(phase string) widgets.Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		withAttributesStatus(ac)
		ac.Status.WithPhase(phase)
		return nil
	}
}

func both(ms ...widgets.Mutator) widgets.Mutator {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
		for _, m := range ms {
			if err := m(ac, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// typedBuild is the build of one Widget status function, as a batch makes
// it: typed, with the unstructured form a guarded or yielding apply needs.
func typedBuild(m widgets.Mutator) ssa.Build {
	return ssa.Build{
		Func: func(intent *unstructured.Unstructured, observed client.Object) (ssa.Built, error) {
			ac := &acv1alpha1.WidgetApplyConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(intent.Object, ac); err != nil {
				return ssa.Built{}, err
			}
			if err := m(ac, observed.(*v1alpha1.Widget)); err != nil {
				return ssa.Built{}, err
			}
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ac)
			intent.Object = content
			return ssa.Built{}, err
		},
		Typed: &ssa.TypedBuild{Type: reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration](), Mutate: func(ac any, observed client.Object) (ssa.Built, error) {
			return ssa.Built{}, m(ac.(*acv1alpha1.WidgetApplyConfiguration), observed.(*v1alpha1.Widget))
		}},
	}
}

// reusingMemory is the control's writer: it keeps the apply configuration it
// last built, or last sent, and builds the next one on it, skipping an apply
// whose result equals what it kept.
type reusingMemory struct {
	key  client.ObjectKey
	kept *acv1alpha1.WidgetApplyConfiguration
}

func (r *reusingMemory) apply(ctx context.Context, o *v1alpha1.Widget, m widgets.Mutator) bool {
	GinkgoHelper()
	if r.kept == nil {
		r.kept = acv1alpha1.Widget(r.key.Name, r.key.Namespace)
	}
	before, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.kept)
	Expect(err).NotTo(HaveOccurred())
	Expect(m(r.kept, o)).To(Succeed())
	after, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r.kept)
	Expect(err).NotTo(HaveOccurred())
	if equality.Semantic.DeepEqual(before, after) {
		return false
	}
	Expect(env.Client.Status().Apply(ctx, r.kept, client.FieldOwner("attributes"))).To(Succeed())
	r.kept.ResourceVersion, r.kept.UID = nil, nil // the response's, decoded into it
	return true
}

// ownsAttribute reports whether manager owns the status attribute key.
func ownsAttribute(w *v1alpha1.Widget, manager, key string) bool {
	GinkgoHelper()
	o, err := ownership.Inspect(w)
	Expect(err).NotTo(HaveOccurred())
	for _, owner := range o.Owners(fieldpath.MakePathOrDie("status", "attributes", key)) {
		if owner.Manager == manager {
			return true
		}
	}
	return false
}
