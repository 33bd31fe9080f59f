package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	authorizationv1 "k8s.io/api/authorization/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Request rates for a command-line run, the defaults of --qps and --burst.
// client-go's own (5 per second) would make a migration of a fleet crawl: a
// migration sends one request per object that changes, and a run over ten
// thousand objects should take minutes, not an hour. The API server's
// priority and fairness still queue a client that asks for more than its
// share. Discovery gets what kubectl allows itself.
const (
	defaultQPS     = 200
	defaultBurst   = 400
	discoveryQPS   = 50
	discoveryBurst = 300
)

// clusterAccess holds the kubeconfig flags of one command tree and builds
// clients from them once the flags are parsed.
type clusterAccess struct {
	flags *genericclioptions.ConfigFlags
	// qps and burst are --qps and --burst: the client-side rate limit of
	// the requests for objects.
	qps   float32
	burst int
}

// newClusterAccess returns unbound flags; addFlags binds them.
func newClusterAccess() *clusterAccess {
	c := &clusterAccess{qps: defaultQPS, burst: defaultBurst}
	c.flags = genericclioptions.NewConfigFlags(true).
		WithDiscoveryQPS(discoveryQPS).
		WithDiscoveryBurst(discoveryBurst).
		WithWrapConfigFn(func(cfg *rest.Config) *rest.Config {
			cfg.QPS, cfg.Burst = c.qps, c.burst
			return cfg
		})
	return c
}

// addFlags registers --kubeconfig, --context, -n/--namespace and the other
// kubectl connection flags, and --qps and --burst.
func (c *clusterAccess) addFlags(fs *pflag.FlagSet) {
	c.flags.AddFlags(fs)
	fs.Float32Var(&c.qps, "qps", defaultQPS,
		"requests per second to the API server, on average; a negative value turns the client-side limit off "+
			"and leaves the pace to the API server's priority and fairness")
	fs.IntVar(&c.burst, "burst", defaultBurst, "requests allowed at once above --qps")
}

// checkRates refuses --qps 0 (client-go would read it as its default of 5
// per second) and a --burst below 1 with a positive --qps (no request would
// ever pass).
func (c *clusterAccess) checkRates() error {
	switch {
	case c.qps == 0:
		return withExitCode(exitUsage, errors.New("--qps 0: give the requests per second, or a negative value for no client-side limit"))
	case c.qps > 0 && c.burst < 1:
		return withExitCode(exitUsage, fmt.Errorf("--burst %d: must be 1 or more (or --qps negative, for no client-side limit)", c.burst))
	}
	return nil
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

// check refuses request rates that cannot work (checkRates) and a
// configuration that names no cluster. client-go would
// otherwise talk to http://localhost:8080, and report the failure of that
// several times over; one error that says what is missing is clearer.
func (c *clusterAccess) check() error {
	if err := c.checkRates(); err != nil {
		return err
	}
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
// CustomResourceDefinitions and SelfSubjectAccessReviews as typed objects; everything else is read as
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
	if err := authorizationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Host, err)
	}
	return cl, nil
}
