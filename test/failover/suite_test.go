// Package failover holds `make soak-failover`: the example controller manager
// (examples/cmd/widgets) run as real replicas, separate OS processes electing
// a leader on a Lease, against a real API server, while a driver kills,
// pauses and replaces the leader and restarts the API server, and pauses
// leaders of replicas starved of CPU. A watch checks that no writer's status
// ever goes back in time, and the API server's audit log that no replica's
// unguarded apply lands while another leads. It is skipped unless
// SOAK_DURATION is set; docs/reliability.md describes it.
package failover

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

// Broken set-ups the controls run, selected with SOAK_BROKEN.
const (
	// brokenMergePatch makes the legacy writer merge-patch the whole
	// conditions array from a snapshot it holds for a while.
	brokenMergePatch = "mergepatch"
	// brokenNoFence runs the replicas with --lease-fence=false, and pauses
	// the leader as the only fault; its control runs them starved.
	brokenNoFence = "nofence"
	// brokenLeaseOnly runs the replicas with the lease fence alone
	// (--fence-guard=false). It narrows the window without closing it, so
	// the runs report what lands and assert nothing.
	brokenLeaseOnly = "leaseonly"
)

type config struct {
	duration             time.Duration
	seed                 uint64
	broken               string
	stopAtFirstViolation bool
	// su is how the replicas run; starved set-ups inject pauses only.
	su setUp
}

var (
	env      *apiserver.Env
	cfg      config
	binary   string // the example manager, built for the suite
	auditLog string // the API server's audit log: who wrote what, and when
)

func configFromEnv() (config, bool, error) {
	e, enabled, err := suite.SoakFromEnv(20*time.Second, brokenMergePatch, brokenNoFence, brokenLeaseOnly)
	return config{duration: e.Duration, seed: e.Seed, broken: e.Broken, su: normalSetUp}, enabled, err
}

// auditPolicy records the writes the run counts: the Lease's (who leads
// from when) and the Widgets' status patches with their bodies (who wrote
// each version, when it landed, and whether it carried a resourceVersion).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update"]
  resources:
  - group: "coordination.k8s.io"
    resources: ["leases"]
- level: Request
  verbs: ["patch"]
  resources:
  - group: "demo.statusapply.io"
    resources: ["widgets/status"]
- level: None
`

func TestFailover(t *testing.T) {
	c, enabled, err := configFromEnv()
	if !enabled {
		t.Skip("the failover soak runs only with SOAK_DURATION set (make soak-failover)")
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg = c
	t.Logf("failover soak: seed=%d duration=%s; replay with SOAK_SEED=%d SOAK_DURATION=%s make soak-failover", c.seed, c.duration, c.seed, c.duration)
	RegisterFailHandler(Fail)
	RunSpecs(t, "Failover Soak Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "statusapply-failover-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)

	binary = filepath.Join(dir, "widgets")
	build := exec.Command("go", "build", "-o", binary, "github.com/statusapply/statusapply/examples/cmd/widgets")
	build.Stdout, build.Stderr = GinkgoWriter, GinkgoWriter
	Expect(build.Run()).To(Succeed(), "building the example manager")

	// A fixed certificate directory lets the driver restart the API server
	// with the same port and CA, so the replicas reconnect.
	certs := filepath.Join(dir, "certs")
	Expect(os.Mkdir(certs, 0o700)).To(Succeed())
	policy := filepath.Join(dir, "audit-policy.yaml")
	Expect(os.WriteFile(policy, []byte(auditPolicy), 0o600)).To(Succeed())
	auditLog = filepath.Join(dir, "audit.log")
	env = suite.Start(apiserver.Options{APIServerCertDir: certs, APIServerFlags: map[string]string{
		"audit-policy-file": policy, "audit-log-path": auditLog, "audit-log-maxsize": "0",
	}})
})
