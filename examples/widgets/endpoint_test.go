package widgets

import (
	"context"
	"io"
	"net"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/test/suite"
)

var _ = Describe("The widgets manager's /metrics endpoint", func() {
	It("serves statusapply's metrics beside controller-runtime's", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		addr := freeLoopbackAddress()
		startManagerServing(ns, addr)
		key := createWidget(ctx, ns, "w1", 1)
		Eventually(func(g Gomega) {
			w := &v1alpha1.Widget{}
			g.Expect(env.Client.Get(ctx, key, w)).To(Succeed())
			g.Expect(converged(w)).To(BeTrue())
		}).Should(Succeed())

		var body string
		Eventually(func(g Gomega) {
			resp, err := http.Get("http://" + addr + "/metrics")
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			raw, err := io.ReadAll(resp.Body)
			g.Expect(err).NotTo(HaveOccurred())
			body = string(raw)
			g.Expect(body).To(ContainSubstring(`statusapply_applies_total{group="demo.statusapply.io",kind="Widget",manager="` + ReadinessManager + `"}`))
		}).Should(Succeed())
		for _, name := range []string{
			`statusapply_apply_duration_seconds_bucket{group="demo.statusapply.io",kind="Widget",manager="` + PlannerManager + `",le=`,
			`statusapply_pending_entries{group="demo.statusapply.io",kind="Widget",manager="` + NetworkingManager + `"} 0`,
			"statusapply_noop_skips_total",
			"controller_runtime_reconcile_total", // the manager's own, on the same endpoint
		} {
			Expect(body).To(ContainSubstring(name))
		}
	})
})

// freeLoopbackAddress returns a loopback address with a port nothing listens
// on, for a metrics server to bind.
func freeLoopbackAddress() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	return addr
}
