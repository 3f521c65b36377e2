package sqlite

import (
	"context"
	"runtime"
	"slices"
	"testing"
)

// queue starts a writer of org that waits for its turn and, once it has
// it, sends its name on admitted and holds the turn until released is
// signalled; it returns once the writer waits.
func queue(t *testing.T, tr *turns, name string, org int64, admitted chan<- string, release <-chan struct{}) {
	t.Helper()
	n := tr.waiters()
	go func() {
		if err := tr.acquire(context.Background(), org); err != nil {
			t.Error(name, err)
			return
		}
		admitted <- name
		<-release
		tr.release()
	}()
	for tr.waiters() == n {
		runtime.Gosched()
	}
}

// TestTurnsRoundRobin: orgs take turns, the one served longest ago first;
// within an org, writers go in arrival order.
func TestTurnsRoundRobin(t *testing.T) {
	tr := newTurns()
	if err := tr.acquire(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	admitted, release := make(chan string), make(chan struct{})
	// Org 1 holds the turn with three more writers queued; org 2 and then
	// org 3 arrive behind them, and org 2 once more.
	for _, w := range []struct {
		name string
		org  int64
	}{{"1b", 1}, {"1c", 1}, {"1d", 1}, {"2a", 2}, {"3a", 3}, {"2b", 2}} {
		queue(t, tr, w.name, w.org, admitted, release)
	}
	tr.release()
	var got []string
	for range 6 {
		got = append(got, <-admitted)
		release <- struct{}{}
	}
	if want := []string{"2a", "3a", "1b", "2b", "1c", "1d"}; !slices.Equal(got, want) {
		t.Fatalf("turns in the order %v, want %v", got, want)
	}
	if tr.acquire(t.Context(), 4) != nil || tr.waiters() != 0 {
		t.Fatal("the turn is not free once every writer is done")
	}
}

// TestTurnsCancel: a writer whose context ends while it waits leaves the
// queue without a turn, and the writers behind it are not held up.
func TestTurnsCancel(t *testing.T) {
	tr := newTurns()
	if err := tr.acquire(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	gaveUp := make(chan error)
	go func() { gaveUp <- tr.acquire(ctx, 2) }()
	for tr.waiters() == 0 {
		runtime.Gosched()
	}
	admitted, release := make(chan string), make(chan struct{})
	queue(t, tr, "3", 3, admitted, release)
	cancel()
	if err := <-gaveUp; err == nil {
		t.Fatal("a cancelled wait returned a turn")
	}
	tr.release()
	if got := <-admitted; got != "3" {
		t.Fatalf("admitted %s", got)
	}
	release <- struct{}{}
	if tr.acquire(t.Context(), 1) != nil || tr.waiters() != 0 {
		t.Fatal("the turn is not free once every writer is done")
	}
}
