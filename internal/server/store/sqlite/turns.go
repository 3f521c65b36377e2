package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Every write of every org needs the one writer connection. Left to
// database/sql, writers waiting for it are served in random order: an org
// with eight large batches queued ahead holds another org's small write for
// several of them. turns hands the writer out instead, one writer at a
// time, fairly by the time each org has held it: the waiting org that used
// the writer least goes next (within an org, writers go in arrival order).
// An org whose batch just held the writer for 300 ms is charged 300 ms, so
// another org's small writes that queued meanwhile all go before its next
// batch: they wait for the batch in progress, not for the org's queue. An
// org that starts waiting after a pause is charged as much as the org served
// last, so it cannot bank idle time and then hold everyone else off.

// turns queues the writers of the writer connection by org.
type turns struct {
	mu      sync.Mutex
	now     func() time.Time
	busy    bool      // a writer holds the connection
	holder  int64     // its org
	since   time.Time // and when its turn began
	seq     uint64    // arrivals so far, for order within a tie
	clock   time.Duration
	used    map[int64]time.Duration // org → writer time charged to it
	waiting map[int64][]*waiter     // org → its waiting writers, oldest first
	waits   int64                   // writers that had to wait, for PoolStats
	waited  time.Duration           // and how long they waited in all
	ends    uint64                  // turns ended so far (scrub.go)
}

// waiter is one writer waiting for its turn.
type waiter struct {
	org     int64
	arrived uint64
	since   time.Time
	ready   chan struct{} // closed when the writer's turn has come
	// behind is how long it waited while other orgs held the writer,
	// set before ready is closed.
	behind time.Duration
}

// maxOrgs bounds how many orgs' charges turns remembers; past it, orgs that
// wait for nothing are forgotten, which costs them nothing: an org starting
// to wait is charged at least the clock anyway.
const maxOrgs = 4096

// minCharge is the least a turn costs, so that even turns too short for
// the clock to see count.
const minCharge = time.Microsecond

func newTurns() *turns {
	return &turns{now: time.Now, used: map[int64]time.Duration{}, waiting: map[int64][]*waiter{}}
}

// acquire waits for org's writer turn (the server's own writes use org 0).
// It returns ctx's error, holding no turn, when ctx ends first. Every
// acquire that returned nil is followed by exactly one release.
func (t *turns) acquire(ctx context.Context, org int64) error {
	_, err := t.acquireBehind(ctx, org)
	return err
}

// acquireBehind is acquire that also returns how long the writer waited
// while other orgs held the writer: the wait no other org's write may
// stretch past the turn it found in progress.
func (t *turns) acquireBehind(ctx context.Context, org int64) (time.Duration, error) {
	t.mu.Lock()
	if len(t.waiting[org]) == 0 {
		t.used[org] = max(t.used[org], t.clock)
	}
	if !t.busy {
		t.admitLocked(org)
		t.mu.Unlock()
		return 0, nil
	}
	t.seq++
	w := &waiter{org: org, arrived: t.seq, since: t.now(), ready: make(chan struct{})}
	t.waiting[org] = append(t.waiting[org], w)
	t.mu.Unlock()
	select {
	case <-w.ready:
		return w.behind, nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	select {
	case <-w.ready:
		// The turn came as ctx ended: pass it on.
		t.mu.Unlock()
		t.release()
	default:
		t.removeLocked(w)
		t.waits, t.waited = t.waits+1, t.waited+t.now().Sub(w.since)
		t.mu.Unlock()
	}
	return 0, ctx.Err()
}

// release ends the current turn, charging it to its org, and starts the
// next writer's.
func (t *turns) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ends++
	now := t.now()
	t.used[t.holder] += max(now.Sub(t.since), minCharge)
	for org, ws := range t.waiting {
		if org == t.holder {
			continue
		}
		for _, w := range ws {
			w.behind += now.Sub(later(t.since, w.since))
		}
	}
	next := t.nextLocked()
	if next == nil {
		t.busy = false
		return
	}
	t.removeLocked(next)
	t.admitLocked(next.org)
	t.waits, t.waited = t.waits+1, t.waited+t.since.Sub(next.since)
	close(next.ready)
}

