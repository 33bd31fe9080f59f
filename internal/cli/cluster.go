package cli

import (
	"fmt"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
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
			WithDiscoveryBurst(discoveryBurst),
	}
}

// addFlags registers --kubeconfig, --context, -n/--namespace and the other
// kubectl connection flags.
func (c *clusterAccess) addFlags(fs *pflag.FlagSet) {
	c.flags.AddFlags(fs)
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

// client returns an uncached controller-runtime client: managedFields must be
// read from the API server, never from a cache that may strip them. It knows
// CustomResourceDefinitions as typed objects; everything else is read as
// unstructured through the flags' discovery-backed REST mapper.
func (c *clusterAccess) client() (client.Client, error) {
	cfg, err := c.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
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
