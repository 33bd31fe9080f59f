package batcher_test

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// setReady is a small status function of the kind a reconcile is made of: it
// contributes one condition to the readiness writer's apply configuration.
func setReady(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
	if ac.Status == nil {
		ac.WithStatus(acv1alpha1.WidgetStatus())
	}
	return ssa.SetCondition(&ac.Status.Conditions, observed.Status.Conditions, observed.Generation,
		metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ReplicasReady"})
}

// exampleCluster returns a fake client holding Widget demo/w1 and an Applier
// through it. The fake client runs a real field manager; the claims statusapply
// makes about a real API server are tested on envtest.
func exampleCluster() (client.Client, *ssa.Applier) {
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithTypeConverters(applyconfiguration.NewTypeConverter(scheme)).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "demo"}}).
		Build()
	applier, _ := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(scheme)), ssa.WithRegisterer(nil))
	return c, applier
}

// Two writers contribute to the same object in one reconcile; Flush sends one
// apply per field manager and the API server merges their conditions by type.
func Example() {
	ctx := context.Background()
	c, applier := exampleCluster()

	w := &v1alpha1.Widget{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "w1"}, w)

	b := batcher.New(applier)
	_ = batcher.Status(b, w, "readiness", setReady)
	_ = batcher.Status(b, w, "networking", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		ac.WithStatus(acv1alpha1.WidgetStatus().WithEndpoint("10.0.0.7"))
		return nil
	})
	fmt.Println("queued:", len(b.Pending()))
	if err := b.Flush(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("queued after Flush:", len(b.Pending()))

	_ = c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "w1"}, w)
	fmt.Println(w.Status.Conditions[0].Type, w.Status.Conditions[0].Status, w.Status.Endpoint)
	// Output:
	// queued: 2
	// queued after Flush: 0
	// Ready True 10.0.0.7
}

// WidgetReconciler shows the one-line integration: a batch per reconcile,
// flushed at every exit, error paths included, its error joined into the
// reconcile's.
type WidgetReconciler struct {
	client.Client
	Applier *ssa.Applier
}

func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	b := batcher.New(r.Applier)
	defer b.FlushInto(ctx, &err)

	w := &v1alpha1.Widget{}
	if err := r.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, batcher.Status(b, w, "readiness", setReady)
}

func ExampleBatch_FlushInto() {
	ctx := context.Background()
	c, applier := exampleCluster()
	r := &WidgetReconciler{Client: c, Applier: applier}

	_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "demo", Name: "w1"}})
	w := &v1alpha1.Widget{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "w1"}, w)
	fmt.Println(err, w.Status.Conditions[0].Type, w.Status.Conditions[0].Reason)
	// Output: <nil> Ready ReplicasReady
}

// Compare is the comparison package shadow makes between the live object and a
// dry run's answer: only what the apply changes, on its subresource, with a
// condition's lastTransitionTime and system metadata left out.
func ExampleCompare() {
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "up",
		LastTransitionTime: metav1.Unix(1700000000, 0)}
	live := &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "demo", ResourceVersion: "41"},
		Status:     v1alpha1.WidgetStatus{Phase: "Running", Conditions: []metav1.Condition{ready}},
	}
	result := live.DeepCopy()
	result.Status.Conditions[0].Reason = "ReplicasReady"                        // a reason of its own
	result.Status.Conditions[0].LastTransitionTime = metav1.Unix(1700000001, 0) // not divergence
	result.Status.Conditions = append(result.Status.Conditions, metav1.Condition{Type: "Healthy",
		Status: metav1.ConditionUnknown, Reason: "Probing", Message: "probing", LastTransitionTime: metav1.Unix(1700000001, 0)})
	result.Status.Phase = "Ready"

	target := ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "demo", Name: "w1",
		Subresource: ssa.StatusSubresource, Manager: "widgets-readiness"}
	d, err := batcher.Compare(applyconfiguration.NewTypeConverter(scheme), target, live, result)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range d.Conditions {
		fmt.Println(c.Type, c.Change, c.Fields)
	}
	fmt.Println(d)
	// Output:
	// Healthy added []
	// Ready changed [reason]
	// condition Healthy: absent -> present (status "Unknown", reason "Probing", message "probing"); condition Ready: reason "Up" -> "ReplicasReady"; .status.phase: "Running" -> "Ready"
}

// A writer removes a condition with RemoveCondition. One that another writer
// owns (alone, or with this one) cannot be removed by it: the API server keeps
// it for its owner. Flush refuses that removal, naming the owner, and the
// entry stays queued.
func ExampleRemoveCondition() {
	ctx := context.Background()
	c, applier := exampleCluster()
	key := client.ObjectKey{Namespace: "demo", Name: "w1"}
	w := &v1alpha1.Widget{}
	_ = c.Get(ctx, key, w)
	b := batcher.New(applier)
	_ = batcher.Status(b, w, "networking", func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
		ac.WithStatus(acv1alpha1.WidgetStatus())
		return ssa.SetCondition(&ac.Status.Conditions, o.Status.Conditions, o.Generation,
			metav1.Condition{Type: "Reachable", Status: metav1.ConditionTrue, Reason: "Routed"})
	})
	_ = b.Flush(ctx)

	_ = c.Get(ctx, key, w)
	b = batcher.New(applier)
	_ = batcher.RemoveCondition(b, w, "readiness", "Reachable")
	err := b.Flush(ctx)
	fmt.Println("refused:", errors.Is(err, ssa.ErrRemovesForeignField))
	fmt.Println("queued after Flush:", len(b.Pending()))
	_ = c.Get(ctx, key, w)
	fmt.Println(w.Status.Conditions[0].Type)
	// Output:
	// refused: true
	// queued after Flush: 1
	// Reachable
}
