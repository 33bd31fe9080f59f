package metricstest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestCounterSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "things_total"}, []string{"manager", "kind", "outcome"})
	reg.MustRegister(c)
	c.WithLabelValues("m", "Widget", "ok").Add(2)
	c.WithLabelValues("m", "Widget", "failed").Inc()
	got, err := CounterSeries(reg, "things_total", prometheus.Labels{"manager": "m"})
	if want := map[string]float64{"kind=Widget,outcome=ok": 2, "kind=Widget,outcome=failed": 1}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("CounterSeries = %v, %v; want %v", got, err, want)
	}
	got, err = CounterSeries(reg, "things_total", prometheus.Labels{"manager": "m"}, "kind")
	if want := map[string]float64{"outcome=ok": 2, "outcome=failed": 1}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("CounterSeries without kind = %v, %v; want %v", got, err, want)
	}
	if got, err := CounterSeries(reg, "other_total", nil); err != nil || len(got) != 0 {
		t.Fatalf("an absent counter: %v, %v", got, err)
	}
	if _, err := CounterSeries(reg, "things_total", prometheus.Labels{"manager": "n"}); err == nil || !strings.Contains(err.Error(), `label manager is "m", want "n"`) {
		t.Fatalf("a series of another manager: %v", err)
	}
}
