package ssa

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestLanesSerialiseOneObjectAndNotOthers(t *testing.T) {
	var l lanes
	a := ObjectID{NamespacedName: types.NamespacedName{Name: "a"}}
	b := ObjectID{NamespacedName: types.NamespacedName{Name: "b"}}
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
			n := inAll.Add(1)
			maxAll.Store(max(maxAll.Load(), n))
			if id == a {
				m := inA.Add(1)
				maxA.Store(max(maxA.Load(), m))
				defer inA.Add(-1)
			}
			time.Sleep(5 * time.Millisecond)
			inAll.Add(-1)
		}()
	}
	wg.Wait()
	if maxA.Load() != 1 {
		t.Fatalf("%d holders of one object's lane at once", maxA.Load())
	}
	if maxAll.Load() < 2 {
		t.Fatalf("different objects never ran together (max %d)", maxAll.Load())
	}
	if len(l.lanes) != 0 {
		t.Fatalf("%d lanes left behind", len(l.lanes))
	}
}

func TestLaneWaitHonoursContext(t *testing.T) {
	var l lanes
	id := ObjectID{NamespacedName: types.NamespacedName{Name: "a"}}
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
