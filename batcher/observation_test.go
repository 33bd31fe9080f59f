package batcher

import (
	"context"
	"fmt"
	"github.com/statusapply/statusapply/internal/objects"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
)

// seen is what one mutator observed.
type seen struct {
	rv         string
	conditions []string
}

// recordingMutator sets condition typ and records what it observed.
func recordingMutator(typ string, into *seen) Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration] {
	return func(ac *acv1alpha1.WidgetApplyConfiguration, o *v1alpha1.Widget) error {
		into.rv = o.ResourceVersion
		into.conditions = nil
		for _, c := range o.Status.Conditions {
			into.conditions = append(into.conditions, c.Type)
		}
		if ac.Status == nil {
			ac.WithStatus(acv1alpha1.WidgetStatus())
		}
		return ssa.SetCondition(&ac.Status.Conditions, o.Status.Conditions, o.Generation,
			metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Set"})
	}
}

// TestLaterEntriesObserveTheResponse: Flush leaves a response undecoded until
// something needs it, and what needs it must still see the response, not the
// object as queued: the next entry of the same object, the next Flush of the
// batch, a result hook. The control is the object as queued, which a batch
// that did not move its observation along would build on: its
// resourceVersion and conditions differ from every observation asserted here.
func TestLaterEntriesObserveTheResponse(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	queued := f.widget(t, "w0")
	var a, b, c, next seen
	for _, q := range []struct {
		manager string
		mutate  Mutator[*v1alpha1.Widget, *acv1alpha1.WidgetApplyConfiguration]
		opts    []ssa.ApplyOption
	}{
		{"a", recordingMutator("A", &a), nil},
		{"b", recordingMutator("B", &b), []ssa.ApplyOption{ssa.Guarded}},
		{"c", recordingMutator("C", &c), nil},
	} {
		if err := Status(f.b, queued, q.manager, q.mutate, q.opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	final := f.widget(t, "w0")
	if a.rv != queued.ResourceVersion || len(a.conditions) != 0 {
		t.Fatalf("the first entry observed %+v, want the object as queued (rv %s, no conditions)", a, queued.ResourceVersion)
	}
	if b.rv == queued.ResourceVersion || !slices.Equal(b.conditions, []string{"A"}) {
		t.Fatalf("the second entry observed %+v, want the response to the first (condition A, not rv %s)", b, queued.ResourceVersion)
	}
	if c.rv == b.rv || !slices.Equal(c.conditions, []string{"A", "B"}) {
		t.Fatalf("the third entry observed %+v, want the response to the second (conditions A, B)", c)
	}

	// The next Flush of the batch builds on the last response, whatever
	// stale object the contribution names.
	if err := Status(f.b, queued, "d", recordingMutator("D", &next)); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if next.rv != final.ResourceVersion || next.rv == queued.ResourceVersion || !slices.Equal(next.conditions, []string{"A", "B", "C"}) {
		t.Fatalf("the next Flush observed %+v, want the last response (rv %s, conditions A, B, C)", next, final.ResourceVersion)
	}

	// A result hook reads the response decoded, in the observed Go type.
	var hooked []runtime.Object
	hb := New(f.b.applier, WithResultHook(func(_ ssa.Target, res ssa.Result, _ error) { hooked = append(hooked, res.Object) }))
	if err := Status(hb, f.widget(t, "w0"), "e", recordingMutator("E", &seen{})); err != nil {
		t.Fatal(err)
	}
	if err := hb.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	latest := f.widget(t, "w0")
	if len(hooked) != 1 {
		t.Fatalf("the hook ran %d times, want 1", len(hooked))
	}
	if w, ok := hooked[0].(*v1alpha1.Widget); !ok || w.ResourceVersion != latest.ResourceVersion || meta.FindStatusCondition(w.Status.Conditions, "E") == nil {
		t.Fatalf("the hook got %#v, want the response as a *v1alpha1.Widget at %s with condition E", hooked[0], latest.ResourceVersion)
	}
}

// TestLaterEntriesObserveTheResponseUnstructured: an unstructured object's
// pending response is decoded as unstructured content of the same kind.
func TestLaterEntriesObserveTheResponseUnstructured(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	w := f.widget(t, "w1")
	u := asUnstructured(t, w)
	var observedKinds []string
	var rvs []string
	set := func(typ string) Mutator[*unstructured.Unstructured, *unstructured.Unstructured] {
		return func(ac *unstructured.Unstructured, o *unstructured.Unstructured) error {
			observedKinds = append(observedKinds, o.GetKind())
			rvs = append(rvs, o.GetResourceVersion())
			return unstructured.SetNestedSlice(ac.Object, []any{map[string]any{
				"type": typ, "status": "True", "reason": "Set", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z",
			}}, "status", "conditions")
		}
	}
	if err := Status(f.b, u, "a", set("A")); err != nil {
		t.Fatal(err)
	}
	if err := Status(f.b, u, "b", set("B")); err != nil {
		t.Fatal(err)
	}
	if err := f.b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rvs) != 2 || rvs[0] != w.ResourceVersion || rvs[1] == w.ResourceVersion || observedKinds[1] != "Widget" {
		t.Fatalf("observed kinds %v at %v, want Widget at %s and then at the first response's", observedKinds, rvs, w.ResourceVersion)
	}
}

// TestKeptResponsesArePacked: a Flush of many objects keeps each object's
// last response compressed (against a dictionary from packDictObjects
// objects on), and the next Flush builds on it as on the response itself
// (test/integration holds the same on the API server, whose responses carry
// managedFields, with an Applier that remembers nothing). The control is the
// response as the client got it: unpacking gives it back byte for byte, and
// it is larger than its packing.
func TestKeptResponsesArePacked(t *testing.T) {
	for _, n := range []int{2, packDictObjects} {
		t.Run(fmt.Sprintf("%d objects", n), func(t *testing.T) {
			testKeptResponsesArePacked(t, n)
		})
	}
}

func testKeptResponsesArePacked(t *testing.T, n int) {
	ctx := context.Background()
	var objs []client.Object
	for i := range n {
		objs = append(objs, &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: "ns", UID: types.UID(fmt.Sprintf("u%d", i))}})
	}
	c, tc := fakeWidgetClient(t, objs...)
	a, err := ssa.NewApplier(c, ssa.WithTypeConverter(tc), ssa.WithRegisterer(nil))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{b: New(a), c: c}
	queued := make([]*v1alpha1.Widget, n)
	for i := range n {
		queued[i] = f.widget(t, fmt.Sprintf("w%d", i))
		for _, m := range []string{"a", "b"} {
			if err := Status(f.b, queued[i], m, recordingMutator(strings.ToUpper(m), &seen{})); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if (f.b.dict != nil) != (n >= packDictObjects) {
		t.Fatalf("%d objects: dictionary %v", n, f.b.dict)
	}
	sent := make([][]byte, n) // the last response of each object, as the client got it
	for i := range n {
		o := objectAt(f.b, ownership.ObjectRef{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: queued[i].Name})
		if o == nil || !o.observed.packed || o.observed.dict != f.b.dict {
			t.Fatalf("%s: the batch keeps %+v, want its last response packed", queued[i].Name, o)
		}
		raw, err := o.observed.unpacked()
		if err != nil {
			t.Fatal(err)
		}
		sent[i] = raw
		got, err := objects.DecodeAs(raw, reflect.TypeFor[*v1alpha1.Widget]())
		if err != nil || got.GetResourceVersion() != f.widget(t, queued[i].Name).ResourceVersion || len(o.observed.response) >= len(raw) {
			t.Fatalf("%s: unpacked to %d bytes (packed %d) at %v, %v; want the last response, larger than its packing",
				queued[i].Name, len(raw), len(o.observed.response), got, err)
		}
		if again, _ := o.observed.pack(nil, nil); !again.packed || &again.response[0] != &o.observed.response[0] {
			t.Fatalf("%s: packing a packed observation packed it again", queued[i].Name)
		}
	}

	next := make([]*seen, n)
	for i := range n {
		next[i] = &seen{}
		// The stale object queued first: the batch builds on its observation.
		if err := Status(f.b, queued[i], "c", recordingMutator("C", next[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		last, err := objects.DecodeAs(sent[i], reflect.TypeFor[*v1alpha1.Widget]())
		if err != nil {
			t.Fatal(err)
		}
		if next[i].rv != last.GetResourceVersion() || !slices.Equal(next[i].conditions, []string{"A", "B"}) {
			t.Fatalf("%s: the next Flush observed %+v, want the kept response (rv %s, conditions A, B)", queued[i].Name, next[i], last.GetResourceVersion())
		}
	}
}
