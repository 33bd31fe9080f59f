package ssa

import (
	"context"
	"sync"

	"github.com/statusapply/statusapply/ownership"
)

// lanes serialises this process's applies to one object: the API server redoes
// an apply's merge whenever another write to the object landed first.
type lanes struct {
	mu    sync.Mutex
	lanes map[ownership.ObjectRef]*lane
}

type lane struct {
	sem   chan struct{}
	users int
}

// acquire waits for the object's lane and returns the function that releases it.
func (l *lanes) acquire(ctx context.Context, id ownership.ObjectRef) (release func(), err error) {
	l.mu.Lock()
	if l.lanes == nil {
		l.lanes = map[ownership.ObjectRef]*lane{}
	}
	ln := l.lanes[id]
	if ln == nil {
		ln = &lane{sem: make(chan struct{}, 1)}
		l.lanes[id] = ln
	}
	ln.users++
	l.mu.Unlock()

	done := func() {
		l.mu.Lock()
		if ln.users--; ln.users == 0 {
			delete(l.lanes, id)
		}
		l.mu.Unlock()
	}
	select {
	case ln.sem <- struct{}{}:
		return func() { <-ln.sem; done() }, nil
	case <-ctx.Done():
		done()
		return nil, context.Cause(ctx)
	}
}
