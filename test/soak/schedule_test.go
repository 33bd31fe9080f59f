package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// faultKind names one kind of fault the soak injects.
type faultKind string

const (
	// faultLatency delays every byte from the API server through the proxy.
	faultLatency faultKind = "latency"
	// faultTimeout drops every byte through the proxy and closes the
	// connections after a while: requests hang, then fail.
	faultTimeout faultKind = "timeout"
	// faultReset resets connections through the proxy as soon as data flows.
	faultReset faultKind = "reset"
	// faultRestart stops the first API server and starts it again.
	faultRestart faultKind = "restart"
	// faultBurst has another writer change an object right before each of
	// the plan creators' applies to it, more often than their guard retries.
	faultBurst faultKind = "burst"
	// faultRecreate deletes objects and creates them again under their name.
	faultRecreate faultKind = "recreate"
	// faultCancel cancels Flush contexts a few milliseconds in.
	faultCancel faultKind = "cancel"
	// faultSecondServer moves some writers to a second API server on the same
	// etcd, and stops it again.
	faultSecondServer faultKind = "second-apiserver"
)

// faultKinds lists the kinds in the order figures print them.
var faultKinds = []faultKind{
	faultLatency, faultTimeout, faultReset, faultRestart, faultBurst, faultRecreate, faultCancel, faultSecondServer,
}

// fault is one scheduled fault: when it starts, how long it lasts (for the
// kinds that last), and its parameters.
type fault struct {
	at     time.Duration
	kind   faultKind
	length time.Duration
	// latency and jitter of a latency fault.
	latency, jitter time.Duration
	// toxicity is the share of connections a proxy fault affects.
	toxicity float32
	// objects are the indexes of the objects a burst or a re-creation hits.
	objects []int
}

func (f fault) String() string {
	s := fmt.Sprintf("%6.1fs %-16s", f.at.Seconds(), f.kind)
	if f.length > 0 {
		s += fmt.Sprintf(" for %.1fs", f.length.Seconds())
	}
	switch f.kind {
	case faultLatency:
		s += fmt.Sprintf(" %v±%v", f.latency, f.jitter)
	case faultTimeout, faultReset:
		s += fmt.Sprintf(" toxicity %.2f", f.toxicity)
	case faultBurst, faultRecreate:
		s += fmt.Sprintf(" objects %v", f.objects)
	}
	return s
}

// schedule is the run's faults in start order.
type schedule []fault

func (s schedule) String() string {
	lines := make([]string, len(s))
	for i, f := range s {
		lines[i] = f.String()
	}
	return strings.Join(lines, "\n")
}

// count returns how many faults of each kind s holds.
func (s schedule) count() map[faultKind]int {
	out := map[faultKind]int{}
	for _, f := range s {
		out[f.kind]++
	}
	return out
}

// restartSpacing keeps API server restarts apart: each takes several seconds,
// and writers need time in between to show they recover.
const restartSpacing = 60 * time.Second

// newSchedule draws the faults of a run of length d over objects objects from
// seed alone, so that the same seed gives the same schedule. Every run holds at
// least one fault of each kind: one API server restart at 40% of the run, the
// second API server from 25% to 65%, and the rest drawn one after the other,
// one to three seconds apart, until the run's last tenth, which stays calm so
// that the run ends in a known state.
func newSchedule(seed uint64, d time.Duration, objects int) schedule {
	rnd := rand.New(rand.NewPCG(seed, 0x736f616b)) // "soak"
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rnd.Int64N(int64(hi-lo)+1)) }
	pick := func(n int) []int {
		return slices.Sorted(slices.Values(rnd.Perm(objects)[:n]))
	}
	s := schedule{
		{at: d * 25 / 100, kind: faultSecondServer, length: d * 40 / 100},
		{at: d * 40 / 100, kind: faultRestart},
	}
	restarts := []time.Duration{s[1].at}
	// The drawn kinds, each weighted by how often it is drawn; restarts are
	// drawn rarely and kept apart.
	weighted := []struct {
		kind   faultKind
		weight int
	}{
		{faultLatency, 5}, {faultTimeout, 3}, {faultReset, 4}, {faultBurst, 4},
		{faultRecreate, 3}, {faultCancel, 4}, {faultRestart, 1},
	}
	total := 0
	for _, w := range weighted {
		total += w.weight
	}
	// The first draws go round the kinds once, so that even a short run has
	// each; after that they are weighted.
	var firstRound []faultKind
	for _, w := range weighted {
		if w.kind != faultRestart {
			firstRound = append(firstRound, w.kind)
		}
	}
	rnd.Shuffle(len(firstRound), func(i, j int) { firstRound[i], firstRound[j] = firstRound[j], firstRound[i] })
	end := d * 90 / 100
	for t := 2 * time.Second; ; t += between(time.Second, 3*time.Second) {
		var kind faultKind
		if len(firstRound) > 0 {
			kind, firstRound = firstRound[0], firstRound[1:]
		} else {
			n := rnd.IntN(total)
			for _, w := range weighted {
				if n -= w.weight; n < 0 {
					kind = w.kind
					break
				}
			}
		}
		f := fault{at: t, kind: kind}
		switch kind {
		case faultLatency:
			f.length = between(time.Second, 4*time.Second)
			f.latency = between(20*time.Millisecond, 300*time.Millisecond)
			f.jitter = f.latency / 2
			f.toxicity = 1
		case faultTimeout:
			f.length = between(time.Second, 3*time.Second)
			f.toxicity = 0.3 + 0.7*rnd.Float32()
		case faultReset:
			f.length = between(500*time.Millisecond, 2*time.Second)
			f.toxicity = 0.3 + 0.7*rnd.Float32()
		case faultBurst:
			f.length = between(2*time.Second, 5*time.Second)
			f.objects = pick(2 + rnd.IntN(3))
		case faultRecreate:
			f.objects = pick(1 + rnd.IntN(2))
		case faultCancel:
			f.length = between(time.Second, 3*time.Second)
		case faultRestart:
			if slices.ContainsFunc(restarts, func(r time.Duration) bool { return (t - r).Abs() < restartSpacing }) {
				continue
			}
			restarts = append(restarts, t)
		}
		if t+f.length >= end {
			break
		}
		s = append(s, f)
	}
	slices.SortStableFunc(s, func(a, b fault) int { return int(a.at - b.at) })
	return s
}
