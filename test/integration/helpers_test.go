package integration

import (
	"time"

	"context"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// newApplier returns an Applier through a counting client for the example API.
func newApplier(opts ...ssa.Option) (*ssa.Applier, client.Client, *apiserver.Requests) {
	c, requests, err := env.CountingClient()
	Expect(err).NotTo(HaveOccurred())
	a, err := widgets.NewApplier(c, opts...)
	Expect(err).NotTo(HaveOccurred())
	return a, c, requests
}

// newApplierCounted is newApplier for specs that only need the request counts.
func newApplierCounted(opts ...ssa.Option) (*ssa.Applier, *apiserver.Requests) {
	a, _, requests := newApplier(append([]ssa.Option{ssa.WithRegisterer(nil)}, opts...)...)
	return a, requests
}

// createWidget creates a Widget and returns it as read back from the server.
func createWidget(ctx context.Context, ns, name string) *v1alpha1.Widget {
	w, err := widgets.Create(ctx, env.Client, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return w
}

func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	w, err := widgets.Get(ctx, env.Client, key)
	Expect(err).NotTo(HaveOccurred())
	return w
}

// ownsCondition reports whether manager's status Apply entry holds the condition of condType.
func ownsCondition(w *v1alpha1.Widget, manager, condType string) bool {
	owns, err := widgets.OwnsCondition(w, manager, condType)
	Expect(err).NotTo(HaveOccurred())
	return owns
}

// sleepPastSecond waits until the wall clock has moved to the next second,
// the resolution of lastTransitionTime.
func sleepPastSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
}
