package widgets

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// counterOf reads one of statusapply's counters (such as
// statusapply_applies_total) for a field manager from controller-runtime's
// metrics registry, where the Applier Add creates registers them. Counters
// add up over the suite: compare before and after.
func counterOf(counter, manager string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != counter {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "manager" && l.GetValue() == manager {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// gaugeOf sums a gauge of controller-runtime's metrics registry (such as
// controller_runtime_active_workers) over the series whose controller label
// is controller.
func gaugeOf(gauge, controller string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != gauge {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetGauge().GetValue()
				}
			}
		}
	}
	return total
}

// waitIdle waits until none of the controllers runs a reconcile or has one
// queued: a sync point after which they have acted on every event delivered to
// them, and will do nothing more until the next event.
func waitIdle(controllers ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		for _, c := range controllers {
			g.Expect(gaugeOf("controller_runtime_active_workers", c)).To(BeZero(), "%s is reconciling", c)
			g.Expect(gaugeOf("workqueue_depth", c)).To(BeZero(), "%s has reconciles queued", c)
		}
	}).Should(Succeed())
}
