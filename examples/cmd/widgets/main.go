// Command widgets runs the example's three status-writing controllers in one
// controller-runtime manager against the cluster of the current kubeconfig
// (or --kubeconfig). The cluster needs the CRDs from config/crd.
//
// With --leader-elect, replicas elect a leader on a Lease, and by default
// (--lease-fence) every reconcile's status is sent only while the replica can
// prove it still holds the lease (ctrlbatch.LeaseFence), and guarded by the
// resourceVersion it was computed from (--fence-guard): a leader that was
// paused past its lease stops sending when it resumes, and a request it had
// already (partly) sent is refused by the API server if the new leader, or
// anyone, changed the object since. The proof alone (--fence-guard=false)
// stops what is sent after the resume, not what was under way.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ctrlbatch"
	"github.com/statusapply/statusapply/examples/widgets"
)

// election is the leader election the flags ask for.
type election struct {
	enabled         bool
	namespace, id   string
	identity        string
	lease, renew    time.Duration
	retry           time.Duration
	fence           bool
	fenceGuard      bool
	releaseOnCancel bool
}

func (e *election) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&e.enabled, "leader-elect", false, "elect a leader among replicas on a Lease; only the leader runs the controllers")
	fs.StringVar(&e.namespace, "leader-election-namespace", "default", "namespace of the Lease")
	fs.StringVar(&e.id, "leader-election-id", "widgets.demo.statusapply.io", "name of the Lease")
	fs.StringVar(&e.identity, "leader-election-identity", "", "this replica's name in the Lease (default: host name and a random suffix)")
	fs.DurationVar(&e.lease, "lease-duration", 15*time.Second, "how long candidates wait before taking over a lease that was not renewed")
	fs.DurationVar(&e.renew, "renew-deadline", 10*time.Second, "how long the leader retries renewing before it gives up")
	fs.DurationVar(&e.retry, "retry-period", 2*time.Second, "how often candidates and the leader try the Lease")
	fs.BoolVar(&e.fence, "lease-fence", true,
		"write status only while the lease is proven held (renewed less than --renew-deadline ago, by the monotonic clock)")
	fs.BoolVar(&e.fenceGuard, "fence-guard", true,
		"with --lease-fence, send every status apply guarded by the resourceVersion it was computed from, so that none lands on an object changed since (false: the lease proof alone)")
	fs.BoolVar(&e.releaseOnCancel, "leader-election-release-on-cancel", true, "release the lease on a clean shutdown, for a quick handover")
}

// options sets up leader election in opts; it returns the fence to wrap every
// reconcile with, nil without one.
func (e *election) options(cfg *rest.Config, opts *ctrl.Options) (*ctrlbatch.LeaseFence, error) {
	if !e.enabled {
		return nil, nil
	}
	identity := e.identity
	if identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		identity = host + "_" + string(uuid.NewUUID())
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, e.namespace, e.id,
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: identity})
	if err != nil {
		return nil, err
	}
	var fence *ctrlbatch.LeaseFence
	if e.fence {
		// The proof lasts as long as the leader itself keeps trying to renew:
		// shorter than the lease duration another candidate waits.
		fence = ctrlbatch.NewLeaseFence(e.renew)
		lock = fence.Lock(lock)
	}
	opts.LeaderElection = true
	opts.LeaderElectionID = e.id
	opts.LeaderElectionNamespace = e.namespace
	opts.LeaderElectionResourceLockInterface = lock
	opts.LeaderElectionReleaseOnCancel = e.releaseOnCancel
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &e.lease, &e.renew, &e.retry
	return fence, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "widgets:", err)
		os.Exit(1)
	}
}

func run() error {
	var metricsAddr, probeAddr string
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		`address the metrics endpoint (statusapply's counters included) binds to; "0" disables it`)
	flag.StringVar(&probeAddr, "health-probe-bind-address", "0",
		`address the /healthz and /readyz probes bind to; "0" disables them`)
	var elect election
	elect.addFlags(flag.CommandLine)
	var work time.Duration
	flag.DurationVar(&work, "reconcile-work", 0,
		"make every reconcile wait up to this long between reading a Widget and writing its status, as real work would")
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(textlogger.NewLogger(logConfig))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	opts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		// No cache.Options{DefaultTransform: cache.TransformStripManagedFields()}:
		// statusapply extracts what each field manager owns from the cached
		// objects' managedFields (see widgets.Add).
	}
	fence, err := elect.options(cfg, &opts)
	if err != nil {
		return fmt.Errorf("setting up leader election: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	tuning := widgets.Tuning{Work: work}
	if fence != nil {
		var fenceOpts []ctrlbatch.FenceOption
		if !elect.fenceGuard {
			fenceOpts = append(fenceOpts, ctrlbatch.LeaseOnly())
		}
		tuning.WrapOptions = append(tuning.WrapOptions, ctrlbatch.WithFence(fence, fenceOpts...))
	}
	if err := widgets.AddWithTuning(mgr, tuning); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.WithName("widgets").Info("starting the manager")
	return mgr.Start(ctrl.SetupSignalHandler())
}
