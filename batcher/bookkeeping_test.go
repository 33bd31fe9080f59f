package batcher

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
	"github.com/statusapply/statusapply/ssa"
)

// fixture is a Batch on a fake client holding Widgets w0 and w1, with the
// Applier's metrics in a registry of its own.
type fixture struct {
	b   *Batch
	c   client.Client
	reg *prometheus.Registry
}

func newBatchFixture(t *testing.T) *fixture {
	t.Helper()
	c, tc := fakeWidgetClient(t,
		&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns", UID: "u0"}},
		&v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "ns", UID: "u1"}},
	)
	reg := prometheus.NewRegistry()
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{b: New(a), c: c, reg: reg}
}

// fakeWidgetClient is controller-runtime's fake client holding objs, serving
// Widgets with their status subresource and their schema (also returned, for
// the Applier): the unit tests' stand-in for the API server.
func fakeWidgetClient(t *testing.T, objs ...client.Object) (client.WithWatch, managedfields.TypeConverter) {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	tc := applyconfiguration.NewTypeConverter(s)
	c := fake.NewClientBuilder().WithScheme(s).
		WithTypeConverters(tc).
		WithStatusSubresource(&v1alpha1.Widget{}).
		WithObjects(objs...).Build()
	return c, tc
}

func (f *fixture) widget(t *testing.T, name string) *v1alpha1.Widget {
	t.Helper()
	w := &v1alpha1.Widget{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, w); err != nil {
		t.Fatal(err)
	}
	return w
}

