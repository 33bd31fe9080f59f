package integration

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// A removal that cannot take effect (the condition is another manager's, or
// shared with one) is refused the same way whether a batcher.RemoveCondition,
// an Edit or a Mutator dropping the condition from its apply configuration asks
// for it, on a typed or an unstructured object: naming the owner, before any
// apply when the observation's managedFields show it, and from the apply's
// response when they do not. The entry stays queued.
var _ = Describe("Removing a condition", func() {
	const (
		manager = "readiness"
		other   = "networking"
	)
	// shared is applied with the same values by both managers, who then
	// co-own it.
	shared := metav1.Condition{Type: "Shared", Status: metav1.ConditionTrue, Reason: "Both", Message: "both",
		LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}

	var (
		ns       string
		applier  *ssa.Applier
		requests *apiserver.Requests
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		applier, _, requests = newApplier()
	})

	// prepare creates a Widget on which other owns Reachable, manager owns
	// Ready, and both own Shared; manager wrote last through applier, which
	// remembers its state at the Widget's resourceVersion.
	prepare := func(ctx context.Context, name string) client.ObjectKey {
		GinkgoHelper()
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, name))
		for _, w := range []struct {
			manager string
			mutate  []widgets.Mutator
		}{
			{other, []widgets.Mutator{widgets.SetCondition("Reachable", metav1.ConditionTrue, "Routed"), widgets.PutCondition(shared)}},
			{manager, []widgets.Mutator{widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"), widgets.PutCondition(shared)}},
		} {
			b := batcher.New(applier)
			for _, m := range w.mutate {
				Expect(batcher.Status(b, getWidget(ctx, key), w.manager, m)).To(Succeed())
			}
			Expect(b.Flush(ctx)).To(Succeed())
		}
		got := getWidget(ctx, key)
		Expect(ownsCondition(got, other, "Shared")).To(BeTrue())
		Expect(ownsCondition(got, manager, "Shared")).To(BeTrue())
		return key
	}

	// shareReady has networking apply Ready with the values readiness applied
	// on observed, so that both own it.
	shareReady := func(ctx context.Context, key client.ObjectKey, observed *v1alpha1.Widget) {
		GinkgoHelper()
		mine := meta.FindStatusCondition(observed.Status.Conditions, "Ready")
		Expect(mine).NotTo(BeNil())
		share := batcher.New(applier)
		Expect(batcher.Status(share, getWidget(ctx, key), other, widgets.PutCondition(*mine))).To(Succeed())
		Expect(share.Flush(ctx)).To(Succeed())
		Expect(ownsCondition(getWidget(ctx, key), other, "Ready")).To(BeTrue())
	}

	// forms are the ways of queueing the removal of condType on obs. A
	// Mutator drops it from its apply configuration, which holds what the
	// manager owns: it cannot name a condition only another manager owns.
	forms := []struct {
		name      string
		edit      bool
		ownedOnly bool
		queue     func(b *batcher.Batch, obs *v1alpha1.Widget, condType string) error
	}{
		{"typed RemoveCondition", false, false, func(b *batcher.Batch, obs *v1alpha1.Widget, condType string) error {
			return batcher.RemoveCondition(b, obs, manager, condType)
		}},
		{"unstructured RemoveCondition", false, false, func(b *batcher.Batch, obs *v1alpha1.Widget, condType string) error {
			return batcher.RemoveCondition(b, asUnstructured(obs), manager, condType)
		}},
		{"typed Mutator", false, true, func(b *batcher.Batch, obs *v1alpha1.Widget, condType string) error {
			return batcher.Status(b, obs, manager, widgets.RemoveCondition(condType))
		}},
		{"unstructured Mutator", false, true, func(b *batcher.Batch, obs *v1alpha1.Widget, condType string) error {
			return batcher.Status(b, asUnstructured(obs), manager, func(ac, _ *unstructured.Unstructured) error {
				return dropUnstructured(ac, condType)
			})
		}},
		{"typed Edit", true, false, func(b *batcher.Batch, obs *v1alpha1.Widget, condType string) error {
			return batcher.EditStatus(b, obs, manager, dropCondition(condType))
		}},
		{"unstructured Edit", true, false, func(b *batcher.Batch, obs *v1alpha1.Widget, condType string) error {
			return batcher.EditStatus(b, asUnstructured(obs), manager, func(u *unstructured.Unstructured) error {
				return dropUnstructured(u, condType)
			})
		}},
	}

	for _, f := range forms {
		for _, condType := range []string{"Reachable", "Shared"} {
			if f.ownedOnly && condType == "Reachable" {
				continue
			}
			It(fmt.Sprintf("refuses, with %s, removing %s before any apply, naming the owner, and keeps the entry", f.name, condType), func(ctx context.Context) {
				key := prepare(ctx, "w")
				before := getWidget(ctx, key)
				b := batcher.New(applier)
				Expect(f.queue(b, before.DeepCopy(), condType)).To(Succeed())
				requests.Reset()
				err := b.Flush(ctx)
				Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
				Expect(err.Error()).To(ContainSubstring(fmt.Sprintf(`Widget %s/w`, ns)))
				Expect(err.Error()).To(ContainSubstring(fmt.Sprintf(`.status.conditions[type=%q] is owned by networking (Apply, status)`, condType)))
				Expect(requests.Count("apply")).To(BeZero(), "%s", requests)
				Expect(b.Pending()).To(HaveLen(1))
				Expect(getWidget(ctx, key)).To(HaveField("ResourceVersion", before.ResourceVersion), "the Widget was written")
			})

			It(fmt.Sprintf("refuses, with %s, removing %s through an observation without managedFields, naming the owner, and keeps the entry", f.name, condType), func(ctx context.Context) {
				key := prepare(ctx, "w")
				before := getWidget(ctx, key)
				stripped := before.DeepCopy()
				stripped.ManagedFields = nil
				b := batcher.New(applier)
				Expect(f.queue(b, stripped, condType)).To(Succeed())
				requests.Reset()
				err := b.Flush(ctx)
				Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
				Expect(err.Error()).To(ContainSubstring(fmt.Sprintf(`.status.conditions[type=%q] is owned by networking (Apply, status)`, condType)))
				if f.edit {
					// An Edit's removal reads the managedFields, once, and is refused before any apply.
					Expect(requests.Count("get")).To(Equal(1), "%s", requests)
					Expect(requests.Count("apply")).To(BeZero(), "%s", requests)
				} else {
					// The Applier remembers the manager's state at this resourceVersion, so it
					// reads nothing: a dry run of the apply is sent, and its response tells.
					Expect(requests.Count("get")).To(BeZero(), "%s", requests)
					Expect(requests.Count("apply")).To(Equal(1), "%s", requests)
					Expect(err.Error()).To(ContainSubstring("the API server kept it"))
				}
				Expect(b.Pending()).To(HaveLen(1))
				after := getWidget(ctx, key)
				Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "the Widget was written")
				Expect(after.ManagedFields).To(Equal(before.ManagedFields))
			})
		}

		It(fmt.Sprintf("removes, with %s, a condition only its manager owns", f.name), func(ctx context.Context) {
			key := prepare(ctx, "w")
			for _, strip := range []bool{false, true} {
				By(fmt.Sprintf("managedFields stripped: %t", strip))
				obs := getWidget(ctx, key)
				Expect(widgets.Conditions(obs)).To(HaveKey("Ready"))
				if strip {
					obs.ManagedFields = nil
				}
				b := batcher.New(applier)
				Expect(f.queue(b, obs, "Ready")).To(Succeed())
				requests.Reset()
				Expect(b.Flush(ctx)).To(Succeed())
				switch {
				case !strip:
					Expect(requests.Snapshot()).To(Equal(map[string]int{"apply": 1}))
				case f.edit:
					// The managedFields read again, then the apply.
					Expect(requests.Snapshot()).To(Equal(map[string]int{"get": 1, "apply": 1}))
				default:
					// A dry run, whose response shows Ready gone, then the apply.
					Expect(requests.Snapshot()).To(Equal(map[string]int{"apply": 2}))
				}
				Expect(b.Pending()).To(BeEmpty())
				after := getWidget(ctx, key)
				Expect(widgets.Conditions(after)).To(Equal(widgets.CS("Reachable", "True", "Shared", "True")))
				Expect(ownsCondition(after, manager, "Ready")).To(BeFalse())
				// Ready again, for the stripped round.
				b = batcher.New(applier)
				Expect(batcher.Status(b, after, manager, widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
				Expect(b.Flush(ctx)).To(Succeed())
			}
		})
	}

	It("keeps a refused removal queued, and the next reconcile's removal succeeds once the other owner let go", func(ctx context.Context) {
		key := prepare(ctx, "w")
		b := batcher.New(applier)
		Expect(batcher.RemoveCondition(b, getWidget(ctx, key), manager, "Shared")).To(Succeed())
		Expect(b.Flush(ctx)).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(b.Pending()).To(HaveLen(1))
		By("a second Flush of the same batch gives the same answer: its observation did not change")
		requests.Reset()
		Expect(b.Flush(ctx)).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(requests.Count("apply")).To(BeZero(), "%s", requests)
		Expect(b.Pending()).To(HaveLen(1))

		By("networking stops writing Shared: a declarative entry that states only Reachable releases it")
		release := batcher.New(applier)
		Expect(batcher.Status(release, getWidget(ctx, key), other, widgets.SetCondition("Reachable", metav1.ConditionTrue, "Routed"),
			ssa.Declarative)).To(Succeed())
		Expect(release.Flush(ctx)).To(Succeed())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKey("Shared"), "readiness still owns it")

		next := batcher.New(applier)
		Expect(batcher.RemoveCondition(next, getWidget(ctx, key), manager, "Shared")).To(Succeed())
		Expect(next.Flush(ctx)).To(Succeed())
		Expect(next.Pending()).To(BeEmpty())
		Expect(widgets.Conditions(getWidget(ctx, key))).NotTo(HaveKey("Shared"))
	})

	// Between the observation and the apply, networking applies Ready with
	// readiness's values, sharing it: the observation's managedFields let the
	// removal through, and the apply's response refuses it.
	for _, f := range forms {
		It(fmt.Sprintf("refuses, with %s, from the apply's response a removal another manager made impossible after the observation", f.name), func(ctx context.Context) {
			key := prepare(ctx, "w")
			stale := getWidget(ctx, key)
			Expect(ownsCondition(stale, other, "Ready")).To(BeFalse())
			shareReady(ctx, key, stale)

			b := batcher.New(applier)
			Expect(f.queue(b, stale, "Ready")).To(Succeed())
			requests.Reset()
			err := b.Flush(ctx)
			Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
			Expect(err.Error()).To(ContainSubstring(`the API server kept it: .status.conditions[type="Ready"] is owned by networking (Apply, status)`))
			Expect(requests.Snapshot()).To(Equal(map[string]int{"apply": 1}), "the stale managedFields let it through")
			Expect(b.Pending()).To(HaveLen(1))
			Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKeyWithValue("Ready", metav1.ConditionTrue))
		})
	}

	It("refuses through Applier.Apply with ssa.RemovingConditions, with nothing sent", func(ctx context.Context) {
		key := prepare(ctx, "w")
		before := getWidget(ctx, key)
		t, err := applier.TargetFor(before, ssa.StatusSubresource, manager)
		Expect(err).NotTo(HaveOccurred())
		keep := ssa.Build{Func: func(*unstructured.Unstructured, client.Object) (ssa.Built, error) { return ssa.Built{}, nil }}
		requests.Reset()
		res, err := applier.Apply(ctx, t, before, keep, ssa.RemovingConditions("Reachable"))
		Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(err.Error()).To(ContainSubstring(`.status.conditions[type="Reachable"] is owned by networking (Apply, status)`))
		Expect(res.Attempts).To(BeZero())
		Expect(requests.Total()).To(BeZero(), "%s", requests)

		By("an empty type is refused as invalid input")
		_, err = applier.Apply(ctx, t, before, keep, ssa.RemovingConditions(""))
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(requests.Total()).To(BeZero(), "%s", requests)
		Expect(getWidget(ctx, key).ResourceVersion).To(Equal(before.ResourceVersion))
	})

	// The controls: without the check, the same removals pass silently and
	// the condition stays.
	It("control: a raw apply dropping a shared condition from what its manager owns returns nil and leaves it", func(ctx context.Context) {
		key := prepare(ctx, "w")
		// rawDrop applies what readiness owns on observed without condType.
		rawDrop := func(observed *v1alpha1.Widget, condType string) {
			GinkgoHelper()
			ac, err := acv1alpha1.ExtractWidgetStatus(observed, manager)
			Expect(err).NotTo(HaveOccurred())
			Expect(ac.Status).NotTo(BeNil())
			ac.Status.Conditions = slices.DeleteFunc(ac.Status.Conditions, func(c metav1ac.ConditionApplyConfiguration) bool {
				return *c.Type == condType
			})
			Expect(env.Client.Status().Apply(ctx, ac, client.FieldOwner(manager))).To(Succeed())
		}

		By("a condition shared when observed")
		rawDrop(getWidget(ctx, key), "Shared")
		after := getWidget(ctx, key)
		Expect(widgets.Conditions(after)).To(HaveKey("Shared"))
		Expect(ownsCondition(after, manager, "Shared")).To(BeFalse())
		Expect(ownsCondition(after, other, "Shared")).To(BeTrue())

		By("a condition another manager came to share after the observation")
		stale := getWidget(ctx, key)
		shareReady(ctx, key, stale)
		rawDrop(stale, "Ready")
		after = getWidget(ctx, key)
		Expect(widgets.Conditions(after)).To(HaveKeyWithValue("Ready", metav1.ConditionTrue))
		Expect(ownsCondition(after, manager, "Ready")).To(BeFalse())
	})

	It("leaves a Mutator nothing to drop of a condition only another manager owns: nothing is sent", func(ctx context.Context) {
		key := prepare(ctx, "w")
		b := batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), manager, widgets.RemoveCondition("Reachable"))).To(Succeed())
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(requests.Total()).To(BeZero(), "%s", requests)
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKey("Reachable"))
	})

	It("lets a declarative entry release a shared condition it does not state: released, not removed", func(ctx context.Context) {
		key := prepare(ctx, "w")
		b := batcher.New(applier)
		Expect(batcher.Status(b, getWidget(ctx, key), manager, widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"), ssa.Declarative)).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		after := getWidget(ctx, key)
		Expect(widgets.Conditions(after)).To(HaveKey("Shared"))
		Expect(ownsCondition(after, manager, "Shared")).To(BeFalse())
	})
})

// dropUnstructured removes condType's condition from u's status.conditions.
func dropUnstructured(u *unstructured.Unstructured, condType string) error {
	conds, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil {
		return err
	}
	kept := slices.DeleteFunc(conds, func(c any) bool {
		m, ok := c.(map[string]any)
		return ok && m["type"] == condType
	})
	return unstructured.SetNestedSlice(u.Object, kept, "status", "conditions")
}

// asUnstructured is w as the unstructured client reads it.
func asUnstructured(w *v1alpha1.Widget) *unstructured.Unstructured {
	GinkgoHelper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	return u
}
