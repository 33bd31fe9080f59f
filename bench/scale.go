package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// ScaleManagers are scenario 3's field managers; each owns one condition.
var ScaleManagers = []string{"readiness", "networking", "storage"}

// ScaleConfig sizes scenario 3.
type ScaleConfig struct {
	Objects     int
	Concurrency int
	Rounds      int
}

// ScaleResult is one run of one approach over every object.
type ScaleResult struct {
	Approach  string         `json:"approach"`
	Objects   int            `json:"objects"`
	Managers  int            `json:"managers"`
	Parallel  int            `json:"parallel"`
	Wall      time.Duration  `json:"wallNs"`
	CPU       time.Duration  `json:"cpuNs"`
	Mallocs   uint64         `json:"mallocs"`
	Bytes     uint64         `json:"bytes"`
	PeakHeap  uint64         `json:"peakHeapInuseDelta"`
	PeakSys   uint64         `json:"peakSys"`
	Requests  map[string]int `json:"requests"`
	FailedOps int            `json:"failed"`
}

// AppliesPerSecond is the number of (object, manager) writes per second.
func (r ScaleResult) AppliesPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Objects*r.Managers) / r.Wall.Seconds()
}

// scaleCondition is what manager m sets on every object in a run.
func scaleCondition(m int, on bool, generation int64) metav1.Condition {
	st, reason := metav1.ConditionFalse, "Off"
	if on {
		st, reason = metav1.ConditionTrue, "On"
	}
	return metav1.Condition{Type: fmt.Sprintf("S%d", m), Status: st, Reason: reason, Message: "set by " + ScaleManagers[m], ObservedGeneration: generation}
}

// RunScale runs scenario 3: the Objects Widgets in ns (created by
// CreateScaleObjects) get one condition from each of three managers, once with
// one batcher Flush (WithConcurrency(Concurrency)) and once with a hand-written
// loop of raw applies on Concurrency goroutines, alternating which goes first,
// after a warm-up round of both that is not kept. Every run flips the conditions, so every apply changes something. The
// objects are listed before each run, outside the measurement, standing in for
// a controller's cache.
func RunScale(ctx context.Context, h *Harness, ns string, cfg ScaleConfig, logf func(string, ...any)) ([]ScaleResult, error) {
	on := false
	var out []ScaleResult
	// Round 0 warms up and is not kept: the first run after the objects were
	// created is markedly faster than every later one, whatever runs in it,
	// which would favour the approach that happens to go first.
	for round := range cfg.Rounds + 1 {
		order := []string{RawApply, Statusapply}
		if round%2 == 0 {
			order = []string{Statusapply, RawApply}
		}
		for _, approach := range order {
			on = !on
			list := &v1alpha1.WidgetList{}
			if err := h.Env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
				return nil, err
			}
			if len(list.Items) != cfg.Objects {
				return nil, fmt.Errorf("found %d objects in %s, want %d", len(list.Items), ns, cfg.Objects)
			}
			c, requests, _, err := h.Client()
			if err != nil {
				return nil, err
			}
			applier, err := h.Applier(c)
			if err != nil {
				return nil, err
			}
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var meter UsageMeter
			meter.Start()
			sampler := StartPeakSampler(10 * time.Millisecond)
			start := time.Now()
			var failed int
			switch approach {
			case Statusapply:
				failed, err = scaleStatusapply(ctx, applier, list.Items, cfg.Concurrency, on)
			default:
				failed, err = scaleRaw(ctx, c, list.Items, cfg.Concurrency, on)
			}
			wall := time.Since(start)
			peak, sys := sampler.Stop()
			u := meter.Stop()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", approach, err)
			}
			res := ScaleResult{
				Approach: approach, Objects: cfg.Objects, Managers: len(ScaleManagers), Parallel: cfg.Concurrency,
				Wall: wall, CPU: u.CPU, Mallocs: u.Mallocs, Bytes: u.Bytes, PeakSys: sys, FailedOps: failed,
				Requests: requests.Snapshot(),
			}
			if peak > base.HeapInuse {
				res.PeakHeap = peak - base.HeapInuse
			}
			delete(res.Requests, "discovery")
			logf("scale round %d %-12s %d objects: %v, %.0f applies/s, peak heap +%d MiB, %v",
				round, approach, cfg.Objects, wall.Round(time.Millisecond), res.AppliesPerSecond(), res.PeakHeap>>20, res.Requests)
			if round > 0 {
				out = append(out, res)
			}
		}
	}
	return out, nil
}

func scaleStatusapply(ctx context.Context, applier *ssa.Applier, objs []v1alpha1.Widget, parallel int, on bool) (int, error) {
	b := batcher.New(applier, batcher.WithConcurrency(parallel))
	for i := range objs {
		for m, manager := range ScaleManagers {
			err := batcher.Status(b, &objs[i], manager, func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
				if ac.Status == nil {
					ac.WithStatus(acv1alpha1.WidgetStatus())
				}
				return ssa.SetCondition(&ac.Status.Conditions, o.Status.Conditions, o.Generation, scaleCondition(m, on, o.Generation))
			})
			if err != nil {
				return 0, err
			}
		}
	}
	err := b.Flush(ctx)
	// Entries that failed stay queued.
	return len(b.Pending()), err
}

func scaleRaw(ctx context.Context, c client.Client, objs []v1alpha1.Widget, parallel int, on bool) (int, error) {
	work := make(chan *v1alpha1.Widget)
	var (
		mu       sync.Mutex
		failed   int
		firstErr error
		wg       sync.WaitGroup
	)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				for m, manager := range ScaleManagers {
					ac := acv1alpha1.Widget(w.Name, w.Namespace).WithStatus(acv1alpha1.WidgetStatus())
					err := ssa.SetCondition(&ac.Status.Conditions, w.Status.Conditions, w.Generation, scaleCondition(m, on, w.Generation))
					if err == nil {
						err = c.Status().Apply(ctx, ac, client.FieldOwner(manager))
					}
					if err != nil {
						mu.Lock()
						failed++
						firstErr = err
						mu.Unlock()
					}
				}
			}
		}()
	}
	for i := range objs {
		work <- &objs[i]
	}
	close(work)
	wg.Wait()
	return failed, firstErr
}

// CreateScaleObjects creates n Widgets in ns, parallel at a time.
func CreateScaleObjects(ctx context.Context, h *Harness, ns string, n, parallel int) error {
	var g errgroup.Group
	g.SetLimit(parallel)
	for i := range n {
		g.Go(func() error {
			_, err := h.CreateWidget(ctx, ns, fmt.Sprintf("s%04d", i))
			return err
		})
	}
	return g.Wait()
}
