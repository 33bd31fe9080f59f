package batcher

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/ssa"
)

// What a Flush sent is not kept reachable by what the batch keeps: an entry
// with nothing left lets go of its contributions' array, a finished
// object's work lets go of its entries, and dropping sent entries leaves no
// dropped entry in the array the object keeps. The control is the plain
// reslice, which keeps every dropped entry in the array past the end.
func TestFlushLetsGoOfWhatItSent(t *testing.T) {
	e := &entry{contribs: make([]contribution, 2, 8)}
	if e.sent(1); len(e.contribs) != 1 {
		t.Fatalf("one of two sent: %d left, want 1", len(e.contribs))
	}
	if e.sent(1); e.contribs != nil {
		t.Fatalf("all sent: the entry keeps an array of capacity %d", cap(e.contribs))
	}

	// A share with no entries left to hand over goes through every step but
	// the hand-over.
	share := func(b *Batch, w *flushWork) {
		t.Helper()
		var tally ssa.Pending
		if err := b.flushShare(context.Background(), w, 1, &tally, flushMode{consume: func(context.Context, Entry) error { return nil }}); err != nil {
			t.Fatal(err)
		}
	}
	queued := &object{}
	w := flushWork{object: queued, entries: make([]entryWork, 0, 1)}
	share(&Batch{objects: []*object{queued}}, &w)
	if w.entries != nil || w.object != queued {
		t.Fatalf("released work keeps %+v; want only its object", w)
	}

	done, pending := &entry{}, &entry{contribs: make([]contribution, 1)}
	all := []*entry{done, pending, done}
	naive := all[:0]
	for _, x := range all {
		if len(x.contribs) > 0 {
			naive = append(naive, x)
		}
	}
	if naive[:cap(naive)][2] != done {
		t.Fatal("the control expects a plain reslice to keep a dropped entry past the end")
	}
	b := &Batch{objects: []*object{{entries: []*entry{done, pending, done}}}}
	share(b, &flushWork{object: b.objects[0]})
	o := b.objects[0]
	if len(o.entries) != 1 || o.entries[0] != pending {
		t.Fatalf("%d entries left, want the pending one", len(o.entries))
	}
	for i, x := range o.entries[:cap(o.entries)][1:] {
		if x != nil {
			t.Fatalf("slot %d past the end still holds a dropped entry", i+1)
		}
	}
}

// An observation kept as a response keeps its Go type, not the object
// queued, and each decodes into an object of its own of that type.
func TestObservationsKeepTheirTypeNotTheObjectQueued(t *testing.T) {
	queued := []client.Object{&v1alpha1.Widget{}, &unstructured.Unstructured{}}
	for i, q := range queued {
		o := observation{obj: q}
		o.answered(ssa.Result{Sent: true, Response: []byte(fmt.Sprintf(`{"apiVersion":"statusapply.dev/v1alpha1","kind":"Widget","metadata":{"name":"w%d"}}`, i))})
		if o.obj != nil {
			t.Fatalf("observation %d keeps %p, want nothing but its type", i, o.obj)
		}
		got, err := o.get()
		if err != nil || got.GetName() != fmt.Sprintf("w%d", i) || got == q || reflect.TypeOf(got) != reflect.TypeOf(q) {
			t.Fatalf("observation %d decodes to %T %v, %v", i, got, got, err)
		}
	}
}

// TestFlushDropsEntriesAsObjectsAreDone: a Flush of many objects lets an
// object's sent entries go as soon as it is done with the object, not when
// the last object is done, and a contribution queued meanwhile for a dropped
// entry's target (the object and manager the previous contribution went to,
// which add would append to) is queued in a new entry, not lost. The
// control drops the entries the same way but leaves the batch's last entry
// pointing at one of them: the contribution goes into the dropped entry and
// nothing is pending.
func TestFlushDropsEntriesAsObjectsAreDone(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t)
	w0, w1 := f.widget(t, "w0"), f.widget(t, "w1")
	ref0 := ownership.ObjectRef{GVK: v1alpha1.SchemeGroupVersion.WithKind("Widget"), Namespace: "ns", Name: "w0"}
	var b *Batch
	var midFlush []int // w0's entries when w1's entry is done
	b = New(f.b.applier, WithConcurrency(1), WithResultHook(func(tg ssa.Target, _ ssa.Result, _ error) {
		if tg.Name != "w1" {
			return
		}
		b.mu.Lock()
		midFlush = append(midFlush, len(objectAt(b, ref0).entries))
		b.mu.Unlock()
		if err := Status(b, w0, "a", recordingMutator("X", &seen{})); err != nil {
			t.Error(err)
		}
	}))
	// w0 first in the Flush, and the last contribution queued, so that
	// the batch's last entry is w0's.
	for _, w := range []*v1alpha1.Widget{w0, w1, w0} {
		if err := Status(b, w, "a", recordingMutator("A", &seen{})); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(midFlush, []int{0}) {
		t.Fatalf("w0 had %v entries while w1 was written, want its sent entry dropped (0)", midFlush)
	}
	if got := b.Pending(); len(got) != 1 || got[0].Name != "w0" || got[0].Manager != "a" {
		t.Fatalf("pending %v, want the contribution queued for w0 during the Flush", got)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if meta.FindStatusCondition(f.widget(t, "w0").Status.Conditions, "X") == nil {
		t.Fatal("the contribution queued during the Flush was not applied")
	}

	// The control: the last entry left pointing at a dropped one.
	naive := New(f.b.applier)
	if err := Status(naive, w0, "a", recordingMutator("Y", &seen{})); err != nil {
		t.Fatal(err)
	}
	o := objectAt(naive, ref0)
	o.entries[0].sent(len(o.entries[0].contribs))
	o.entries = o.entries[:0] // dropped, naive.last.entry untouched
	if err := Status(naive, w0, "a", recordingMutator("Y", &seen{})); err != nil {
		t.Fatal(err)
	}
	if len(naive.Pending()) != 0 {
		t.Fatal("the control expects the contribution to go into the dropped entry")
	}
}

// objectAt returns the object b queued as id, or nil.
func objectAt(b *Batch, id ownership.ObjectRef) *object {
	for _, o := range b.objects {
		if o.id == id {
			return o
		}
	}
	return nil
}
