package ssa

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A tally keeps one series per field manager and kind, in the order first
// counted, and counts the entries left queued in each, past the series it
// holds without allocating.
func TestPending(t *testing.T) {
	tg := func(manager, group, kind string) Target {
		return Target{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Name: "w", Manager: manager}
	}
	var p Pending
	for _, c := range []struct {
		t      Target
		queued bool
	}{
		{tg("a", "g", "Widget"), true}, {tg("a", "g", "Widget"), false}, {tg("a", "g", "Widget"), true},
		{tg("b", "g", "Widget"), false}, {tg("a", "other", "Widget"), true}, {tg("a", "g", "Gadget"), false},
		{tg("c", "g", "Widget"), true}, {tg("c", "g", "Widget"), true}, {tg("a", "g", "Gadget"), true},
	} {
		p.Add(&c.t, c.queued)
	}
	want := []pendingSeries{{[3]string{"a", "g", "Widget"}, 2}, {[3]string{"b", "g", "Widget"}, 0},
		{[3]string{"a", "other", "Widget"}, 1}, {[3]string{"a", "g", "Gadget"}, 1}, {[3]string{"c", "g", "Widget"}, 2}}
	got := append(append([]pendingSeries{}, p.first[:p.n]...), p.more...)
	if len(got) != len(want) {
		t.Fatalf("%d series, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("series %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
