// Package differential holds an envtest suite that runs each status
// contribution in several ways that must give the same answer (a Mutator and
// the equivalent Edit, a typed and an unstructured object, an Applier that
// remembers what the manager owns and a fresh one, a shadow batch and a real
// Flush) and compares what ends on the object, who owns it, and the error.
package differential

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var env *apiserver.Env

func TestDifferential(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Differential Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(apiserver.Options{})
})
