package batcher_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/ssa"
)

// inFlight counts concurrent status applies, overall and per object.
type inFlight struct {
	mu        sync.Mutex
	now       int
	max       int
	perObject map[string]int
	maxObject int
}

func (f *inFlight) enter(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.perObject == nil {
		f.perObject = map[string]int{}
	}
	f.now++
	f.perObject[name]++
	f.max = max(f.max, f.now)
	f.maxObject = max(f.maxObject, f.perObject[name])
}

func (f *inFlight) leave(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now--
	f.perObject[name]--
}

// newFixture returns an Applier on a fake client holding n Widgets named w0..,
// whose status applies take a little while and are counted by f.
func newFixture(t *testing.T, n int, f *inFlight) (*ssa.Applier, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	builder := fake.NewClientBuilder().WithScheme(scheme).
		WithTypeConverters(applyconfiguration.NewTypeConverter(scheme)).
		WithStatusSubresource(&v1alpha1.Widget{})
	for i := range n {
		builder.WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: "ns"}})
	}
	c := interceptor.NewClient(builder.Build(), interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			name := fmt.Sprint(obj)
			if u, ok := obj.(interface{ GetName() string }); ok {
				name = u.GetName()
			}
			if f != nil {
				f.enter(name)
				defer f.leave(name)
				time.Sleep(5 * time.Millisecond)
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(scheme)), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a, c
}

func widget(t *testing.T, c client.Client, name string) *v1alpha1.Widget {
	t.Helper()
	w := &v1alpha1.Widget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func setPhase(phase string) batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase(phase))
		return nil
	}
}

func TestFlushBoundsParallelismAcrossObjects(t *testing.T) {
	f := &inFlight{}
	a, c := newFixture(t, 6, f)
	b := batcher.New(a, batcher.WithConcurrency(2))
	for i := range 6 {
		if err := batcher.Status(b, widget(t, c, fmt.Sprintf("w%d", i)), "m", setPhase("On")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.max != 2 {
		t.Fatalf("at most %d objects were written at once, want exactly 2", f.max)
	}
}

func TestApplierSerialisesAppliesToOneObject(t *testing.T) {
	f := &inFlight{}
	a, c := newFixture(t, 1, f)
	w := widget(t, c, "w0")
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate batches (separate reconciles or writers) sharing one Applier.
			b := batcher.New(a)
			_ = batcher.Status(b, w, fmt.Sprintf("writer-%d", i), setPhase(fmt.Sprintf("P%d", i)))
			if err := b.Flush(context.Background()); err != nil {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if _, ok := f.perObject["w0"]; !ok {
		t.Fatalf("applies were not attributed to w0: %v", f.perObject)
	}
	if f.maxObject != 1 {
		t.Fatalf("%d applies to one object were in flight at once, want 1", f.maxObject)
	}
	if f.now != 0 || failed.Load() == 8 {
		t.Fatalf("in flight at the end %d, failed %d", f.now, failed.Load())
	}
}

func TestMutatorErrorKeepsItsEntryAndSendsTheRest(t *testing.T) {
	a, c := newFixture(t, 2, nil)
	b := batcher.New(a)
	boom := errors.New("boom")
	if err := batcher.Status(b, widget(t, c, "w0"), "m", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return boom }); err != nil {
		t.Fatal(err)
	}
	if err := batcher.Status(b, widget(t, c, "w1"), "m", setPhase("On")); err != nil {
		t.Fatal(err)
	}
	err := b.Flush(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("Flush error %v does not wrap the mutator's", err)
	}
	var applyErr *ssa.Error
	if !errors.As(err, &applyErr) || applyErr.Target.Name != "w0" {
		t.Fatalf("Flush error %v does not name the entry", err)
	}
	if p := b.Pending(); len(p) != 1 || p[0].Name != "w0" {
		t.Fatalf("pending %v, want only w0", p)
	}
	if got := widget(t, c, "w1").Status.Phase; got != "On" {
		t.Fatalf("w1 phase %q, want On", got)
	}
}

func TestPendingOrdersMainResourceFirst(t *testing.T) {
	a, c := newFixture(t, 1, nil)
	b := batcher.New(a)
	w := widget(t, c, "w0")
	_ = batcher.Status(b, w, "m", setPhase("On"))
	_ = batcher.Object(b, w, "m", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error { return nil })
	_ = batcher.Status(b, w, "m", setPhase("Off"))
	p := b.Pending()
	if len(p) != 2 || p[0].Subresource != ssa.MainResource || p[1].Subresource != ssa.StatusSubresource {
		t.Fatalf("pending %v, want the main resource entry, then one status entry", p)
	}
}
