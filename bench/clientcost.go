package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
)

// FixtureManager is the one field manager of the client-cost fixture; it
// owns FixtureConditions conditions.
const (
	FixtureManager    = "writer-0"
	FixtureConditions = 20
)

// fixtureSpec is the reconcile the fixture was written with (On) and the one
// the benchmarks build (Off), so that every built intent changes something.
// names are the fixture's one manager, FixtureManager, named once.
func fixtureSpec(key client.ObjectKey, on bool, names []string) ReconcileSpec {
	return ReconcileSpec{Key: key, Mutators: FixtureConditions, On: on, Names: names}
}

// ClientFixture is an object as the API server returned it after real
// applies, managedFields included, and what the client-side benchmarks need
// around it.
type ClientFixture struct {
	Observed *v1alpha1.Widget
	scheme   *runtime.Scheme
	tc       managedfields.TypeConverter
	names    []string // FixtureManager, for fixtureSpec
}

// NewClientFixture wraps an observed Widget.
func NewClientFixture(observed *v1alpha1.Widget) (*ClientFixture, error) {
	scheme, err := apiserver.NewScheme()
	if err != nil {
		return nil, err
	}
	return &ClientFixture{Observed: observed, scheme: scheme, tc: applyconfiguration.NewTypeConverter(scheme), names: []string{FixtureManager}}, nil
}

// LoadClientFixture reads a fixture written by SaveClientFixture.
func LoadClientFixture(path string) (*ClientFixture, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w := &v1alpha1.Widget{}
	if err := json.Unmarshal(raw, w); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return NewClientFixture(w)
}

