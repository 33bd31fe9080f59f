package batcher

import (
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/ssa"
)

// FuzzQueueingOnThePreviousEntry holds the shortcut that queues a
// contribution on the entry of the one before it, without identifying the
// object again (add with no target), to the general path (TargetFor, then add
// with it). The fuzzer's bytes queue a sequence of contributions (typed and unstructured
// Mutators and Edits, for the status or the object, under managers a and b or
// an invalid one, with or without options) for three Widgets, sometimes
// renamed in place between two contributions, once on the same pointers,
// which the shortcut serves, and once on a fresh copy each time, which it
// never serves. Both batches end with the same objects, entries,
// contributions and options, and return the same errors.
func FuzzQueueingOnThePreviousEntry(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{0, 0, 0, 0, 0, 0},
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
		{9, 0, 9, 1, 0, 0, 17, 2, 0, 33, 9, 1},
		{2, 2, 2, 18, 18, 34, 50, 66, 9, 2, 2},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		same, fresh := newBatchFixture(t).b, newBatchFixture(t).b
		widgets := make([]*v1alpha1.Widget, 3)
		for i := range widgets {
			widgets[i] = &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: "ns"}}
		}
		for step, d := range data {
			w := widgets[int(d)%3]
			if d>>6 == 3 { // rename in place: the shortcut must see it is another object now
				w.Name += "x"
				continue
			}
			errSame := queueOne(same, w, d, step)
			errFresh := queueOne(fresh, w.DeepCopy(), d, step)
			if fmt.Sprint(errSame) != fmt.Sprint(errFresh) {
				t.Fatalf("step %d: queued on the same object: %v; on a copy: %v", step, errSame, errFresh)
			}
		}
		if got, want := queued(same), queued(fresh); !reflect.DeepEqual(got, want) {
			t.Fatalf("queued on the same objects:\n%v\non copies:\n%v", got, want)
		}
	})
}

// queueOne queues the contribution d chooses for w: its kind (bits 2-3), its
// manager and options (bits 4-5).
func queueOne(b *Batch, w *v1alpha1.Widget, d byte, step int) error {
	manager := [...]string{"a", "b", "a", "not a manager!"}[d>>4&3]
	var opts []ssa.ApplyOption
	switch d >> 4 & 3 {
	case 1:
		opts = []ssa.ApplyOption{ssa.Guarded}
	case 2:
		opts = []ssa.ApplyOption{ssa.Declarative}
	}
	switch d >> 2 & 3 {
	case 0:
		return Status(b, w, manager, func(ac *acv1alpha1.WidgetApplyConfiguration, _ *v1alpha1.Widget) error {
			ac.WithStatus(acv1alpha1.WidgetStatus().WithPhase(fmt.Sprint(step)))
			return nil
		}, opts...)
	case 1:
		return Object(b, w, manager, label("step", fmt.Sprint(step)), opts...)
	case 2:
		return EditStatus(b, w, manager, func(o *v1alpha1.Widget) error {
			o.Status.Phase = fmt.Sprint(step)
			return nil
		}, opts...)
	default:
		return Status(b, w, manager, func(u *unstructured.Unstructured, _ *v1alpha1.Widget) error {
			return unstructured.SetNestedField(u.Object, fmt.Sprint(step), "status", "phase")
		}, opts...)
	}
}

// queued describes what b holds: per object, in queue order, its entries with
// their contributions' kinds and options.
func queued(b *Batch) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, o := range b.objects {
		for _, e := range o.entries {
			line := fmt.Sprintf("%s mixed=%v:", e.target, e.mixed)
			for i := range e.contribs {
				c := &e.contribs[i]
				var opts ssa.ApplyOptions
				if c.opts != nil {
					opts = *c.opts
				}
				line += fmt.Sprintf(" %T/%v/%v", c.call, opts.Mode, opts.Guarded)
			}
			out = append(out, line)
		}
	}
	return out
}

// The control: a shortcut that took the renamed object for the one queued
// before (as a check of the pointer alone would) queues the second
// contribution on the old name's entry, and the comparison tells it apart.
func TestQueueingComparisonSeesARenamedObject(t *testing.T) {
	renamed, naive := newBatchFixture(t).b, newBatchFixture(t).b
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w0", Namespace: "ns"}}
	stale := w.DeepCopy()
	for _, b := range []*Batch{renamed, naive} {
		if err := queueOne(b, w, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	w.Name = "w0x"
	if err := queueOne(renamed, w, 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := queueOne(naive, stale, 0, 1); err != nil { // the old name, as the naive shortcut keeps it
		t.Fatal(err)
	}
	if got := queued(renamed); len(got) != 2 {
		t.Fatalf("a renamed object queued %v, want an entry for each name", got)
	}
	if reflect.DeepEqual(queued(renamed), queued(naive)) {
		t.Fatal("control: the comparison does not tell a renamed object from the one before")
	}
}