// pending reads statusapply_pending_entries for manager.
func (f *fixture) pending(t *testing.T, manager string) (float64, bool) {
	t.Helper()
	families, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != "statusapply_pending_entries" {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "manager" && l.GetValue() == manager {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// counter sums a counter over all its labels.
func (f *fixture) counter(t *testing.T, name string) float64 {
	t.Helper()
	families, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, fam := range families {
		if fam.GetName() == name {
			for _, m := range fam.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func phase(p string) Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		if ac.Status == nil {
			ac.WithStatus(acv1alpha1.WidgetStatus())
		}
		ac.Status.WithPhase(p)
		return nil
	}
}

func label(k, v string) Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		ac.WithLabels(map[string]string{k: v})
		return nil
	}
}

// mutatorOf is the contribution Status and Object queue for m.
func mutatorOf[O client.Object, AC any](m Mutator[O, AC]) contribution {
	return contribution{fn: m, call: mutatorCaller[O, AC]{}}
}

// The fast path of add takes only the object queued last, unrenamed.
func TestAddOnLastTakesOnlyTheSameObject(t *testing.T) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns"}}
	gvk := v1alpha1.SchemeGroupVersion.WithKind("Widget")
	target := ssa.Target{GVK: gvk, Namespace: "ns", Name: "w0", Subresource: ssa.StatusSubresource, Manager: "m"}
	b := &Batch{}
	c := mutatorOf(phase("On"))
	isLast := func(obj client.Object) bool {
		t.Helper()
		queued, err := b.add(obj, ssa.StatusSubresource, "m", nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		return queued
	}
	if isLast(w) {
		t.Fatal("last before any contribution")
	}
	b.last.obj, b.last.target, b.last.object = w, target, &object{}
	if !isLast(w) {
		t.Fatal("the object just queued is not last")
	}
	if isLast(w.DeepCopy()) {
		t.Error("another object of the same name: taken as last")
	}
	w.Name = "renamed"
	if isLast(w) {
		t.Error("a renamed object: taken as last")
	}
	w.Name, w.Namespace = "w0", "other"
	if isLast(w) {
		t.Error("an object moved to another namespace: taken as last")
	}

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace("ns")
	u.SetName("w0")
	b.last.obj = u
	if !isLast(u) {
		t.Fatal("the same unstructured object is not taken as last")
	}
	u.SetKind("Gadget")
	if isLast(u) {
		t.Fatal("an unstructured object of another kind: taken as last")
	}
}

// Contributions that take turns between managers of one object join their
// managers' entries without checking the object again; a manager new to the
// object is checked first, so a bad name is refused even right after a good
// one on the same object.
func TestAddToLastFindsTheManagersEntry(t *testing.T) {
	f := newBatchFixture(t)
	w := f.widget(t, "w0")
	for _, m := range []string{"a", "b", "a", "b", "a"} {
		if err := Object(f.b, w, m, label(m, "1")); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int{}
	for _, e := range f.b.objects[0].entries {
		counts[e.target.Manager] = len(e.contribs)
	}
	if counts["a"] != 3 || counts["b"] != 2 || len(counts) != 2 {
		t.Fatalf("contributions per manager %v, want a: 3, b: 2", counts)
	}
	if err := Object(f.b, w, "bad\nname", label("c", "1")); !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("a bad manager after good ones on the same object: %v, want ErrInvalidInput", err)
	}
	if err := Object(f.b, w, "", label("c", "1")); !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("an empty manager: %v, want ErrInvalidInput", err)
	}
}

// A contribution queued after a Flush, for the object and manager of the
// last one before it, joins a queued entry: appending to the entry the
// Flush applied and dropped would lose it.
func TestContributionAfterFlushIsQueued(t *testing.T) {
	f := newBatchFixture(t)
	w := f.widget(t, "w0")
	if err := Object(f.b, w, "m", label("a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := Object(f.b, w, "m", label("b", "2")); err != nil {
		t.Fatal(err)
	}
	if got := f.b.Pending(); len(got) != 1 || got[0].Manager != "m" {
		t.Fatalf("pending %v, want the entry of m", got)
	}
	if err := f.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.widget(t, "w0").Labels; got["b"] != "2" {
		t.Fatalf("labels %v, want b=2", got)
	}
}

func TestApplyOptionsFromContributions(t *testing.T) {
	yield, fail := conflicts.Yield(), conflicts.Fail()
	c := func(opts ...ssa.ApplyOption) contribution {
		var out contribution
		if len(opts) > 0 { // as contributeWith does
			out.opts = (&ssa.ApplyOptions{}).ApplyOptions(opts)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		contribs []contribution
		guarded  bool
		mode     ssa.Mode
		policy   *conflicts.Policy
	}{
		{"plain", []contribution{c(), c()}, false, ssa.Incremental, nil},
		{"one guarded", []contribution{c(ssa.Guarded), c()}, true, ssa.Incremental, nil},
		{"one declarative", []contribution{c(), c(ssa.Declarative)}, false, ssa.Declarative, nil},
		{"a policy, then none", []contribution{c(ssa.OnConflict(yield)), c()}, false, ssa.Incremental, &yield},
		{"the last policy wins", []contribution{c(ssa.OnConflict(yield)), c(ssa.OnConflict(fail))}, false, ssa.Incremental, &fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := applyOptions(tc.contribs)
			if got.Guarded != tc.guarded || got.Mode != tc.mode || (got.Policy == nil) != (tc.policy == nil) ||
				(got.Policy != nil && got.Policy.String() != tc.policy.String()) {
				t.Fatalf("applyOptions = %+v", got)
			}
		})
	}
}

func TestBuildIsTypedOnlyForOneApplyConfigurationType(t *testing.T) {
	typedC := mutatorOf(phase("On"))
	unstructuredC := mutatorOf(Mutator[*v1alpha1.Widget, *unstructured.Unstructured](func(*unstructured.Unstructured, *v1alpha1.Widget) error { return nil }))
	otherC := mutatorOf(Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetStatusApplyConfiguration](func(*acv1alpha1.WidgetStatusApplyConfiguration, *v1alpha1.Widget) error { return nil }))
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns"}}
	target := ssa.Target{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w0",
		Subresource: ssa.StatusSubresource, Manager: "m"}
	edit := contribution{fn: Edit[*v1alpha1.Widget](func(*v1alpha1.Widget) error { return nil }), call: editCaller[*v1alpha1.Widget]{}}
	a, err := ssa.NewApplier(fake.NewClientBuilder().WithScheme(scheme()).Build(), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		contribs []contribution
		typed    bool
	}{
		{"one typed mutator", []contribution{typedC}, true},
		{"two of one type", []contribution{typedC, typedC}, true},
		{"then another type", []contribution{typedC, otherC}, false},
		{"another type third", []contribution{typedC, typedC, otherC}, false},
		{"then an unstructured one", []contribution{typedC, unstructuredC}, false},
		{"an unstructured one first", []contribution{unstructuredC, typedC}, false},
		{"an edit first", []contribution{edit, typedC}, false},
		{"then an edit", []contribution{typedC, edit}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batch := &Batch{}
			for _, c := range tc.contribs {
				if _, err := batch.add(w, target.Subresource, target.Manager, &target, &c); err != nil {
					t.Fatal(err)
				}
			}
			e := batch.objects[0].entries[0]
			var acType reflect.Type // as flush takes it
			if !e.mixed {
				acType = e.contribs[0].call.acType()
			}
			b := build(&ssa.Target{}, a, e.contribs, acType)
			typed := b.Typed
			if b.Func == nil || (typed != nil) != tc.typed {
				t.Fatalf("typed build %v, want %v", typed != nil, tc.typed)
			}
			if tc.typed && typed.Type != reflect.TypeFor[*acv1alpha1.WidgetApplyConfiguration]() {
				t.Fatalf("typed build of %v", typed.Type)
			}
		})
	}
	nonPointer := mutatorOf(Mutator[*v1alpha1.Widget, acv1alpha1.WidgetApplyConfiguration](func(acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return nil }))
	batch := &Batch{}
	if _, err := batch.add(w, target.Subresource, target.Manager, &target, &nonPointer); !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("a non-pointer apply configuration type: %v", err)
	}
	if len(batch.objects) != 0 {
		t.Fatalf("a refused contribution queued %d objects", len(batch.objects))
	}
}

