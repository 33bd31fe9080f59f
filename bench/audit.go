package bench

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/widgets"
)

// AuditConfig sizes the fleet-audit measurement.
type AuditConfig struct {
	// Objects is the fleet size; PageSizes the objects per list request of
	// the paged audits; Rounds how often each approach runs.
	Objects   int     `json:"objects"`
	PageSizes []int64 `json:"pageSizes"`
	Rounds    int     `json:"rounds"`
}

// AuditResult is one run of the audit over the fleet.
type AuditResult struct {
	// Approach is "paged, N per page" (fleet.ListObjects into
	// fleet.Audit, the way statusapply audit reads) or "whole list"
	// (one List of everything, then the audit over the slice: the baseline
	// paging avoids).
	Approach string `json:"approach"`
	Objects  int    `json:"objects"`
	// Lists counts the list requests.
	Lists int           `json:"lists"`
	Wall  time.Duration `json:"wall"`
	// PeakHeap is the highest heap (live and not yet collected objects)
	// sampled every millisecond during the run, above the heap before it.
	PeakHeap uint64 `json:"peakHeap"`
	// PeakLive is the highest live heap the garbage collector measured
	// during the run (it marks often here), above the live heap before it:
	// what the run held, garbage left out.
	PeakLive uint64 `json:"peakLive"`
	// Allocated is the bytes allocated during the run.
	Allocated uint64 `json:"allocated"`
}

// auditConditions are the legacy writer's condition types on every object.
var auditConditions = widgets.CS("Ready", "True", "Synced", "True", "Progressing", "False")

// CreateAuditFleet creates n Widgets in ns, parallel at a time, each with
// a realistic ownership: created by the client, three conditions and the
// phase merge-patched by a legacy writer, and two apply managers with a
// condition each.
func CreateAuditFleet(ctx context.Context, c client.Client, ns string, n, parallel int) error {
	var g errgroup.Group
	g.SetLimit(parallel)
	for i := range n {
		g.Go(func() error { return createAuditObject(ctx, c, ns, fmt.Sprintf("a%04d", i)) })
	}
	return g.Wait()
}

// createAuditObject creates one object of the fleet.
func createAuditObject(ctx context.Context, c client.Client, ns, name string) error {
	key, err := widgets.CreateEmpty(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if err := widgets.LegacyWrite(ctx, c, key, "legacy-controller", "Running", auditConditions); err != nil {
		return err
	}
	if err := widgets.ApplyConditions(ctx, c, key, "readiness", widgets.CS("Available", "True")); err != nil {
		return err
	}
	return widgets.ApplyConditions(ctx, c, key, "networking", widgets.CS("Reachable", "True"))
}

// RunAudit audits the fleet in ns, paged and as a whole list, cfg.Rounds
// times each, alternating.
func RunAudit(ctx context.Context, env *apiserver.Env, ns string, cfg AuditConfig, logf func(string, ...any)) ([]AuditResult, error) {
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	var out []AuditResult
	type approach struct {
		name     string
		pageSize int64 // 0: the whole list at once
	}
	var approaches []approach
	for _, p := range cfg.PageSizes {
		approaches = append(approaches, approach{fmt.Sprintf("paged, %d per page", p), p})
	}
	approaches = append(approaches, approach{name: "whole list"})
	for round := range cfg.Rounds {
		for _, ap := range approaches {
			c, requests, err := env.CountingClient()
			if err != nil {
				return nil, err
			}
			var objs func() (iter.Seq2[metav1.Object, error], error)
			switch {
			case ap.pageSize > 0:
				objs = func() (iter.Seq2[metav1.Object, error], error) {
					return fleet.ListObjects(ctx, c, gvk, ap.pageSize, client.InNamespace(ns)), nil
				}
			default:
				objs = func() (iter.Seq2[metav1.Object, error], error) {
					list := &unstructured.UnstructuredList{}
					list.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("WidgetList"))
					if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
						return nil, err
					}
					return func(yield func(metav1.Object, error) bool) {
						for i := range list.Items {
							if !yield(&list.Items[i], nil) {
								return
							}
						}
					}, nil
				}
			}
			r, err := measureAudit(ap.name, objs)
			if err != nil {
				return nil, err
			}
			r.Lists = requests.Count("get") // a list is a GET of the collection
			if r.Objects != cfg.Objects {
				return nil, fmt.Errorf("%s audit saw %d objects, want %d", ap.name, r.Objects, cfg.Objects)
			}
			logf("audit round %d, %s: %d objects, %d list requests, %v, peak heap +%.1f MiB, peak live +%.1f MiB, allocated %.1f MiB",
				round+1, ap.name, r.Objects, r.Lists, r.Wall.Round(time.Millisecond), mib(r.PeakHeap), mib(r.PeakLive), mib(r.Allocated))
			out = append(out, r)
		}
	}
	return out, nil
}

// measureAudit runs one audit over what objs returns (the listing is part
// of the run) and samples the heap meanwhile.
func measureAudit(approach string, objs func() (iter.Seq2[metav1.Object, error], error)) (AuditResult, error) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	base, baseLive := heapObjects()
	stop, peak := make(chan struct{}), make(chan [2]uint64)
	go func() {
		highest, highestLive := base, baseLive
		sample := func() {
			h, l := heapObjects()
			highest, highestLive = max(highest, h), max(highestLive, l)
		}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				sample()
				peak <- [2]uint64{highest, highestLive}
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	began := time.Now()
	seq, err := objs()
	var report *fleet.AuditReport
	if err == nil {
		report, err = fleet.Audit(seq, fleet.AuditOptions{SchemaUnavailable: "not measured"})
	}
	wall := time.Since(began)
	close(stop)
	highest := <-peak
	if err != nil {
		return AuditResult{}, err
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return AuditResult{
		Approach: approach, Objects: report.Objects, Wall: wall,
		PeakHeap: highest[0] - base, PeakLive: highest[1] - baseLive, Allocated: after.TotalAlloc - before.TotalAlloc,
	}, nil
}

// heapObjects reads, without stopping the world, the bytes of heap objects
// (live or not yet collected) and the live heap as of the last collection.
func heapObjects() (objects, live uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// mib converts bytes to MiB.
func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// AuditMedians returns, per approach in first-seen order, the run with the
// median wall time.
func AuditMedians(rs []AuditResult) []AuditResult {
	var order []string
	by := map[string][]AuditResult{}
	for _, r := range rs {
		if _, ok := by[r.Approach]; !ok {
			order = append(order, r.Approach)
		}
		by[r.Approach] = append(by[r.Approach], r)
	}
	var out []AuditResult
	for _, a := range order {
		runs := by[a]
		slices.SortFunc(runs, func(x, y AuditResult) int { return int(x.Wall - y.Wall) })
		out = append(out, runs[len(runs)/2])
	}
	return out
}

// AuditMarkdown renders the medians as a table.
func AuditMarkdown(cfg AuditConfig, rs []AuditResult) string {
	s := fmt.Sprintf("| audit of %d Widgets | list requests | wall time (ms) | peak heap | peak live heap | allocated |\n"+
		"|---|---:|---:|---:|---:|---:|\n", cfg.Objects)
	for _, r := range AuditMedians(rs) {
		s += fmt.Sprintf("| %s | %d | %s | %.1f MiB | %.1f MiB | %.1f MiB |\n",
			r.Approach, r.Lists, ms(r.Wall), mib(r.PeakHeap), mib(r.PeakLive), mib(r.Allocated))
	}
	return s
}
