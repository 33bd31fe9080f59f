// Package ownership holds envtest specs for the ownership package: inspection,
// migration from legacy status writers to apply managers, and CRD lint, all
// against a real API server.
package ownership

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var env *apiserver.Env

func TestOwnership(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Ownership Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(apiserver.Options{})
})