// Edits and mutators mixed in one entry run in queue order, each run of
// edits of one object type compared once; errors say which contribution
// failed.
func TestMixedContributionsRunInOrder(t *testing.T) {
	f := newBatchFixture(t)
	w := f.widget(t, "w0")
	var order []string
	record := func(name string) { order = append(order, name) }
	mustQueue := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustQueue(EditStatus(f.b, w, "m", func(o *v1alpha1.Widget) error {
		record("edit 1")
		o.Status.Phase = "A"
		return nil
	}))
	mustQueue(EditStatus(f.b, w, "m", func(o *v1alpha1.Widget) error {
		record("edit 2 sees " + o.Status.Phase)
		o.Status.Endpoint = "e"
		return nil
	}))
	u := asUnstructured(t, w)
	mustQueue(EditStatus(f.b, u, "m", func(o *unstructured.Unstructured) error {
		p, _, _ := unstructured.NestedString(o.Object, "status", "phase")
		record("unstructured edit sees " + p)
		return unstructured.SetNestedField(o.Object, int64(3), "status", "readyReplicas")
	}))
	mustQueue(Status(f.b, w, "m", func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
		record("mutator sees " + *ac.Status.Phase + " " + *ac.Status.Endpoint)
		ac.Status.WithAttributes(map[string]string{"k": "v"})
		return nil
	}))
	mustQueue(Status(f.b, u, "m", func(ac *unstructured.Unstructured, _ *unstructured.Unstructured) error {
		n, _, _ := unstructured.NestedInt64(ac.Object, "status", "readyReplicas")
		record("unstructured mutator sees " + strings.Repeat("x", int(n)))
		return nil
	}))
	if err := f.b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"edit 1", "edit 2 sees A", "unstructured edit sees ", "mutator sees A e", "unstructured mutator sees xxx"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("order %q, want %q", order, want)
	}
	got := f.widget(t, "w0").Status
	if got.Phase != "A" || got.Endpoint != "e" || got.ReadyReplicas != 3 || got.Attributes["k"] != "v" {
		t.Fatalf("status %+v", got)
	}
}

