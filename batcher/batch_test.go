package batcher_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
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
	// meet, when set, holds each apply until a second apply to the same object
	// is in flight, or for meet at most: applies that can overlap then do, so
	// both "they overlapped" and "they never did" are decided, not left to
	// scheduling.
	meet time.Duration
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

// hold keeps an apply to name in flight: 5ms, or with meet set until another
// apply to name is in flight as well, or meet has passed.
func (f *inFlight) hold(name string) {
	if f.meet == 0 {
		time.Sleep(5 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(f.meet)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		met := f.perObject[name] >= 2
		f.mu.Unlock()
		if met {
			return
		}
		time.Sleep(time.Millisecond)
	}
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
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithReturnManagedFields()
	for i := range n {
		builder.WithObjects(&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: "ns"}})
	}
	c := interceptor.NewClient(builder.Build(), interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			name := appliedName(obj)
			if f != nil {
				f.enter(name)
				defer f.leave(name)
				f.hold(name)
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	return applierOn(t, c), c
}

// applierOn returns a new Applier writing through c.
func applierOn(t *testing.T, c client.Client) *ssa.Applier {
	t.Helper()
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(applyconfiguration.NewTypeConverter(c.Scheme())), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	return a
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

// setAttribute sets one key of the granular status.attributes map: writers
// setting different keys own different fields and never conflict.
func setAttribute(key, value string) batcher.Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		if ac.Status == nil {
			ac.WithStatus(acv1alpha1.WidgetStatus())
		}
		ac.Status.WithAttributes(map[string]string{key: value})
		return nil
	}
}

// writeConcurrently has 8 writers, each its own field manager writing its own
// key of w0's attributes in its own batch, flush at once through the Applier
// appliers(i) returns, and returns each writer's error from Status or Flush.
func writeConcurrently(t *testing.T, c client.Client, appliers func(i int) *ssa.Applier) []error {
	t.Helper()
	w := widget(t, c, "w0")
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := batcher.New(appliers(i))
			if err := batcher.Status(b, w, fmt.Sprintf("writer-%d", i), setAttribute(fmt.Sprintf("k%d", i), "v")); err != nil {
				errs[i] = fmt.Errorf("queueing: %w", err)
				return
			}
			errs[i] = b.Flush(context.Background())
		}()
	}
	wg.Wait()
	return errs
}

func TestApplierSerialisesAppliesToOneObject(t *testing.T) {
	f := &inFlight{meet: 50 * time.Millisecond}
	a, c := newFixture(t, 1, f)
	// Separate batches (separate reconciles or writers) sharing one Applier.
	errs := writeConcurrently(t, c, func(int) *ssa.Applier { return a })
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer-%d: %v", i, err)
		}
	}
	if f.maxObject != 1 {
		t.Fatalf("%d applies to one object were in flight at once, want 1", f.maxObject)
	}
	if f.now != 0 {
		t.Fatalf("%d applies still in flight at the end", f.now)
	}
	got := widget(t, c, "w0")
	want := map[string]string{}
	for i := range errs {
		want[fmt.Sprintf("k%d", i)] = "v"
	}
	if !reflect.DeepEqual(got.Status.Attributes, want) {
		t.Fatalf("attributes %v, want %v", got.Status.Attributes, want)
	}
	owners := map[string]bool{}
	for _, e := range got.ManagedFields {
		owners[e.Manager] = true
	}
	for i := range errs {
		if m := fmt.Sprintf("writer-%d", i); !owners[m] {
			t.Errorf("%s owns nothing on w0 (managers %v)", m, owners)
		}
	}
}

// The control: the same writers through one Applier each do overlap, so what
// serialises them above is the Applier's lane, not the fixture.
func TestSeparateAppliersDoNotSerialise(t *testing.T) {
	f := &inFlight{meet: 2 * time.Second}
	_, c := newFixture(t, 1, f)
	appliers := make([]*ssa.Applier, 8)
	for i := range appliers {
		appliers[i] = applierOn(t, c)
	}
	errs := writeConcurrently(t, c, func(i int) *ssa.Applier { return appliers[i] })
	if f.maxObject < 2 {
		t.Fatalf("at most %d applies to one object were in flight at once through separate Appliers, want 2 or more", f.maxObject)
	}
	t.Logf("at most %d applies in flight at once; writer errors: %v", f.maxObject, errs)
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
