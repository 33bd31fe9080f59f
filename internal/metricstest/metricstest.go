// Package metricstest reads counters back from a Prometheus registry for
// tests: the unit tests and the envtest suites assert exact series.
package metricstest

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// CounterSeries returns the series of the counter name gathered from g, keyed
// by their labels other than fixed's and ignored, as name=value pairs in name
// order, such as "change=added,field=status". Every series must have fixed's
// values for fixed's labels (the target's manager, say); one that does not is
// an error, so that a wrong label is not lost in the key. Ignored labels are
// left out unchecked.
func CounterSeries(g prometheus.Gatherer, name string, fixed prometheus.Labels, ignored ...string) (map[string]float64, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var pairs []string
			for _, l := range m.GetLabel() {
				want, isFixed := fixed[l.GetName()]
				switch {
				case slices.Contains(ignored, l.GetName()):
				case !isFixed:
					pairs = append(pairs, l.GetName()+"="+l.GetValue())
				case l.GetValue() != want:
					return nil, fmt.Errorf("%s: label %s is %q, want %q", name, l.GetName(), l.GetValue(), want)
				}
			}
			sort.Strings(pairs)
			out[strings.Join(pairs, ",")] = m.GetCounter().GetValue()
		}
	}
	return out, nil
}