func TestContributionErrorsNameTheirPlace(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		queue func(b *Batch, w *v1alpha1.Widget) error
		want  string
	}{
		{"the second of three mutators", func(b *Batch, w *v1alpha1.Widget) error {
			_ = Status(b, w, "m", phase("On"))
			_ = Status(b, w, "m", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return boom })
			return Status(b, w, "m", phase("Off"))
		}, "mutator 2 of 3: boom"},
		{"the third of three, an edit after two", func(b *Batch, w *v1alpha1.Widget) error {
			_ = EditStatus(b, w, "m", func(o *v1alpha1.Widget) error { o.Status.Phase = "A"; return nil })
			_ = EditStatus(b, w, "m", func(o *v1alpha1.Widget) error { o.Status.Endpoint = "e"; return nil })
			return EditStatus(b, w, "m", func(*v1alpha1.Widget) error { return boom })
		}, "edit 3 of 3: boom"},
		{"an edit after a mutator", func(b *Batch, w *v1alpha1.Widget) error {
			_ = Status(b, w, "m", phase("On"))
			return EditStatus(b, w, "m", func(*v1alpha1.Widget) error { return boom })
		}, "edit 2 of 2: boom"},
		{"a mutator after two edits", func(b *Batch, w *v1alpha1.Widget) error {
			_ = EditStatus(b, w, "m", func(o *v1alpha1.Widget) error { o.Status.Phase = "A"; return nil })
			_ = EditStatus(b, w, "m", func(o *v1alpha1.Widget) error { o.Status.Endpoint = "e"; return nil })
			return Status(b, w, "m", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return boom })
		}, "mutator 3 of 3: boom"},
		{"the second mutator of a run after an edit", func(b *Batch, w *v1alpha1.Widget) error {
			_ = EditStatus(b, w, "m", func(o *v1alpha1.Widget) error { o.Status.Phase = "A"; return nil })
			_ = Status(b, w, "m", phase("On"))
			return Status(b, w, "m", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return boom })
		}, "mutator 3 of 3: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newBatchFixture(t)
			if err := tc.queue(f.b, f.widget(t, "w0")); err != nil {
				t.Fatal(err)
			}
			err := f.b.Flush(context.Background())
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFailedMainResourceHoldsBackStatus(t *testing.T) {
	f := newBatchFixture(t)
	boom := errors.New("boom")
	w0, w1 := f.widget(t, "w0"), f.widget(t, "w1")
	_ = Status(f.b, w0, "m", phase("On"))
	_ = Object(f.b, w0, "m", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return boom })
	_ = Status(f.b, w1, "m", phase("On"))
	_ = Object(f.b, w1, "m", label("a", "b"))

	results, err := f.b.DryRun(context.Background())
	if !errors.Is(err, boom) || !errors.Is(err, ErrHeldBack) {
		t.Fatalf("dry run error %v, want the main failure and a held back status", err)
	}
	var got []string
	for _, r := range results {
		s := r.Target.Name + " " + string(r.Target.Subresource)
		if r.Err != nil {
			s += " failed"
		}
		if r.Result.Sent {
			s += " sent"
			// A dry run's answer is decoded: it is what the caller reads.
			if w, ok := r.Result.Object.(*v1alpha1.Widget); !ok || w.Name != r.Target.Name {
				t.Fatalf("%s: the dry run's Result.Object is %#v, want the answer as a *v1alpha1.Widget", s, r.Result.Object)
			}
		}
		got = append(got, s)
	}
	// The held back entry is not tried, so it has no result.
	if want := []string{"w0  failed", "w1  sent", "w1 status sent"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("dry run results %q, want %q", got, want)
	}
	// (Whether the server stores nothing is the API server's business: the
	// fake client ignores dry runs of applies.)
	if len(f.b.Pending()) != 4 {
		t.Fatal("a dry run cleared entries")
	}
	if _, found := f.pending(t, "m"); found {
		t.Fatal("a dry run recorded pending entries")
	}
	if n := f.counter(t, "statusapply_applies_total"); n != 0 {
		t.Fatalf("a dry run counted %v applies: they were not sent as dry runs", n)
	}

	err = f.b.Flush(context.Background())
	var applyErr *ssa.Error
	if !errors.Is(err, ErrHeldBack) || !errors.As(err, &applyErr) {
		t.Fatalf("Flush error %v, want ErrHeldBack", err)
	}
	p := f.b.Pending()
	if len(p) != 2 || p[0].Name != "w0" || p[0].Subresource != ssa.MainResource || p[1].Subresource != ssa.StatusSubresource {
		t.Fatalf("pending %v, want w0's two entries", p)
	}
	if n, _ := f.pending(t, "m"); n != 2 {
		t.Fatalf("%v pending recorded, want 2", n)
	}
	if n := f.counter(t, "statusapply_applies_total"); n != 2 {
		t.Fatalf("%v applies counted after the Flush, want w1's two", n)
	}
	if f.widget(t, "w1").Status.Phase != "On" || f.widget(t, "w0").Status.Phase != "" {
		t.Fatal("the held back status was sent, or the other object's was not")
	}
}