// tryAcquire takes org's turn when nobody holds or waits for the writer,
// and reports whether it did; a true is followed by one release.
func (t *turns) tryAcquire(org int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.busy || len(t.waiting) > 0 {
		return false
	}
	t.used[org] = max(t.used[org], t.clock)
	t.admitLocked(org)
	return true
}

// ended returns how many turns have ended.
func (t *turns) ended() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ends
}

// nextLocked returns the oldest waiter of the waiting org charged least
// (the earlier arrival on a tie), or nil.
func (t *turns) nextLocked() *waiter {
	var best *waiter
	for org, ws := range t.waiting {
		w := ws[0]
		if best == nil || t.used[org] < t.used[best.org] ||
			(t.used[org] == t.used[best.org] && w.arrived < best.arrived) {
			best = w
		}
	}
	return best
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (t *turns) admitLocked(org int64) {
	if len(t.used) > maxOrgs {
		for o := range t.used {
			if len(t.waiting[o]) == 0 && o != org {
				delete(t.used, o)
			}
		}
	}
	t.busy, t.holder, t.since = true, org, t.now()
	t.clock = max(t.clock, t.used[org])
}

func (t *turns) removeLocked(w *waiter) {
	ws := t.waiting[w.org]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(t.waiting, w.org)
	} else {
		t.waiting[w.org] = ws
	}
}

// WritersWaiting reports how many writers wait for the writer connection.
func (db *DB) WritersWaiting() int { return db.turns.waiters() }

// stats reports how many writers waited for a turn and how long in all.
func (t *turns) stats() (int64, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waits, t.waited
}

func (t *turns) waiters() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, ws := range t.waiting {
		n += len(ws)
	}
	return n
}

// writing runs fn, which uses the writer connection, in a turn of org.
func (db *DB) writing(ctx context.Context, org int64, fn func() error) error {
	if err := db.turns.acquire(ctx, org); err != nil {
		return interpret(err)
	}
	defer db.turns.release()
	defer db.ckpt.note(turnBytes)
	return fn()
}

// begin starts a write transaction (IMMEDIATE: it takes SQLite's write
// lock) in a turn of org, which Commit or Rollback ends.
func (db *DB) begin(ctx context.Context, org int64) (*turnTx, error) {
	if err := db.turns.acquire(ctx, org); err != nil {
		return nil, interpret(err)
	}
	db.queries.Add(1)
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		db.turns.release()
		return nil, interpret(err)
	}
	return &turnTx{Tx: tx, turns: db.turns, ckpt: db.ckpt}, nil
}

// turnTx is a write transaction holding a writer turn.
type turnTx struct {
	*sql.Tx
	turns *turns
	ckpt  *checkpointer
	bytes int64 // content stored, for the checkpointer
	done  bool
	// timing, when set, is told how long the turn was held from admitted.
	timing   *teammem.WriteTiming
	admitted time.Time
}

// Commit commits the transaction and ends the turn.
func (tx *turnTx) Commit() error {
	err := tx.Tx.Commit()
	tx.end()
	if err == nil {
		tx.ckpt.note(turnBytes + tx.bytes)
	}
	return err
}

// Rollback rolls the transaction back, when it was not committed, and ends
// the turn.
func (tx *turnTx) Rollback() error {
	err := tx.Tx.Rollback()
	tx.end()
	return err
}

// end releases the turn once the transaction has given the connection back.
func (tx *turnTx) end() {
	if !tx.done {
		tx.done = true
		tx.turns.release()
		if tx.timing != nil {
			tx.timing.Held(time.Since(tx.admitted))
		}
	}
}
