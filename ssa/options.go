package ssa

import (
	"time"

	"github.com/go-logr/logr"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/statusapply/statusapply/conflicts"
)

// Option configures an Applier.
type Option func(*config)

type config struct {
	scheme     *runtime.Scheme
	converters []managedfields.TypeConverter
	reader     client.Reader
	backoff    wait.Backoff
	registerer prometheus.Registerer
	policies   map[string]conflicts.Policy
	recorder   conflicts.EventRecorder
	// logger is WithLogger's; nil when it was not given.
	logger *logr.Logger
	// ownedCacheSize bounds what the Applier remembers of what managers own.
	ownedCacheSize int
}

func defaultConfig(c client.Client) config {
	return config{
		scheme: c.Scheme(),
		reader: c,
		backoff: wait.Backoff{
			Steps:    5,
			Duration: 10 * time.Millisecond,
			Factor:   2,
			Jitter:   0.2,
		},
		registerer:     ctrlmetrics.Registry,
		ownedCacheSize: DefaultOwnedCacheSize,
	}
}

// WithScheme sets the scheme that maps typed objects to their kinds. The
// default is the client's.
func WithScheme(s *runtime.Scheme) Option { return func(c *config) { c.scheme = s } }

// WithTypeConverter adds the schemas of kinds the Applier writes, for example a
// generated applyconfiguration package's NewTypeConverter(scheme) for custom
// resources. Built-in kinds are always known. Converters are asked in the order
// they were added, before the built-in one.
func WithTypeConverter(tc managedfields.TypeConverter) Option {
	return func(c *config) { c.converters = append(c.converters, tc) }
}

// WithReader sets where objects are read again, for guarded retries and for
// observed objects without managedFields. It must read from the API server, not
// from a cache (for a controller-runtime manager: mgr.GetAPIReader()). The
// default is the client itself.
func WithReader(r client.Reader) Option { return func(c *config) { c.reader = r } }

// WithGuardBackoff bounds the retries of a guarded apply whose resourceVersion
// is stale: Steps is the number of attempts, Duration and Factor space them.
func WithGuardBackoff(b wait.Backoff) Option { return func(c *config) { c.backoff = b } }

// WithConflictPolicy sets what manager's applies do about field-manager
// conflicts, unless an apply says otherwise. The default is conflicts.Fail.
func WithConflictPolicy(manager string, p conflicts.Policy) Option {
	return func(c *config) {
		if c.policies == nil {
			c.policies = map[string]conflicts.Policy{}
		}
		c.policies[manager] = p
	}
}

// WithEventRecorder records an Event on the object whenever a writer yields,
// takes or fails on a field-manager conflict, so people see who fought over
// what. controller-runtime's mgr.GetEventRecorder(name) fits.
func WithEventRecorder(r conflicts.EventRecorder) Option { return func(c *config) { c.recorder = r } }

// WithLogger makes the Applier log to l, whatever the apply's context carries.
// Without it, the Applier logs to logr.FromContext (a reconciler's logger) and
// discards logs when there is none: never to controller-runtime's global logger.
func WithLogger(l logr.Logger) Option { return func(c *config) { c.logger = &l } }

// WithRegisterer registers the Applier's Prometheus counters with r instead of
// controller-runtime's metrics registry; nil disables registration.
func WithRegisterer(r prometheus.Registerer) Option { return func(c *config) { c.registerer = r } }

// WithOwnedCacheSize bounds how many (object, field manager, subresource)
// states of what each manager owns the Applier remembers, least recently used
// out first (see DefaultOwnedCacheSize), sparing the next apply a read of
// managedFields; 0 turns remembering off.
func WithOwnedCacheSize(n int) Option { return func(c *config) { c.ownedCacheSize = max(n, 0) } }