func TestFlushIntoJoinsOnlyErrors(t *testing.T) {
	f := newBatchFixture(t)
	earlier := errors.New("earlier")
	err := earlier
	f.b.FlushInto(context.Background(), &err)
	if err != earlier { //nolint:errorlint // the very same error, not a wrapper of it
		t.Fatalf("an empty Flush changed the error to %v", err)
	}
	boom := errors.New("boom")
	_ = Status(f.b, f.widget(t, "w0"), "m", func(*acv1alpha1.WidgetApplyConfiguration, *v1alpha1.Widget) error { return boom })
	f.b.FlushInto(context.Background(), &err)
	if !errors.Is(err, earlier) || !errors.Is(err, boom) {
		t.Fatalf("error %v, want both", err)
	}
	var none error
	_ = Status(f.b, f.widget(t, "w1"), "n", phase("On"))
	f2 := newBatchFixture(t)
	_ = Status(f2.b, f2.widget(t, "w1"), "n", phase("On"))
	f2.b.FlushInto(context.Background(), &none)
	if none != nil {
		t.Fatalf("a successful Flush set the error to %v", none)
	}
	if n, found := f2.pending(t, "n"); !found || n != 0 {
		t.Fatalf("pending %v (recorded %v), want 0 recorded", n, found)
	}
}

func asUnstructured(t *testing.T, w *v1alpha1.Widget) *unstructured.Unstructured {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
	return u
}

// A guarded entry decided from an object that an earlier entry of the same
// Flush found replaced (created again under the same name) is not sent; an
// unguarded one is.
func TestGuardedEntryOfAReplacedObjectIsNotSent(t *testing.T) {
	inner, tc := fakeWidgetClient(t, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns", UID: "u0"}})
	replaced := false
	c := interceptor.NewClient(inner, interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if !replaced {
				// The object is deleted and created again before the first
				// status apply lands; the API server ignores a status
				// apply's uid, so it lands on the successor.
				replaced = true
				if err := c.Delete(ctx, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns"}}); err != nil {
					return err
				}
				if err := c.Create(ctx, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns", UID: "u9"}}); err != nil {
					return err
				}
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	})
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	b := New(a)
	w := &v1alpha1.Widget{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "w0"}, w); err != nil {
		t.Fatal(err)
	}
	_ = Status(b, w, "first", phase("On"))
	_ = Status(b, w, "guarded", phase("On"), ssa.Guarded)
	_ = Status(b, w, "plain", phase("On"))
	err = b.Flush(context.Background())
	var applyErr *ssa.Error
	if !errors.Is(err, ErrReplaced) || !errors.As(err, &applyErr) || applyErr.Target.Manager != "guarded" ||
		!strings.Contains(err.Error(), "(uid u0, now u9)") {
		t.Fatalf("Flush error %v, want ErrReplaced for the guarded entry", err)
	}
	if p := b.Pending(); len(p) != 1 || p[0].Manager != "guarded" {
		t.Fatalf("pending %v, want the guarded entry only", p)
	}
}

