// Package apiserver starts a real kube-apiserver and etcd (through
// controller-runtime's envtest) with the example API installed, and counts
// what clients send it. The envtest suites, the examples' tests, the
// benchmarks and the demo all start their API server through it; it links no
// test framework, so that the demo binary can use it.
//
// The binaries are built from source by `make envtest`; Start finds them through
// KUBEBUILDER_ASSETS or, when that is unset, in setup-envtest's default directory.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/config/crd"
)

// KubernetesVersion is the version label of the directory `make envtest` installs into.
const KubernetesVersion = "1.37.2"

// Env is a running API server with the example CRDs installed.
type Env struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config
	// Scheme knows the built-in types and the example API.
	Scheme *kruntime.Scheme
	// Client is an uncached client for Config and Scheme.
	Client client.Client

	env *envtest.Environment
}

// Options tune Start.
type Options struct {
	// APIServerCertDir, when set, keeps the API server's certificates in a fixed
	// directory so that the server can be stopped and started again with the same
	// port and CA (for fault tests).
	APIServerCertDir string
	// APIServerFlags are added to the API server's command line, such as
	// audit-policy-file and audit-log-path; they hold across a restart.
	APIServerFlags map[string]string
}

// NewScheme returns a scheme with the built-in types, CustomResourceDefinitions
// and the example API.
func NewScheme() (*kruntime.Scheme, error) {
	s := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// BinaryAssetsDirectory is where Start looks for kube-apiserver and etcd:
// KUBEBUILDER_ASSETS when set, else setup-envtest's default directory for
// KubernetesVersion.
func BinaryAssetsDirectory() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	base, err := envtest.SetupEnvtestDefaultBinaryAssetsDirectory()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, fmt.Sprintf("%s-%s-%s", KubernetesVersion, runtime.GOOS, runtime.GOARCH)), nil
}

// Start starts etcd and kube-apiserver and installs the example CRDs. Call Stop
// when done, also on failure.
func Start(opts Options) (*Env, error) {
	dir, err := BinaryAssetsDirectory()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("no kube-apiserver in %s: run `make envtest` first (it builds one from source): %w", dir, err)
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		Scheme:                scheme,
		CRDs:                  crds,
		BinaryAssetsDirectory: dir,
		// envtest's default of 20 s is too short for a kube-apiserver
		// starting on a busy 2-core machine (several suites at once).
		ControlPlaneStartTimeout: 2 * time.Minute,
	}
	if opts.APIServerCertDir != "" || len(opts.APIServerFlags) > 0 {
		env.ControlPlane.APIServer = &envtest.APIServer{CertDir: opts.APIServerCertDir}
		args := env.ControlPlane.APIServer.Configure()
		for name, value := range opts.APIServerFlags {
			args.Set(name, value)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest from %s: %w", dir, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &Env{Config: cfg, Scheme: scheme, Client: c, env: env}, nil
}

// Environment is the underlying envtest environment, for tests that stop and
// start the API server or add users.
func (e *Env) Environment() *envtest.Environment { return e.env }

// Stop stops the API server and etcd. It is safe to call on a nil Env.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	return e.env.Stop()
}

// CreateNamespace creates a namespace with a generated name and returns the name.
func (e *Env) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace: %w", err)
	}
	return ns.Name, nil
}

// DeleteNamespace deletes a namespace. envtest runs no namespace controller, so
// the objects inside stay in etcd until the server stops; every spec uses its
// own namespace, so they never meet.
func (e *Env) DeleteNamespace(ctx context.Context, name string) error {
	return client.IgnoreNotFound(e.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}
