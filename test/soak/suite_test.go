// Package soak holds `make soak`: a long randomised run of statusapply against a
// real API server under injected faults, with invariants checked continuously
// by a watch. It is skipped unless SOAK_DURATION is set; docs/reliability.md
// describes the fault model, the invariants and how to replay a run.
package soak

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var (
	env *apiserver.Env
	cfg config
)

func TestSoak(t *testing.T) {
	c, enabled, err := configFromEnv()
	if !enabled {
		t.Skip("the soak runs only with SOAK_DURATION set (make soak)")
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg = c
	// Printed first, so that even a run that never ends says how to replay it.
	t.Logf("soak: seed=%d duration=%s; replay with SOAK_SEED=%d SOAK_DURATION=%s make soak", c.seed, c.duration, c.seed, c.duration)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Soak Suite")
}

var _ = BeforeSuite(func() {
	// The writers' errors are counted, not logged: under faults they are
	// many, and expected.
	logf.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	// A fixed certificate directory lets the soak stop the API server and
	// start it again with the same port and CA, so clients reconnect.
	dir, err := os.MkdirTemp("", "statusapply-soak-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	env = suite.Start(apiserver.Options{APIServerCertDir: dir})
})