// An Edit that removes a condition another manager owns fails before any
// apply: the removal would not happen on the server.
func TestEditRemovingAForeignFieldFails(t *testing.T) {
	f := newBatchFixture(t)
	w := f.widget(t, "w0")
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "R", Message: "m", LastTransitionTime: metav1.Unix(1700000000, 0)}
	}
	w.Status.Conditions = []metav1.Condition{cond("A"), cond("B")}
	w.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "other", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"B\"}":{".":{},"f:type":{},"f:status":{}}}}}`)},
		{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"A\"}":{".":{},"f:type":{},"f:status":{}}}}}`)},
	}
	_ = EditStatus(f.b, w, "m", func(o *v1alpha1.Widget) error { o.Status.Phase = "On"; return nil })
	_ = EditStatus(f.b, w, "m", func(o *v1alpha1.Widget) error {
		o.Status.Conditions = o.Status.Conditions[:1] // drops B
		return nil
	})
	err := f.b.Flush(context.Background())
	if !errors.Is(err, ssa.ErrRemovesForeignField) || !strings.Contains(err.Error(), "edits 1 to 2 of 2") ||
		!strings.Contains(err.Error(), `.status.conditions[type="B"] is owned by other`) {
		t.Fatalf("Flush error %v, want ssa.ErrRemovesForeignField naming B's owner", err)
	}
	if n := f.counter(t, "statusapply_applies_total"); n != 0 {
		t.Fatalf("%v applies sent", n)
	}

	// The control: removing the manager's own condition is allowed.
	f = newBatchFixture(t)
	w.Status.Conditions = []metav1.Condition{cond("A"), cond("B")}
	_ = EditStatus(f.b, w, "m", func(o *v1alpha1.Widget) error {
		o.Status.Conditions = o.Status.Conditions[1:] // drops A
		return nil
	})
	if err := f.b.Flush(context.Background()); err != nil {
		t.Fatalf("removing its own condition: %v", err)
	}
}

// A nil mutator or edit is refused even where a contribution for the same
// object and manager was just queued, and queues nothing: the fast path that
// skips checking the object again must not skip checking the contribution.
func TestNilContributionAfterAValidOneIsRefused(t *testing.T) {
	f := newBatchFixture(t)
	w := f.widget(t, "w0")
	if err := Object(f.b, w, "m", label("a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := Object[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration](f.b, w, "m", nil); !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("a nil mutator: %v, want ErrInvalidInput", err)
	}
	if err := EditObject[*v1alpha1.Widget](f.b, w, "m", nil); !errors.Is(err, ssa.ErrInvalidInput) {
		t.Fatalf("a nil edit: %v, want ErrInvalidInput", err)
	}
	if got := len(f.b.objects[0].entries[0].contribs); got != 1 {
		t.Fatalf("%d contributions queued, want the valid one only", got)
	}
}

// A contribution for an object already queued joins that object's entry;
// objects stay in the order first queued. The same object is queued again
// through another pointer, so the previous contribution's object is not it.
func TestObjectsAreFoundAgain(t *testing.T) {
	for _, n := range []int{1, 3, 24} {
		t.Run(fmt.Sprintf("%d objects", n), func(t *testing.T) {
			f := newBatchFixture(t)
			widgets := make([]*v1alpha1.Widget, n)
			for i := range widgets {
				widgets[i] = &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: "ns"}}
			}
			for round := range 2 {
				for i := range widgets {
					if err := Object(f.b, widgets[i].DeepCopy(), "m", label("round", fmt.Sprint(round))); err != nil {
						t.Fatal(err)
					}
				}
			}
			if len(f.b.objects) != n {
				t.Fatalf("%d objects, want %d", len(f.b.objects), n)
			}
			for i, o := range f.b.objects {
				if o.id.Name != widgets[i].Name || len(o.entries) != 1 || len(o.entries[0].contribs) != 2 {
					t.Fatalf("object %d is %s with %d entries, want %s with one entry of 2 contributions", i, o.id.Name, len(o.entries), widgets[i].Name)
				}
			}
		})
	}
}

