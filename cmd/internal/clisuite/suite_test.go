// Package clisuite holds end-to-end specs for the statusapply command tree:
// each spec runs the commands in-process against a real API server, reached
// through a kubeconfig file the way a user's shell would. It is an envtest
// suite like those under test/, kept under cmd/ because the command tree it
// runs is internal to the binaries.
package clisuite

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var (
	env *apiserver.Env
	// kubeconfig is the path of a kubeconfig file for a cluster admin.
	kubeconfig string
	// cacheDir keeps the commands' discovery cache out of the home directory.
	cacheDir string
	// suiteDir holds the suite's files; it is removed after the suite.
	suiteDir string
)

func TestCLI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "CLI Suite")
}

var _ = BeforeSuite(func() {
	dir, err := os.MkdirTemp("", "statusapply-cli-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	suiteDir = dir
	env = suite.Start(apiserver.Options{})
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{machineCRDFile()}, ErrorIfPathMissing: true})
	Expect(err).NotTo(HaveOccurred())

	user, err := env.Environment().ControlPlane.AddUser(envtest.User{Name: "cli", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig = filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, data, 0o600)).To(Succeed())
	cacheDir = filepath.Join(dir, "cache")
})
