package batching

import "testing"

// A tally keeps one series per field manager and kind, in the order first
// counted, and counts the entries left queued in each.
func TestPendingTally(t *testing.T) {
	var p PendingTally
	for _, c := range []struct {
		s      Series
		queued bool
	}{
		{Series{"a", "g", "Widget"}, true}, {Series{"a", "g", "Widget"}, false}, {Series{"a", "g", "Widget"}, true},
		{Series{"b", "g", "Widget"}, false}, {Series{"a", "other", "Widget"}, true}, {Series{"a", "g", "Gadget"}, false},
		{Series{"c", "g", "Widget"}, true}, {Series{"c", "g", "Widget"}, true}, {Series{"a", "g", "Gadget"}, true},
	} {
		p.Add(c.s, c.queued)
	}
	type counted struct {
		s    Series
		left int
	}
	want := []counted{{Series{"a", "g", "Widget"}, 2}, {Series{"b", "g", "Widget"}, 0}, {Series{"a", "other", "Widget"}, 1},
		{Series{"a", "g", "Gadget"}, 1}, {Series{"c", "g", "Widget"}, 2}}
	var got []counted
	p.Each(func(s Series, left int) { got = append(got, counted{s, left}) })
	if len(got) != len(want) {
		t.Fatalf("%d series, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("series %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
