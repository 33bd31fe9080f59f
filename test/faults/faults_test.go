package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

// applyErrors returns every *ssa.Error inside a Flush error, which joins one
// error per object, each joining one per entry.
func applyErrors(err error) []*ssa.Error {
	if e, ok := err.(*ssa.Error); ok { //nolint:errorlint // walks the join tree one level at a time
		return []*ssa.Error{e}
	}
	var out []*ssa.Error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, inner := range joined.Unwrap() {
			out = append(out, applyErrors(inner)...)
		}
	}
	return out
}

// targetOf names a queued or failed entry as "object/manager".
func targetOf(t ssa.Target) string { return t.Name + "/" + t.Manager }

func targetsOf(ts []ssa.Target) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, targetOf(t))
	}
	return out
}

var _ = Describe("faults around a Flush", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	It("keeps the entries an API server outage failed queued and lands each exactly once after the restart", func(ctx context.Context) {
		apiServer := env.Environment().ControlPlane.APIServer
		var down atomic.Bool
		// Should the spec fail while the server is down, bring it back for the
		// specs that follow.
		DeferCleanup(func() error {
			if down.Load() {
				return apiServer.Start()
			}
			return nil
		})

		w := newWriter(env.Config)
		var objs []*v1alpha1.Widget
		for i := range 4 {
			objs = append(objs, createWidget(ctx, ns, fmt.Sprintf("w%d", i+1)))
		}

		// Objects are flushed one at a time, in queue order, so that the outage
		// falls between w1 and w2 and what failed is known.
		b := batcher.New(w.applier, batcher.WithConcurrency(1))
		var (
			stopOnce sync.Once
			stopErr  error
		)
		for i, o := range objs {
			if i == 1 {
				// Fault injection, not a real mutator: the first time w2's
				// readiness entry is built, the API server goes away.
				Expect(batcher.Status(b, o, "readiness", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error {
					stopOnce.Do(func() {
						down.Store(true)
						stopErr = apiServer.Stop()
					})
					return nil
				})).To(Succeed())
			}
			Expect(batcher.Status(b, o, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
			Expect(batcher.Status(b, o, "networking", widgets.SetCondition("Reachable", metav1.ConditionTrue, "Routed"))).To(Succeed())
		}
		Expect(b.Pending()).To(HaveLen(8))
		w.reset()

		err := b.Flush(ctx)
		Expect(stopErr).NotTo(HaveOccurred())
		Expect(down.Load()).To(BeTrue())
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("connection refused"))
		Expect(applyErrors(err)).To(HaveLen(6), "one error per failed entry")
		Expect(targetsOf(b.Pending())).To(Equal([]string{
			"w2/readiness", "w2/networking", "w3/readiness", "w3/networking", "w4/readiness", "w4/networking",
		}), "exactly the entries that failed stay queued, in order")
		Expect(w.responses.Succeeded("apply")).To(Equal(2), "w1's two entries landed before the outage: %s", w.responses)
		Expect(w.responses.Failed("apply")).To(Equal(6), "each failed entry was tried once: %s", w.responses)

		Expect(apiServer.Start()).To(Succeed())
		down.Store(false)
		Eventually(func(ctx context.Context) error {
			return env.Client.Get(ctx, client.ObjectKeyFromObject(objs[0]), &v1alpha1.Widget{})
		}).WithContext(ctx).WithTimeout(30*time.Second).WithPolling(250*time.Millisecond).Should(Succeed(),
			"the API server serves Widgets again")
		w1 := getWidget(ctx, client.ObjectKeyFromObject(objs[0]))
		for _, o := range objs[1:] {
			Expect(getWidget(ctx, client.ObjectKeyFromObject(o)).Status.Conditions).To(BeEmpty(), "%s: nothing landed half-way", o.Name)
		}

		w.reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(b.Pending()).To(BeEmpty())
		Expect(w.requests.Count("apply")).To(Equal(6), "each queued entry sent once, w1's not again: %s", w.requests)
		Expect(w.responses.Succeeded("apply")).To(Equal(6))

		for _, o := range objs {
			got := getWidget(ctx, client.ObjectKeyFromObject(o))
			Expect(widgets.Conditions(got)).To(Equal(map[string]metav1.ConditionStatus{"Ready": "True", "Reachable": "True"}), o.Name)
			Expect(ownsCondition(got, "readiness", "Ready")).To(BeTrue(), o.Name)
			Expect(ownsCondition(got, "networking", "Reachable")).To(BeTrue(), o.Name)
		}
		Expect(getWidget(ctx, client.ObjectKeyFromObject(objs[0])).ResourceVersion).To(Equal(w1.ResourceVersion),
			"w1 was not written again")
	})

	It("gives up after a burst of 409s beyond the retry budget, keeps the entry, and lands it once the writes stop", func(ctx context.Context) {
		obj := createWidget(ctx, ns, "busy")
		key := client.ObjectKeyFromObject(obj)

		// Another writer changes the object right before each of this
		// controller's status applies, so every guarded attempt is stale.
		cfg, responses := apiserver.WithResponses(env.Config)
		base, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		var interfere atomic.Bool
		var interferences atomic.Int32
		interfere.Store(true)
		c := interceptor.NewClient(base, interceptor.Funcs{
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
				if interfere.Load() {
					n := interferences.Add(1)
					other := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithReadyReplicas(n))
					if err := env.Client.Status().Apply(ctx, other, client.FieldOwner("busy")); err != nil {
						return fmt.Errorf("interfering: %w", err)
					}
				}
				return c.SubResource(sub).Apply(ctx, obj, opts...)
			},
		})
		applier := newApplier(c, ssa.WithGuardBackoff(wait.Backoff{Steps: 3, Duration: time.Millisecond, Factor: 1}))

		b := batcher.New(applier)
		Expect(batcher.Status(b, obj, "planner", widgets.PlanFor("plan-1", "provision"), ssa.Guarded)).To(Succeed())
		Expect(batcher.Status(b, obj, "planner", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithPhase("Planned")
			return nil
		})).To(Succeed())

		err = b.Flush(ctx)
		Expect(errors.Is(err, ssa.ErrRetriesExhausted)).To(BeTrue(), "%v", err)
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "the last 409 is kept: %v", err)
		Expect(err.Error()).To(ContainSubstring("after 3 attempts"))
		failed := applyErrors(err)
		Expect(failed).To(HaveLen(1))
		Expect(failed[0].Attempts).To(Equal(3))
		Expect(failed[0].Target.Manager).To(Equal("planner"))
		Expect(interferences.Load()).To(BeEquivalentTo(3))
		Expect(responses.Count("apply", 409)).To(Equal(3), "%s", responses)
		Expect(responses.Succeeded("apply")).To(BeZero())
		Expect(targetsOf(b.Pending())).To(Equal([]string{"busy/planner"}))
		got := getWidget(ctx, key)
		Expect(got.Status.Plan).To(BeNil())
		Expect(got.Status.Phase).To(BeEmpty())

		interfere.Store(false)
		responses.Reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(b.Pending()).To(BeEmpty())
		Expect(responses.Succeeded("apply")).To(Equal(1), "one apply, no 409: %s", responses)
		Expect(responses.CountCode(409)).To(BeZero())
		got = getWidget(ctx, key)
		Expect(got.Status.Plan).NotTo(BeNil())
		Expect(got.Status.Plan.ID).To(Equal("plan-1"))
		Expect(got.Status.Phase).To(Equal("Planned"))
		Expect(got.Status.ReadyReplicas).To(BeEquivalentTo(3), "the other writer's last value stays")
	})

	It("reports NotFound for an object deleted between observe and Flush, keeps its entries, and lands the others", func(ctx context.Context) {
		w := newWriter(env.Config)
		gone := createWidget(ctx, ns, "gone")
		replaced := createWidget(ctx, ns, "replaced")
		kept := createWidget(ctx, ns, "kept")

		b := batcher.New(w.applier)
		for _, o := range []*v1alpha1.Widget{gone, kept} {
			Expect(batcher.Status(b, o, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		}
		// The replaced object's entry is guarded: the observed resourceVersion
		// is what the successor cannot match.
		for _, o := range []*v1alpha1.Widget{gone, replaced, kept} {
			Expect(batcher.Status(b, o, "planner", widgets.PlanFor("plan-1", "provision"), ssa.Guarded)).To(Succeed())
		}

		// After the observation: one object is deleted, another deleted and
		// created again under the same name (a new uid).
		Expect(env.Client.Delete(ctx, gone)).To(Succeed())
		Expect(env.Client.Delete(ctx, replaced)).To(Succeed())
		successor := createWidget(ctx, ns, "replaced")
		Expect(successor.UID).NotTo(Equal(replaced.UID))

		for range 2 { // a second Flush fails the same way: nothing is written to the wrong object
			err := b.Flush(ctx)
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
			failed := applyErrors(err)
			Expect(failed).To(HaveLen(3))
			for _, e := range failed {
				Expect(apierrors.IsNotFound(e)).To(BeTrue(), "%s: %v", targetOf(e.Target), e)
				Expect(e.Error()).To(ContainSubstring(ns + "/" + e.Target.Name))
			}
			Expect(targetsOf(b.Pending())).To(Equal([]string{"gone/readiness", "gone/planner", "replaced/planner"}))

			got := getWidget(ctx, client.ObjectKeyFromObject(kept))
			Expect(widgets.Conditions(got)).To(Equal(map[string]metav1.ConditionStatus{"Ready": "True"}))
			Expect(got.Status.Plan).NotTo(BeNil())
			now := getWidget(ctx, client.ObjectKeyFromObject(successor))
			Expect(now.Status.Plan).To(BeNil(), "the object created under the old name is not written")
			Expect(managers(now)).NotTo(ContainElement("planner"))
			Expect(now.ResourceVersion).To(Equal(successor.ResourceVersion))
		}
	})

	// The Applier sends the observed uid with every apply. The API server holds a
	// main-resource apply to it, but not a status apply: an object deleted and
	// created again under the same name takes an unguarded status entry meant
	// for its predecessor, as a merge patch would. Only the guard (above) keeps
	// a decision off the successor. This spec pins that down, so that a change
	// on either side shows.
	It("lands an unguarded status entry on the object created again under the old name", func(ctx context.Context) {
		w := newWriter(env.Config)
		replaced := createWidget(ctx, ns, "replaced")
		b := batcher.New(w.applier)
		Expect(batcher.Status(b, replaced, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())

		Expect(env.Client.Delete(ctx, replaced)).To(Succeed())
		successor := createWidget(ctx, ns, "replaced")
		Expect(successor.UID).NotTo(Equal(replaced.UID))

		w.reset()
		Expect(b.Flush(ctx)).To(Succeed())
		Expect(b.Pending()).To(BeEmpty())
		Expect(w.responses.Succeeded("apply")).To(Equal(1), "one apply, accepted: %s", w.responses)
		Expect(w.requests.Total()).To(Equal(1), "no 409, so no read: %s", w.requests)

		now := getWidget(ctx, client.ObjectKeyFromObject(successor))
		Expect(now.UID).To(Equal(successor.UID), "the successor, not a third object")
		Expect(widgets.Conditions(now)).To(Equal(map[string]metav1.ConditionStatus{"Ready": "True"}))
		Expect(ownsCondition(now, "readiness", "Ready")).To(BeTrue())
		Expect(now.ResourceVersion).NotTo(Equal(successor.ResourceVersion))
	})

	It("refuses a guarded entry queued behind an unguarded one that landed on the object created again", func(ctx context.Context) {
		w := newWriter(env.Config)
		replaced := createWidget(ctx, ns, "replaced-guarded")
		b := batcher.New(w.applier)
		Expect(batcher.Status(b, replaced, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		Expect(batcher.Status(b, replaced, "planner", widgets.PlanFor("p1", "provision"), ssa.Guarded)).To(Succeed())

		Expect(env.Client.Delete(ctx, replaced)).To(Succeed())
		successor := createWidget(ctx, ns, "replaced-guarded")

		w.reset()
		err := b.Flush(ctx)
		Expect(err).To(MatchError(batcher.ErrReplaced))
		Expect(targetsOf(b.Pending())).To(Equal([]string{"replaced-guarded/planner"}), "the guarded entry stays queued")
		Expect(w.responses.Succeeded("apply")).To(Equal(1), "only the unguarded entry was sent: %s", w.responses)
		now := getWidget(ctx, client.ObjectKeyFromObject(successor))
		Expect(now.Status.Plan).To(BeNil(), "no plan decided from the deleted object lands on its successor")
	})

	It("passes on the API server's 422 for a value it refuses, naming the field, and applies nothing of that entry", func(ctx context.Context) {
		w := newWriter(env.Config)
		obj := createWidget(ctx, ns, "invalid")
		b := batcher.New(w.applier)
		// status.plan.id is required by the CRD schema; statusapply does not
		// pre-validate custom resources' schemas, so the server refuses it.
		Expect(batcher.Status(b, obj, "planner", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			widgets.Status(ac).WithPhase("Planning").WithPlan(acv1alpha1.WidgetPlan().WithCreatedBy("planner").WithSteps("provision"))
			return nil
		})).To(Succeed())
		Expect(batcher.Status(b, obj, "readiness", widgets.SetCondition("Ready", metav1.ConditionTrue, "Up"))).To(Succeed())
		w.reset()

		err := b.Flush(ctx)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("status.plan.id"))
		Expect(err.Error()).To(ContainSubstring(`as "planner"`), "the error names the entry")
		Expect(w.responses.Count("apply", 422)).To(Equal(1), "%s", w.responses)
		Expect(targetsOf(b.Pending())).To(Equal([]string{"invalid/planner"}))

		got := getWidget(ctx, client.ObjectKeyFromObject(obj))
		Expect(got.Status.Plan).To(BeNil())
		Expect(got.Status.Phase).To(BeEmpty(), "the refused apply is all or nothing")
		Expect(widgets.Conditions(got)).To(HaveKey("Ready"), "the other entry landed")
	})
})
