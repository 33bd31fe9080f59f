// Package faults holds envtest specs for what goes wrong around a Flush: the
// API server going away and coming back, a burst of 409s beyond the retry
// budget, the object deleted under the batch, a value the server refuses, and
// a writer with no more rights than a status writer needs.
package faults

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var env *apiserver.Env

func TestFaults(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Faults Suite")
}

var _ = BeforeSuite(func() {
	// A fixed certificate directory lets a spec stop the API server and start
	// it again with the same port and CA, so existing clients reconnect.
	dir, err := os.MkdirTemp("", "statusapply-faults-")
	Expect(err).NotTo(HaveOccurred())
	// Registered first, so it runs last: after the API server has stopped.
	DeferCleanup(os.RemoveAll, dir)
	env = suite.Start(apiserver.Options{APIServerCertDir: dir})
})