// The observation a batch keeps is a copy of the object queued: what the
// caller changes on its object afterwards, in place or by replacing, does not
// reach it, except the managedFields entries' fieldsV1 bytes and timestamps,
// which it shares (they are never modified in place); and queueing leaves
// the caller's object as it was. The control is a shallow copy, which the
// caller's in-place changes reach.
func TestObservationIsACopyOfTheObjectQueued(t *testing.T) {
	f := newBatchFixture(t)
	now := metav1.Now()
	w := f.widget(t, "w0")
	w.Labels = map[string]string{"a": "1"}
	w.Status.Conditions = []metav1.Condition{{Type: "A", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: now}}
	w.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", Time: &now, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{}}}`)},
		{Manager: "n", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{}}`)},
	}
	fields0 := w.ManagedFields[0].FieldsV1
	if err := Status(f.b, w, "m", recordingMutator("A", &seen{})); err != nil {
		t.Fatal(err)
	}
	if len(w.ManagedFields) != 2 || w.ManagedFields[0].FieldsV1 != fields0 {
		t.Fatal("queueing changed the caller's managedFields")
	}
	naive := *w // the control: a shallow copy
	change := func(o *v1alpha1.Widget) {
		o.Labels["a"] = "2"
		o.Status.Conditions[0].Status = metav1.ConditionFalse
		o.ManagedFields[0].Manager = "other"
		o.ManagedFields[1].FieldsV1 = metav1.NewFieldsV1(`{}`)
	}
	change(w)
	got, ok := f.b.objects[0].observed.obj.(*v1alpha1.Widget)
	if !ok {
		t.Fatalf("the observation is %T", f.b.objects[0].observed.obj)
	}
	kept := func(o *v1alpha1.Widget) bool {
		return o.Labels["a"] == "1" && o.Status.Conditions[0].Status == metav1.ConditionTrue &&
			o.ManagedFields[0].Manager == "m" && o.ManagedFields[1].FieldsV1.GetRawString() == `{"f:metadata":{}}`
	}
	if !kept(got) {
		t.Fatalf("the caller's changes reached the observation: %+v", got)
	}
	if got.ManagedFields[0].FieldsV1 != fields0 || got.ManagedFields[0].Time != &now {
		t.Fatal("the observation copied the fieldsV1 bytes and timestamps it is documented to share")
	}
	if kept(&naive) {
		t.Fatal("the control: a shallow copy should see the caller's in-place changes")
	}
}

// How a batch sends an entry is the batch's: a contribution asking for a dry
// run, a forced dry run or an undecoded response is refused, on the first
// contribution for an object as on the fast path after a valid one, and
// nothing is queued; the same contribution without it is.
func TestContributionTakesNoSendOptions(t *testing.T) {
	for name, opt := range map[string]*ssa.ApplyOptions{
		"DryRun": {DryRun: true}, "AsOwner": {DryRun: true, AsOwner: true}, "RawResponse": {RawResponse: true},
	} {
		t.Run(name, func(t *testing.T) {
			f := newBatchFixture(t)
			w := f.widget(t, "w0")
			if err := Object(f.b, w, "m", label("a", "1"), opt); !errors.Is(err, ssa.ErrInvalidInput) || !strings.Contains(err.Error(), name) {
				t.Fatalf("the first contribution: %v, want ErrInvalidInput naming %s", err, name)
			}
			if len(f.b.objects) != 0 {
				t.Fatalf("%d objects queued, want none", len(f.b.objects))
			}
			if err := Object(f.b, w, "m", label("a", "1")); err != nil {
				t.Fatal(err)
			}
			if err := EditObject(f.b, w, "m", func(*v1alpha1.Widget) error { return nil }, opt); !errors.Is(err, ssa.ErrInvalidInput) {
				t.Fatalf("after a valid one: %v, want ErrInvalidInput", err)
			}
			if got := len(f.b.objects[0].entries[0].contribs); got != 1 {
				t.Fatalf("%d contributions queued, want the valid one only", got)
			}
		})
	}
}