// SaveClientFixture writes the observed object as indented JSON.
func SaveClientFixture(path string, f *ClientFixture) error {
	raw, err := json.MarshalIndent(f.Observed, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

func (f *ClientFixture) key() client.ObjectKey { return client.ObjectKeyFromObject(f.Observed) }

// stubClient is a client whose status applies send nothing: the apply is
// encoded as the real client would encode it, and *response is decoded into
// it as the API server's response, as the real client decodes the response.
// The raw apply and statusapply rows both go through it, so that they pay
// the same client wrapper and the same response.
func (f *ClientFixture) stubClient(response *[]byte) client.Client {
	return interceptor.NewClient(fake.NewClientBuilder().WithScheme(f.scheme).Build(), interceptor.Funcs{
		SubResourceApply: func(_ context.Context, _ client.Client, _ string, obj runtime.ApplyConfiguration, _ ...client.SubResourceApplyOption) error {
			if _, err := json.Marshal(obj); err != nil {
				return err
			}
			return json.Unmarshal(*response, obj)
		},
	})
}

// stubApplier is an Applier on stubClient, so that a Flush through it costs
// what statusapply costs on the client.
func (f *ClientFixture) stubApplier(response *[]byte) (*ssa.Applier, error) {
	return ssa.NewApplier(f.stubClient(response), ssa.WithTypeConverter(f.tc), ssa.WithRegisterer(nil))
}

// changing returns the fixture's object as the API server shows it after the
// fixture's manager applied the Off state (index 0) and the On state (index
// 1), each at its own resourceVersion, with the JSON of each: a changing
// reconcile observes one and applies the other, as a controller whose cache
// holds its last write does.
func (f *ClientFixture) changing() (states [2]*v1alpha1.Widget, responses [2][]byte, err error) {
	for i, on := range []bool{false, true} {
		w := f.Observed.DeepCopy()
		s := fixtureSpec(f.key(), on, f.names)
		for j := range s.Mutators {
			meta.SetStatusCondition(&w.Status.Conditions, s.condition(j, w.Generation))
		}
		w.ResourceVersion = fmt.Sprintf("%s%d", f.Observed.ResourceVersion, i)
		states[i] = w
		if responses[i], err = json.Marshal(w); err != nil {
			return states, responses, err
		}
	}
	return states, responses, nil
}

// buildAC is the hand-written apply configuration of the fixture's manager,
// decided from w.
func (f *ClientFixture) buildAC(w *v1alpha1.Widget, on bool) (*acv1alpha1.WidgetApplyConfiguration, error) {
	s := fixtureSpec(f.key(), on, f.names)
	ac := acv1alpha1.Widget(w.Name, w.Namespace).WithStatus(acv1alpha1.WidgetStatus())
	for j := range s.Mutators {
		if err := ssa.SetCondition(&ac.Status.Conditions, w.Status.Conditions, w.Generation, s.condition(j, w.Generation)); err != nil {
			return nil, err
		}
	}
	return ac, nil
}

// ClientBenchmark is one named client-side benchmark body.
type ClientBenchmark struct {
	Name string
	What string
	Run  func(b *testing.B)
}

// ClientBenchmarks returns scenario 4's benchmark bodies on f. Each body
// fails the benchmark on an error; none sends a request.
func ClientBenchmarks(f *ClientFixture) []ClientBenchmark {
	return []ClientBenchmark{
		{Name: "Build", What: "build one manager's apply configuration: 20 × ssa.SetCondition", Run: func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.buildAC(f.Observed, false); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{Name: "Encode", What: "encode one entry's apply configuration as JSON", Run: func(b *testing.B) {
			ac, err := f.buildAC(f.Observed, false)
			if err != nil {
				b.Fatal(err)
			}
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ac)
			if err != nil {
				b.Fatal(err)
			}
			apply := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: content})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(apply); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{Name: "RawApplyClientSide", What: "hand-written apply: build (20 × ssa.SetCondition) and `Status().Apply` through the same encode-only client", Run: func(b *testing.B) {
			states, responses, err := f.changing()
			if err != nil {
				b.Fatal(err)
			}
			var response []byte
			c := f.stubClient(&response)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				target := i % 2
				response = responses[target]
				ac, err := f.buildAC(states[1-target], target == 1)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Status().Apply(context.Background(), ac, client.FieldOwner(FixtureManager)); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{Name: "StatusapplyMutators", What: "statusapply reconcile, client side: batch, 20 Mutators, Flush (extract, build, compare, encode)", Run: func(b *testing.B) { f.runChanging(b, queueMutators) }},
		{Name: "StatusapplySteady", What: "statusapply reconcile that changes nothing, client side: batch, 20 Mutators, Flush (no request)", Run: func(b *testing.B) {
			states, responses, err := f.changing()
			if err != nil {
				b.Fatal(err)
			}
			response := responses[1]
			a, err := f.stubApplier(&response)
			if err != nil {
				b.Fatal(err)
			}
			s := fixtureSpec(f.key(), true, f.names)
			reconcileOnce(b, a, states[0], s, queueMutators) // the manager applies the On state once; the Applier remembers it
			b.ReportAllocs()
			for b.Loop() {
				reconcileOnce(b, a, states[1], s, queueMutators)
			}
		}},
		{Name: "StatusapplyEdits", What: "the same with 20 typed-object Edits (batcher.EditStatus: apply configuration derived by diff)", Run: func(b *testing.B) { f.runChanging(b, queueEdits) }},
	}
}

// ClientCostResult is one client-side benchmark's result: the median run's
// when it ran several times.
type ClientCostResult struct {
	Name        string  `json:"name"`
	What        string  `json:"what"`
	NsPerOp     float64 `json:"nsPerOp"`
	AllocsPerOp int64   `json:"allocsPerOp"`
	BytesPerOp  int64   `json:"bytesPerOp"`
	N           int     `json:"n"`
	// Runs is every run's ns/op, in run order.
	Runs []float64 `json:"nsPerOpRuns,omitempty"`
}

// RoundTrip is the wall time of one apply to the API server.
type RoundTrip struct {
	What string        `json:"what"`
	N    int           `json:"n"`
	P50  time.Duration `json:"p50Ns"`
	Mean time.Duration `json:"meanNs"`
}

// PrepareClientFixture writes a Widget on the API server the way the fixture
// needs it (one manager, 20 conditions, by real applies), measures n apply
// round trips of that manager on the way (each flips every condition), and
// returns the object as read back.
func PrepareClientFixture(ctx context.Context, h *Harness, ns string, n int) (*ClientFixture, RoundTrip, error) {
	rt := RoundTrip{What: "one status apply of 20 conditions (one manager), each changing them, on envtest", N: n}
	w, err := h.CreateWidget(ctx, ns, "client-cost")
	if err != nil {
		return nil, rt, err
	}
	key := client.ObjectKeyFromObject(w)
	names := []string{FixtureManager}
	var times []time.Duration
	var total time.Duration
	for i := range n + 1 { // the last apply leaves every condition On
		s := fixtureSpec(key, (n-i)%2 == 0, names)
		ac := acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus())
		for j := range s.Mutators {
			if err := ssa.SetCondition(&ac.Status.Conditions, nil, w.Generation, s.condition(j, w.Generation)); err != nil {
				return nil, rt, err
			}
		}
		start := time.Now()
		if err := h.Env.Client.Status().Apply(ctx, ac, client.FieldOwner(FixtureManager)); err != nil {
			return nil, rt, err
		}
		if i > 0 { // the first apply creates the manager's entry
			d := time.Since(start)
			times = append(times, d)
			total += d
		}
	}
	rt.P50 = Percentile(times, 50)
	if len(times) > 0 {
		rt.Mean = total / time.Duration(len(times))
	}
	observed := &v1alpha1.Widget{}
	if err := h.Env.Client.Get(ctx, key, observed); err != nil {
		return nil, rt, err
	}
	observed.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	f, err := NewClientFixture(observed)
	return f, rt, err
}

// RunClientCost runs every client-side benchmark on f with testing.Benchmark,
// rounds times, the benchmarks in a rotating order, so that a noisy stretch of
// the machine does not fall on one benchmark only; each result is the run with
// the median ns/op.
func RunClientCost(f *ClientFixture, rounds int, logf func(string, ...any)) []ClientCostResult {
	cbs := ClientBenchmarks(f)
	runs := make([][]ClientCostResult, len(cbs))
	for round := range max(rounds, 1) {
		for k := range cbs {
			i := (k + round) % len(cbs)
			cb := cbs[i]
			r := testing.Benchmark(cb.Run)
			res := ClientCostResult{Name: cb.Name, What: cb.What, N: r.N, AllocsPerOp: r.AllocsPerOp(), BytesPerOp: r.AllocedBytesPerOp()}
			if r.N > 0 {
				res.NsPerOp = float64(r.T.Nanoseconds()) / float64(r.N)
			}
			logf("client round %d %-20s %10.0f ns/op %6d allocs/op %8d B/op", round+1, res.Name, res.NsPerOp, res.AllocsPerOp, res.BytesPerOp)
			runs[i] = append(runs[i], res)
		}
	}
	out := make([]ClientCostResult, 0, len(cbs))
	for _, rs := range runs {
		ns := make([]float64, len(rs))
		for j, r := range rs {
			ns[j] = r.NsPerOp
		}
		sorted := slices.SortedFunc(slices.Values(rs), func(a, b ClientCostResult) int { return cmp.Compare(a.NsPerOp, b.NsPerOp) })
		med := sorted[(len(sorted)-1)/2]
		med.Runs = ns
		out = append(out, med)
	}
	return out
}

// queueFunc queues the fixture's status functions of s on batch, observing
// observed.
type queueFunc func(batch *batcher.Batch, observed *v1alpha1.Widget, s ReconcileSpec) error

// queueMutators queues one Mutator per condition, as apply-based status
// functions are written.
func queueMutators(batch *batcher.Batch, observed *v1alpha1.Widget, s ReconcileSpec) error {
	for j := range s.Mutators {
		if err := batcher.Status(batch, observed, FixtureManager, s.statusFunction(j)); err != nil {
			return err
		}
	}
	return nil
}

// queueEdits queues one Edit per condition, as status functions written for
// merge patches are.
func queueEdits(batch *batcher.Batch, observed *v1alpha1.Widget, s ReconcileSpec) error {
	for j := range s.Mutators {
		err := batcher.EditStatus(batch, observed, FixtureManager, func(w *v1alpha1.Widget) error {
			meta.SetStatusCondition(&w.Status.Conditions, s.condition(j, w.Generation))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// reconcileOnce is one statusapply reconcile: a batch, queue, Flush.
func reconcileOnce(b *testing.B, a *ssa.Applier, observed *v1alpha1.Widget, s ReconcileSpec, queue queueFunc) {
	batch := batcher.New(a)
	if err := queue(batch, observed, s); err != nil {
		b.Fatal(err)
	}
	if err := batch.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// runChanging benchmarks reconciles that change every condition, as scenario
// 1's changing phase: each observes the state the previous one applied, as
// the API server returned it, and applies the other.
func (f *ClientFixture) runChanging(b *testing.B, queue queueFunc) {
	states, responses, err := f.changing()
	if err != nil {
		b.Fatal(err)
	}
	var response []byte
	a, err := f.stubApplier(&response)
	if err != nil {
		b.Fatal(err)
	}
	specs := [2]ReconcileSpec{fixtureSpec(f.key(), false, f.names), fixtureSpec(f.key(), true, f.names)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		target := i % 2
		response = responses[target]
		reconcileOnce(b, a, states[1-target], specs[target], queue)
	}
}
