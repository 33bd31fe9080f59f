package integration

import (
	"context"
	"errors"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// Status functions written the merge-patch way: they edit the object in place.
func markCondition(condType string, st metav1.ConditionStatus) func(*v1alpha1.Widget) error {
	return func(w *v1alpha1.Widget) error {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: condType, Status: st, Reason: "Set", Message: "set"})
		return nil
	}
}

// errMissedEdit is returned by a mutator that does not see an earlier edit of its entry.
var errMissedEdit = errors.New("the mutator does not see the earlier edit")

func dropCondition(condType string) func(*v1alpha1.Widget) error {
	return func(w *v1alpha1.Widget) error {
		meta.RemoveStatusCondition(&w.Status.Conditions, condType)
		return nil
	}
}

var _ = Describe("Edits written for merge patches", func() {
	var (
		ns       string
		applier  *ssa.Applier
		requests *apiserver.Requests
	)

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		applier, _, requests = newApplier()
	})

	It("lose nothing through statusapply with two concurrent writers, and lose conditions through merge patches (the control)", func(ctx context.Context) {
		writers := map[string][]string{"readiness": {"Ready", "Available"}, "networking": {"Reachable", "Routed"}}
		const rounds = 5
		run := func(name string, write func(manager string, snapshot *v1alpha1.Widget, fns []func(*v1alpha1.Widget) error) error) int {
			w := createWidget(ctx, ns, name)
			key := client.ObjectKeyFromObject(w)
			lost := 0
			for round := range rounds {
				st := metav1.ConditionTrue
				if round%2 == 1 {
					st = metav1.ConditionFalse
				}
				// Both writers observe before either writes, then write concurrently.
				snapshots := map[string]*v1alpha1.Widget{}
				for m := range writers {
					snapshots[m] = getWidget(ctx, key)
				}
				var wg sync.WaitGroup
				for m, types := range writers {
					var fns []func(*v1alpha1.Widget) error
					for _, t := range types {
						fns = append(fns, markCondition(t, st))
					}
					wg.Add(1)
					go func() {
						defer GinkgoRecover()
						defer wg.Done()
						Expect(write(m, snapshots[m], fns)).To(Succeed())
					}()
				}
				wg.Wait()
				got := widgets.Conditions(getWidget(ctx, key))
				for _, types := range writers {
					for _, t := range types {
						if got[t] != st {
							lost++
						}
					}
				}
			}
			return lost
		}

		lostWithStatusapply := run("through-statusapply", func(m string, snapshot *v1alpha1.Widget, fns []func(*v1alpha1.Widget) error) error {
			b := batcher.New(applier)
			for _, fn := range fns {
				if err := batcher.EditStatus(b, snapshot, m, fn); err != nil {
					return err
				}
			}
			return b.Flush(ctx)
		})
		lostWithMergePatch := run("through-merge-patch", func(m string, snapshot *v1alpha1.Widget, fns []func(*v1alpha1.Widget) error) error {
			base := snapshot.DeepCopy()
			for _, fn := range fns {
				if err := fn(snapshot); err != nil {
					return err
				}
			}
			return env.Client.Status().Patch(ctx, snapshot, client.MergeFrom(base), client.FieldOwner(m))
		})
		Expect(lostWithStatusapply).To(BeZero())
		Expect(lostWithMergePatch).To(BeNumerically(">", 0), "the control must lose conditions, else it shows nothing")
	})

	It("sends nothing for an edit that changes nothing, and claims no field set to its own value", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		other := acv1alpha1.Widget(key.Name, ns).WithStatus(acv1alpha1.WidgetStatus().WithPhase("Running").WithEndpoint("10.0.0.1"))
		Expect(env.Client.Status().Apply(ctx, other, client.FieldOwner("owner"))).To(Succeed())
		w = getWidget(ctx, key)

		b := batcher.New(applier)
		Expect(batcher.EditStatus(b, w, "copycat", func(o *v1alpha1.Widget) error {
			phase := o.Status.Phase
			o.Status.Phase = phase // re-set, unchanged
			return nil
		})).To(Succeed())
		Expect(batcher.EditStatus(b, w, "copycat", func(*v1alpha1.Widget) error { return nil })).To(Succeed())
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(requests.Count("apply")).To(BeZero())

		Expect(batcher.EditStatus(b, w, "copycat", func(o *v1alpha1.Widget) error {
			o.Status.Phase = "Running" // the value it already has
			o.Status.ReadyReplicas = 2 // a real change
			return nil
		})).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		got := getWidget(ctx, key)
		Expect(got.Status.ReadyReplicas).To(Equal(int32(2)))
		owners, err := ownership.Inspect(got)
		Expect(err).NotTo(HaveOccurred())
		phase := fieldpath.MakePathOrDie("status", "phase")
		Expect(owners.Owners(phase)).To(ConsistOf(HaveField("Manager", "owner")), "copycat did not claim phase")
		Expect(owners.Owners(fieldpath.MakePathOrDie("status", "readyReplicas"))).To(ConsistOf(HaveField("Manager", "copycat")))
	})

	It("releases a condition its manager owns and refuses to remove another manager's, naming it", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		key := client.ObjectKeyFromObject(w)
		b := batcher.New(applier)
		Expect(batcher.EditStatus(b, w, "readiness", markCondition("Ready", metav1.ConditionTrue))).To(Succeed())
		Expect(batcher.EditStatus(b, w, "networking", markCondition("Reachable", metav1.ConditionTrue))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())

		b = batcher.New(applier)
		current := getWidget(ctx, key)
		Expect(batcher.EditStatus(b, current, "readiness", dropCondition("Ready"))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(widgets.Conditions(getWidget(ctx, key))).To(Equal(map[string]metav1.ConditionStatus{"Reachable": "True"}))

		b = batcher.New(applier)
		Expect(batcher.EditStatus(b, getWidget(ctx, key), "readiness", dropCondition("Reachable"))).To(Succeed())
		requests.Reset()
		err := b.Flush(ctx)
		Expect(err).To(MatchError(ssa.ErrRemovesForeignField))
		Expect(err.Error()).To(ContainSubstring(`.status.conditions[type="Reachable"] is owned by networking (Apply, status)`))
		Expect(requests.Count("apply")).To(BeZero())
		Expect(b.Pending()).To(HaveLen(1))
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKey("Reachable"))
	})

	// Whether the Applier remembers what the manager owns or not, an Edit
	// that removes another manager's condition from an observation without
	// managedFields (a cache that strips them) is refused the same way: the
	// managedFields are read, once, to tell who owns what the edit removes.
	// The control shows that the stripped observation alone cannot tell.
	It("refuses to remove another manager's condition from a stripped observation, whether or not the Applier remembers", func(ctx context.Context) {
		key := client.ObjectKeyFromObject(createWidget(ctx, ns, "stripped"))
		b := batcher.New(applier)
		Expect(batcher.EditStatus(b, getWidget(ctx, key), "mgr-b", markCondition("Z", metav1.ConditionTrue))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		b = batcher.New(applier)
		Expect(batcher.EditStatus(b, getWidget(ctx, key), "mgr-a", markCondition("X", metav1.ConditionTrue))).To(Succeed())
		Expect(batcher.EditStatus(b, getWidget(ctx, key), "mgr-a", markCondition("Y", metav1.ConditionTrue))).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())
		stripped := getWidget(ctx, key)
		stripped.ManagedFields = nil

		fresh, _, freshRequests := newApplier()
		for name, run := range map[string]struct {
			a        *ssa.Applier
			requests *apiserver.Requests
		}{"remembering": {applier, requests}, "fresh": {fresh, freshRequests}} {
			By(name + " Applier")
			b := batcher.New(run.a)
			Expect(batcher.EditStatus(b, stripped.DeepCopy(), "mgr-a", dropCondition("Z"))).To(Succeed())
			run.requests.Reset()
			err := b.Flush(ctx)
			Expect(err).To(MatchError(ssa.ErrRemovesForeignField), "%s Applier", name)
			Expect(err.Error()).To(ContainSubstring(`.status.conditions[type="Z"] is owned by mgr-b`))
			Expect(run.requests.Count("get")).To(Equal(1), "%s: %s", name, run.requests)
			Expect(run.requests.Count("apply")).To(BeZero(), "%s: %s", name, run.requests)
			Expect(b.Pending()).To(HaveLen(1))
		}
		Expect(widgets.Conditions(getWidget(ctx, key))).To(HaveKey("Z"))

		By("control: the stripped observation says nothing of who owns Z")
		_, err := ownership.Inspect(stripped)
		Expect(err).To(MatchError(ownership.ErrNoManagedFields))
	})

	It("mixes edits and apply-configuration mutators in one entry, in queue order", func(ctx context.Context) {
		w := createWidget(ctx, ns, "w1")
		b := batcher.New(applier)
		Expect(batcher.EditStatus(b, w, "ctrl", markCondition("Ready", metav1.ConditionTrue))).To(Succeed())
		Expect(batcher.Status(b, w, "ctrl", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			// The mutator runs in Flush's goroutine: it returns what it finds
			// wrong, and Flush's error carries it.
			if ssa.GetCondition(widgets.Status(ac).Conditions, "Ready") == nil {
				return errMissedEdit
			}
			widgets.Status(ac).WithPhase("Mixed")
			return nil
		})).To(Succeed())
		Expect(batcher.EditStatus(b, w, "ctrl", func(o *v1alpha1.Widget) error {
			o.Status.Endpoint = "10.9.9.9"
			return nil
		})).To(Succeed())
		requests.Reset()
		Expect(b.Flush(ctx)).To(Succeed(), "the mutator sees the earlier edit")
		Expect(requests.Count("apply")).To(Equal(1))
		got := getWidget(ctx, client.ObjectKeyFromObject(w))
		Expect(got.Status.Phase).To(Equal("Mixed"))
		Expect(got.Status.Endpoint).To(Equal("10.9.9.9"))
		Expect(widgets.Conditions(got)).To(HaveKey("Ready"))
	})

	It("works for a built-in kind and for unstructured objects", func(ctx context.Context) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		Expect(env.Client.Create(ctx, pod)).To(Succeed())
		b := batcher.New(applier)
		Expect(batcher.EditStatus(b, pod, "gate", func(p *corev1.Pod) error {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
				Type: "example.com/Gate", Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
			return nil
		})).To(Succeed())
		Expect(batcher.EditObject(b, pod, "labeller", func(p *corev1.Pod) error {
			p.Labels = map[string]string{"gated": "yes"}
			return nil
		})).To(Succeed())

		w := createWidget(ctx, ns, "w1")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(w), u)).To(Succeed())
		Expect(batcher.EditStatus(b, u, "ctrl", func(o *unstructured.Unstructured) error {
			return unstructured.SetNestedField(o.Object, "Edited", "status", "phase")
		})).To(Succeed())
		Expect(b.Flush(ctx)).To(Succeed())

		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		Expect(pod.Labels).To(HaveKeyWithValue("gated", "yes"))
		Expect(pod.Status.Conditions).To(ContainElement(HaveField("Type", corev1.PodConditionType("example.com/Gate"))))
		Expect(getWidget(ctx, client.ObjectKeyFromObject(w)).Status.Phase).To(Equal("Edited"))
	})
})
