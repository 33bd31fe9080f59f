// Package suite holds the Ginkgo side of the envtest harness: one API server per
// suite, one namespace per spec, both cleaned up also when a spec fails. It is
// kept apart from internal/apiserver so that programs starting an API server (the demo) do
// not link Ginkgo.
package suite

import (
	"context"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
)

// Start starts a apiserver.Env for a Ginkgo suite. Call it from BeforeSuite: it
// registers its Stop with DeferCleanup, so the API server stops after the
// suite, also when specs or the suite set-up fail.
func Start(opts apiserver.Options) *apiserver.Env {
	ginkgo.GinkgoHelper()
	env, err := apiserver.Start(opts)
	ginkgo.DeferCleanup(func() error { return env.Stop() })
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "starting the API server")
	return env
}

// Namespace creates a namespace for the current spec and deletes it when the
// spec ends. Call it from BeforeEach or an It.
func Namespace(ctx context.Context, e *apiserver.Env) string {
	ginkgo.GinkgoHelper()
	prefix := strings.ToLower(strings.ReplaceAll(ginkgo.CurrentSpecReport().LeafNodeText, " ", "-"))
	prefix = strings.Trim(filterDNS(prefix), "-")
	if len(prefix) > 40 {
		prefix = strings.Trim(prefix[:40], "-")
	}
	if prefix == "" {
		prefix = "spec"
	}
	ns, err := e.CreateNamespace(ctx, prefix)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func(ctx context.Context) error { return e.DeleteNamespace(ctx, ns) })
	return ns
}

// filterDNS keeps the characters a namespace name may hold.
func filterDNS(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
