// Command widgets runs the example's three status-writing controllers in one
// controller-runtime manager against the cluster of the current kubeconfig
// (or --kubeconfig). The cluster needs the CRDs from config/crd.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/examples/widgets"
)

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
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		// No cache.Options{DefaultTransform: cache.TransformStripManagedFields()}:
		// statusapply extracts what each field manager owns from the cached
		// objects' managedFields (see widgets.Add).
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := widgets.Add(mgr); err != nil {
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
