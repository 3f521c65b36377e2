package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// reqContext is every request's context, made once by observe: it carries
// the request's own values (id, route, caller) without a context layer per
// value, and a deadline whose timer is only armed when something waits on
// it. A database call does; a 304 served from memory never does, and
// context.WithTimeout's timer, its registration with the connection's
// context and the layers of WithValue were a measurable share of such a
// request.
type reqContext struct {
	parent   context.Context
	deadline time.Time // zero: none (event streams)

	id    string
	route *chi.Context
	// timing is the request's writes' time on their space's write lock,
	// which s.write hands to the store with each write and observe
	// reports (Server-Timing).
	timing teammem.WriteTiming
	// caller is set by requireKey, in the request's goroutine, before any
	// handler runs; read-only afterwards.
	caller teammem.Principal
	// inProcess marks a request the console made through the router
	// (consoleBackend.Call) with caller already set: requireKey takes the
	// caller as authenticated. Only that code sets it.
	inProcess bool
	// clientGone is set by fail when the client went away before its
	// answer: observe records the request as statusClientClosed.
	clientGone bool

	mu     sync.Mutex
	ctx    context.Context // armed: a real context with the deadline
	cancel context.CancelFunc
}

// newReqContext returns the request context under parent, bounded by d
// when d > 0, and the function that ends it, which must be called when the
// request is done, as with WithTimeout.
func newReqContext(parent context.Context, id string, route *chi.Context, d time.Duration) (*reqContext, func()) {
	c := &reqContext{parent: parent, id: id, route: route}
	if d > 0 {
		c.deadline = time.Now().Add(d)
	}
	return c, c.stop
}

// reqContextOf returns the request context ctx is or descends from.
func reqContextOf(ctx context.Context) *reqContext {
	c, _ := ctx.Value(ctxRequest).(*reqContext)
	return c
}

// armed returns the real context, creating it on first use.
func (c *reqContext) armed() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		if c.deadline.IsZero() {
			c.ctx, c.cancel = context.WithCancel(c.parent)
		} else {
			c.ctx, c.cancel = context.WithDeadline(c.parent, c.deadline)
		}
	}
	return c.ctx
}

// stop ends the context: anything still holding it sees it cancelled.
func (c *reqContext) stop() {
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

func (c *reqContext) Deadline() (time.Time, bool) {
	if c.deadline.IsZero() {
		return c.parent.Deadline()
	}
	return c.deadline, true
}

func (c *reqContext) Done() <-chan struct{} { return c.armed().Done() }
func (c *reqContext) Err() error            { return c.armed().Err() }

func (c *reqContext) Value(key any) any {
	switch key {
	case ctxRequest:
		return c
	case chi.RouteCtxKey:
		return c.route
	}
	return c.parent.Value(key)
}
