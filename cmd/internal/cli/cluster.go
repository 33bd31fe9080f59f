package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Request rates for a command-line run. client-go's defaults (5 QPS) would make
// a migration of a few hundred objects crawl; these match what kubectl allows
// itself for discovery and stay modest for object requests.
const (
	clientQPS      = 20
	clientBurst    = 40
	discoveryQPS   = 50
	discoveryBurst = 300
)

// clusterAccess holds the kubeconfig flags of one command tree and builds
// clients from them once the flags are parsed.
type clusterAccess struct {
	flags *genericclioptions.ConfigFlags
}

// newClusterAccess returns unbound flags; addFlags binds them.
func newClusterAccess() *clusterAccess {
	return &clusterAccess{
		flags: genericclioptions.NewConfigFlags(true).
			WithDiscoveryQPS(discoveryQPS).
			WithDiscoveryBurst(discoveryBurst).
			WithWrapConfigFn(func(c *rest.Config) *rest.Config {
				c.QPS, c.Burst = clientQPS, clientBurst
				return c
			}),
	}
}

// addFlags registers --kubeconfig, --context, -n/--namespace and the other
// kubectl connection flags.
func (c *clusterAccess) addFlags(fs *pflag.FlagSet) {
	c.flags.AddFlags(fs)
}

// given reports whether the command line names a cluster: --kubeconfig,
// --context, --cluster, --user or --server.
func (c *clusterAccess) given() bool {
	for _, s := range []*string{c.flags.KubeConfig, c.flags.Context, c.flags.ClusterName, c.flags.AuthInfoName, c.flags.APIServer} {
		if s != nil && *s != "" {
			return true
		}
	}
	return false
}

// check refuses a configuration that names no cluster. client-go would
// otherwise talk to http://localhost:8080, and report the failure of that
// several times over; one error that says what is missing is clearer.
func (c *clusterAccess) check() error {
	if c.flags.APIServer != nil && *c.flags.APIServer != "" {
		return nil
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv("KUBERNETES_SERVICE_PORT") != "" {
		return nil // in a pod: client-go uses the service account
	}
	loader := c.flags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	if len(raw.Clusters) == 0 && len(raw.Contexts) == 0 {
		var found []string
		for _, f := range loader.ConfigAccess().GetLoadingPrecedence() {
			if _, err := os.Stat(f); err == nil {
				found = append(found, f)
			}
		}
		where := "no kubeconfig found (KUBECONFIG is unset and there is no ~/.kube/config)"
		if len(found) > 0 {
			where = fmt.Sprintf("no cluster in the kubeconfig %s", strings.Join(found, ", "))
		}
		return fmt.Errorf("%s: give --kubeconfig FILE, set KUBECONFIG, or give --server", where)
	}
	context := raw.CurrentContext
	if c.flags.Context != nil && *c.flags.Context != "" {
		context = *c.flags.Context
	}
	if context == "" && (c.flags.ClusterName == nil || *c.flags.ClusterName == "") {
		return errors.New("the kubeconfig has no current-context: give --context NAME (or --cluster NAME)")
	}
	return nil
}

// restConfig returns the client configuration of the flags, after check.
func (c *clusterAccess) restConfig() (*rest.Config, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	cfg, err := c.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	return cfg, nil
}

// namespace is the namespace from -n, else from the kubeconfig context, else
// "default".
func (c *clusterAccess) namespace() (string, error) {
	ns, _, err := c.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// builder returns a resource.Builder for unstructured objects of the flags'
// cluster, after check.
func (c *clusterAccess) builder() (*resource.Builder, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return resource.NewBuilder(c.flags).Unstructured(), nil
}

// client returns an uncached controller-runtime client: managedFields must be
// read from the API server, never from a cache that may strip them. It knows
// CustomResourceDefinitions as typed objects; everything else is read as
// unstructured through the flags' discovery-backed REST mapper.
func (c *clusterAccess) client() (client.Client, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	mapper, err := c.flags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("discovering the API: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return cl, nil
}
