package ssa

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statusapply/statusapply/ownership"
)

// raiseTo raises m to n unless it already holds more, with a compare-and-swap
// loop: a Load followed by a Store could lower a maximum another goroutine
// raised in between.
func raiseTo(m *atomic.Int32, n int32) {
	for {
		cur := m.Load()
		if n <= cur || m.CompareAndSwap(cur, n) {
			return
		}
	}
}

// meet waits until in holds at least 2, or 50ms have passed: holders that can
// overlap then do, so the maxima below do not depend on scheduling.
func meet(in *atomic.Int32) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for in.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

func TestLanesSerialiseOneObjectAndNotOthers(t *testing.T) {
	var l lanes
	a := ownership.ObjectRef{Name: "a"}
	b := ownership.ObjectRef{Name: "b"}
	var inA, maxA, inAll, maxAll atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := a
			if i%2 == 1 {
				id = b
			}
			release, err := l.acquire(context.Background(), id)
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			raiseTo(&maxAll, inAll.Add(1))
			defer inAll.Add(-1)
			if id == a {
				raiseTo(&maxA, inA.Add(1))
				defer inA.Add(-1)
				meet(&inA)
			} else {
				meet(&inAll)
			}
		}()
	}
	wg.Wait()
	if maxA.Load() != 1 {
		t.Fatalf("%d holders of one object's lane at once", maxA.Load())
	}
	if maxAll.Load() != 2 {
		t.Fatalf("at most %d holders of two objects' lanes at once, want 2", maxAll.Load())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lanes) != 0 {
		t.Fatalf("%d lanes left behind", len(l.lanes))
	}
}

func TestLaneWaitHonoursContext(t *testing.T) {
	var l lanes
	id := ownership.ObjectRef{Name: "a"}
	release, err := l.acquire(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := l.acquire(ctx, id); err == nil {
		t.Fatal("acquired a held lane")
	}
}
