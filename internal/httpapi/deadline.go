package httpapi

import (
	"context"
	"sync"
	"time"
)

// lazyDeadline is a request context with a deadline whose timer is only
// armed when something waits on it: a database call does, a 304 served from
// memory never does, and context.WithTimeout's timer and its registration
// with the connection's context were a measurable share of such a request.
type lazyDeadline struct {
	parent   context.Context
	deadline time.Time

	mu     sync.Mutex
	ctx    context.Context // armed: a real context with the deadline
	cancel context.CancelFunc
}

// withLazyDeadline returns ctx bounded by d and the function that ends it,
// which must be called when the request is done, as with WithTimeout.
func withLazyDeadline(ctx context.Context, d time.Duration) (*lazyDeadline, func()) {
	c := &lazyDeadline{parent: ctx, deadline: time.Now().Add(d)}
	return c, c.stop
}

// armed returns the real context, creating it on first use.
func (c *lazyDeadline) armed() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithDeadline(c.parent, c.deadline)
	}
	return c.ctx
}

// stop ends the context: anything still holding it sees it cancelled.
func (c *lazyDeadline) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		ctx, cancel := context.WithCancel(context.WithoutCancel(c.parent))
		cancel()
		c.ctx, c.cancel = ctx, cancel
		return
	}
	c.cancel()
}

func (c *lazyDeadline) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *lazyDeadline) Done() <-chan struct{}       { return c.armed().Done() }
func (c *lazyDeadline) Err() error                  { return c.armed().Err() }
func (c *lazyDeadline) Value(key any) any           { return c.parent.Value(key) }
