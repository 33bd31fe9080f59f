// Package conflicts holds envtest specs that produce real field-manager
// conflicts and stale applies on a kube-apiserver, and check that the
// conflicts package reads them, predicts them and resolves them.
package conflicts

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/testenv"
)

var env *testenv.Env

func TestConflicts(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conflicts Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(testenv.Options{})
})
