// Package contention holds envtest specs for several status writers changing
// one object at the same time: through statusapply none of their changes is
// lost and none is refused, while the merge-patch approaches it replaces,
// run as controls on the same interleaving, lose updates or pay in 409s.
package contention

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var env *apiserver.Env

func TestContention(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Contention Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(apiserver.Options{})
})
