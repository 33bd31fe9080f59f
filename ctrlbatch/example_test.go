package ctrlbatch_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/ssa"
)

// A reconcile behind a fence writes while the lease is proven held, and
// writes nothing once the proof has expired (a leader that was paused past
// its lease): the reconcile returns ErrFenced and controller-runtime retries
// it on its backoff. The entries a fenced batch sends are guarded by the
// resourceVersion they were built from, unless ctrlbatch.LeaseOnly is given.
func ExampleWithFence() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithTypeConverters(applyconfiguration.NewTypeConverter(scheme)).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "demo"}, Spec: v1alpha1.WidgetSpec{Replicas: 3}}).
		Build()
	applier, _ := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(scheme)), ssa.WithRegisterer(nil))

	readiness := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		w := &v1alpha1.Widget{}
		if err := c.Get(ctx, req.NamespacedName, w); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, batcher.Status(ctrlbatch.FromContext(ctx), w, "readiness",
			func(ac *acv1alpha1.WidgetApplyConfiguration, observed *v1alpha1.Widget) error {
				ac.WithStatus(acv1alpha1.WidgetStatus().WithReadyReplicas(observed.Spec.Replicas))
				return nil
			})
	})
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "demo", Name: "w1"}}

	// In a manager: fence := ctrlbatch.NewLeaseFence(renewDeadline), its
	// Lock wrapping the lock the manager elects with. Here it is renewed by hand.
	fence := ctrlbatch.NewLeaseFence(50 * time.Millisecond)
	_ = fence.Lock(&fakeLock{id: "me"}).Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me"})

	r := ctrlbatch.Wrap(applier, readiness, ctrlbatch.WithFence(fence))
	_, err := r.Reconcile(ctx, req)
	fmt.Println("proven:", err)

	time.Sleep(60 * time.Millisecond) // a pause past the proof
	_, err = r.Reconcile(ctx, req)
	fmt.Println("expired:", errors.Is(err, ctrlbatch.ErrFenced))
	// Output:
	// proven: <nil>
	// expired: true
}
