package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// Checkpoints leave the writer's turn. Left to itself, SQLite checkpoints
// the WAL inside a commit, on the committing connection, once the WAL holds
// 1000 pages: a 16 × 240 KB batch (about 2,000 pages with its history
// rows) then copies its own frames and its predecessors' into the database
// file, and fsyncs it, while it still holds the one writer turn that every
// org's writes wait for. Here the writer only checkpoints as a backstop, at
// many times that size; a checkpointer goroutine runs PASSIVE checkpoints
// on a connection of its own once about as much was committed as SQLite's
// default would wait for. A PASSIVE checkpoint runs alongside the writer
// (it copies frames into the database file while the writer appends to the
// WAL), and the writer restarts the WAL from its start once a checkpoint
// copied it all. scrub's TRUNCATE checkpoint, which erasure relies on, is
// unchanged.

const (
	// checkpointBytes is how much committed data (estimated) wakes the
	// checkpointer: SQLite's default auto-checkpoint, 1000 4 KiB pages.
	checkpointBytes = 1000 * 4096
	// turnBytes is what a turn is counted for besides the content it
	// stores: its b-tree pages, head and audit rows.
	turnBytes = 16 << 10
	// writerCheckpointPages is the writer's own auto-checkpoint, a backstop
	// for a checkpointer that cannot keep up.
	writerCheckpointPages = 16000
)

// checkpointer runs the WAL checkpoints of a DB in the background.
type checkpointer struct {
	conn    *sql.DB // its own single connection
	pending atomic.Int64
	wake    chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
	closed  sync.Once
	// mu is held by whoever checkpoints: SQLite refuses a checkpoint while
	// another runs (it does not wait), so scrub's TRUNCATE takes it too.
	mu   sync.Mutex
	runs atomic.Int64 // checkpoints run, for tests
}

func newCheckpointer(conn *sql.DB) *checkpointer {
	c := &checkpointer{conn: conn, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	c.done.Go(c.loop)
	return c
}

// note counts n committed bytes (an estimate), waking the checkpointer
// once they add up to a checkpoint's worth.
func (c *checkpointer) note(n int64) {
	if c.pending.Add(n) >= checkpointBytes {
		select {
		case c.wake <- struct{}{}:
		default: // already awake
		}
	}
}

func (c *checkpointer) loop() {
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		c.pending.Store(0)
		var busy, frames, done int
		// An error or a busy WAL leaves the frames for the next run (or
		// the writer's backstop).
		c.mu.Lock()
		err := c.conn.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done)
		c.mu.Unlock()
		if err == nil {
			c.runs.Add(1)
		}
	}
}

// close stops the checkpointer; a second call only closes again.
func (c *checkpointer) close() error {
	c.closed.Do(func() {
		close(c.stop)
		c.done.Wait()
	})
	return c.conn.Close()
}
