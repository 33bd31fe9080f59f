// Package races holds envtest specs for the plan-creation race: two
// reconciles of one object that both observe no plan. A guarded apply lets
// exactly one plan be written; a blind apply, run as the control, lets the
// second overwrite the first.
package races

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var env *apiserver.Env

func TestRaces(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Races Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(apiserver.Options{})
})
