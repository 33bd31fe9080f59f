// Package ctrlbatch holds envtest specs for the controller-runtime wrapper
// (ctrlbatch.Wrap) and the conditions helpers on a real API server.
package ctrlbatch

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var env *apiserver.Env

func TestCtrlbatch(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Ctrlbatch Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(apiserver.Options{})
})
