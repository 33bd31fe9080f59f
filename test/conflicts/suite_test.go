// Package conflicts holds envtest specs that produce real field-manager
// conflicts and stale applies on a kube-apiserver, and check that the
// conflicts package reads them, predicts them and resolves them.
package conflicts

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var env *apiserver.Env

func TestConflicts(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conflicts Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(apiserver.Options{})
})
