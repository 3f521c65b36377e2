package httpapi

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLazyDeadline(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")

	ctx, stop := withLazyDeadline(parent, 20*time.Millisecond)
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("Deadline() = %v, %v", d, ok)
	}
	if ctx.Value(key{}) != "v" {
		t.Fatal("values of the parent are lost")
	}
	child, cancel := context.WithCancel(ctx) // arms the timer
	defer cancel()
	<-child.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("after the deadline: %v, child %v", ctx.Err(), child.Err())
	}
	stop()

	// Never waited on: stop still leaves it cancelled for late users.
	ctx, stop = withLazyDeadline(parent, time.Hour)
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
	ctx, stop = withLazyDeadline(p, time.Hour)
	defer stop()
	cancelParent()
	<-ctx.Done()
}
