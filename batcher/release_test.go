package batcher

import (
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ssa"
)

// What a Flush sent is not kept reachable by what the batch keeps: an entry
// with nothing left lets go of its contributions' array, a finished
// object's work lets go of the observation it started from, and compacting
// leaves no dropped entry in the array the object keeps. The control is the
// plain reslice, which keeps every dropped entry in the array past the end.
func TestFlushLetsGoOfWhatItSent(t *testing.T) {
	e := &entry{contribs: make([]contribution, 2, 8)}
	if e.sent(1); len(e.contribs) != 1 {
		t.Fatalf("one of two sent: %d left, want 1", len(e.contribs))
	}
	if e.sent(1); e.contribs != nil {
		t.Fatalf("all sent: the entry keeps an array of capacity %d", cap(e.contribs))
	}

	w := flushWork{observed: observation{obj: &v1alpha1.Widget{}}, entries: []entryWork{{entry: e, contribs: make([]contribution, 1)}}}
	w.release()
	if w.observed.obj != nil || w.entries[0].contribs != nil || w.entries[0].entry != e {
		t.Fatalf("released work keeps %+v; want only its entries", w)
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
	b.compact()
	o := b.objects[0]
	if len(o.entries) != 1 || o.entries[0] != pending {
		t.Fatalf("compacted to %d entries, want the pending one", len(o.entries))
	}
	for i, x := range o.entries[:cap(o.entries)][1:] {
		if x != nil {
			t.Fatalf("slot %d past the end still holds a dropped entry", i+1)
		}
	}
}

// Observations kept as responses share one empty object of their type, and
// each still decodes into an object of its own. The control is the object
// queued, which an observation must not keep for its type.
func TestObservationsShareTheirEmptyObject(t *testing.T) {
	b := &Batch{}
	queued := []*v1alpha1.Widget{{}, {}}
	obs := make([]observation, 2)
	for i := range obs {
		obs[i] = observation{obj: queued[i]}
		obs[i].answered(ssa.Result{Sent: true, Response: []byte(fmt.Sprintf(`{"metadata":{"name":"w%d"}}`, i))}, b.emptyLike)
	}
	if obs[0].obj != obs[1].obj || obs[0].obj == client.Object(queued[0]) || obs[0].obj == client.Object(queued[1]) {
		t.Fatalf("observations hold %p and %p, want one shared empty object, not the ones queued", obs[0].obj, obs[1].obj)
	}
	for i := range obs {
		got, err := obs[i].get()
		if err != nil || got.GetName() != fmt.Sprintf("w%d", i) || got == b.emptyLike(queued[0]) {
			t.Fatalf("observation %d decodes to %v, %v", i, got, err)
		}
	}
	if like := b.emptyLike(queued[0]); like.GetName() != "" {
		t.Fatalf("decoding modified the shared empty object: %v", like)
	}
}
