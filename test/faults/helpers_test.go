package faults

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// writer is a controller's view of the API: a client that counts its
// requests and responses, and an Applier through it.
type writer struct {
	client    client.Client
	requests  *apiserver.Requests
	responses *apiserver.Responses
	applier   *ssa.Applier
}

// newWriter returns a writer acting as cfg's user.
func newWriter(cfg *rest.Config, opts ...ssa.Option) *writer {
	GinkgoHelper()
	cfg, responses := apiserver.WithResponses(cfg)
	c, requests, err := env.CountingClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	return &writer{client: c, requests: requests, responses: responses, applier: newApplier(c, opts...)}
}

func newApplier(c client.Client, opts ...ssa.Option) *ssa.Applier {
	GinkgoHelper()
	a, err := widgets.NewApplier(c, opts...)
	Expect(err).NotTo(HaveOccurred())
	return a
}

func (w *writer) reset() {
	w.requests.Reset()
	w.responses.Reset()
}

func createWidget(ctx context.Context, ns, name string) *v1alpha1.Widget {
	GinkgoHelper()
	w, err := widgets.Create(ctx, env.Client, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return w
}

func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w, err := widgets.Get(ctx, env.Client, key)
	Expect(err).NotTo(HaveOccurred())
	return w
}

// ownsCondition reports whether manager's status Apply entry holds the condition of condType.
func ownsCondition(w *v1alpha1.Widget, manager, condType string) bool {
	GinkgoHelper()
	owns, err := widgets.OwnsCondition(w, manager, condType)
	Expect(err).NotTo(HaveOccurred())
	return owns
}

// managers lists the field managers with an entry on w's status.
func managers(w *v1alpha1.Widget) []string {
	var out []string
	for _, mf := range w.ManagedFields {
		if mf.Subresource == "status" {
			out = append(out, mf.Manager)
		}
	}
	return out
}
