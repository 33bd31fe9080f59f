package widgets

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

// env is the suite's API server, started once in BeforeSuite. Specs only read
// it; each works in its own namespace.
var env *apiserver.Env

func TestWidgets(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Widgets Example Suite")
}

var _ = BeforeSuite(func() {
	ctrl.SetLogger(GinkgoLogr)
	env = suite.Start(apiserver.Options{})
	// Three controllers converging on a shared 2-core machine: give them time.
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
})
