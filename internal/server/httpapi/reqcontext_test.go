package httpapi

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestReqContext(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")

	ctx, stop := newReqContext(parent, "id", nil, 20*time.Millisecond)
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("Deadline() = %v, %v", d, ok)
	}
	if ctx.Value(key{}) != "v" || requestID(ctx) != "id" {
		t.Fatal("values of the parent or the request's own are lost")
	}
	child, cancel := context.WithCancel(ctx) // arms the timer
	defer cancel()
	<-child.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("after the deadline: %v, child %v", ctx.Err(), child.Err())
	}
	stop()

	// Never waited on: stop still leaves it cancelled for late users.
	ctx, stop = newReqContext(parent, "id", nil, time.Hour)
	stop()
	select {
	case <-ctx.Done():
	default:
		t.Fatal("a stopped context is not done")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err() after stop = %v", ctx.Err())
	}

	// A cancelled parent cancels it.
	p, cancelParent := context.WithCancel(context.Background())
	ctx, stop = newReqContext(p, "id", nil, time.Hour)
	defer stop()
	cancelParent()
	<-ctx.Done()
}

func TestReqContextWithoutDeadline(t *testing.T) {
	p, cancelParent := context.WithCancel(context.Background())
	ctx, stop := newReqContext(p, "id", nil, 0)
	defer stop()
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("an event stream's context has a deadline")
	}
	cancelParent()
	<-ctx.Done()
}
