package widgets

import (
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
