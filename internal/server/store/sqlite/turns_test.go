package sqlite

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
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

// fakeClock is a clock that moves only when the test says.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// TestTurnsByWriterTime: the org that held the writer least goes next, so
// an org's small writes queued behind another org's long batch all go
// before that org's next batch; within an org, writers go in arrival order;
// an org that starts waiting later does not get ahead on time it never
// used.
func TestTurnsByWriterTime(t *testing.T) {
	var clock fakeClock
	tr := newTurns()
	tr.now = clock.now
	cost := map[string]time.Duration{"1": 300 * time.Millisecond, "2": time.Millisecond, "3": time.Millisecond}
	if err := tr.acquire(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	admitted, release := make(chan string), make(chan struct{})
	// Org 1 holds the writer with two more batches queued; org 2's three
	// small writes queue behind them.
	for _, name := range []string{"1b", "1c", "2a", "2b", "2c"} {
		queue(t, tr, name, int64(name[0]-'0'), admitted, release)
	}
	clock.advance(cost["1"])
	tr.release()
	var got []string
	take := func() string {
		name := <-admitted
		got = append(got, name)
		return name
	}
	done := func(name string) {
		clock.advance(cost[name[:1]])
		release <- struct{}{}
	}
	for range 3 {
		done(take())
	}
	// Org 1's second batch holds the writer now; org 3 starts waiting,
	// charged what org 1 had used when that batch began, then org 2 once
	// more, charged as much.
	b := take()
	queue(t, tr, "3a", 3, admitted, release)
	queue(t, tr, "2d", 2, admitted, release)
	done(b)
	for range 3 {
		done(take())
	}
	if want := []string{"2a", "2b", "2c", "1b", "3a", "2d", "1c"}; !slices.Equal(got, want) {
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

// TestTurnsCountTimeBehindOtherOrgs: a writer learns how long it waited
// while other orgs held the writer, from its arrival on, apart from the
// turns of its own org ahead of it.
func TestTurnsCountTimeBehindOtherOrgs(t *testing.T) {
	var clock fakeClock
	tr := newTurns()
	tr.now = clock.now
	if err := tr.acquire(t.Context(), 1); err != nil { // org 1's batch holds the writer
		t.Fatal(err)
	}
	behind := make(chan time.Duration, 2)
	wait := func() {
		n := tr.waiters()
		go func() {
			d, err := tr.acquireBehind(context.Background(), 2)
			if err != nil {
				t.Error(err)
			}
			behind <- d
		}()
		for tr.waiters() == n {
			runtime.Gosched()
		}
	}
	clock.advance(10 * time.Millisecond)
	wait() // org 2's first write, 10 ms into the batch
	clock.advance(20 * time.Millisecond)
	wait() // its second, 30 ms into it
	clock.advance(40 * time.Millisecond)
	tr.release() // the batch took 70 ms
	if got := <-behind; got != 60*time.Millisecond {
		t.Errorf("first write waited %v behind org 1, want 60ms", got)
	}
	clock.advance(5 * time.Millisecond) // its own org's write ahead of it
	tr.release()
	if got := <-behind; got != 40*time.Millisecond {
		t.Errorf("second write waited %v behind org 1, want 40ms (not its own org's 5 ms)", got)
	}
	tr.release()
}
