// Package schemas holds envtest specs for writing the status of a custom
// resource known only from its CRD's YAML, with schemas read from the API
// server (schemas.FromCluster) or built from the manifest (crdschema.FromCRDFiles).
package schemas

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

// sprocketManifest is the Sprocket CRD: YAML only, no Go types.
const sprocketManifest = "testdata/test.statusapply.io_sprockets.yaml"

var env *apiserver.Env

func TestSchemas(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Schemas Suite")
}

var _ = BeforeSuite(func() {
	env = suite.Start(apiserver.Options{})

	_, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{sprocketManifest}, ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred())
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
})
