package sqlite

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Scrubbing never waits on readers, nor on a checkpoint's fsync, in the
// writer's turn (issue 21 point 4). A scrub gives the free pages an erasure
// left back to the file system, a step of vacuumStep pages per writer
// turn, then runs a PASSIVE checkpoint on the checkpointer's connection,
// outside any turn: it copies into the database file every frame no reader
// still needs, and fsyncs it, while writers go on. While a reader holds a
// snapshot older than the WAL's end (a slow export, say) not every frame
// can be copied: the scrub reports so, and the scrubber goroutine retries,
// backing off from scrubRetryMin to scrubRetryMax; meanwhile erasures only
// ask for another scrub.
//
// Once every frame is in the database file, the old bytes are out of it;
// the WAL file still holds them until it starts over. The writer starts it
// over by itself at its next write once no reader is left in it, and its
// journal_size_limit of 0 then cuts the file to that write's frames: a
// later scrub that sees the WAL shorter than every frame it saw copied
// knows it. When no writer waits, the scrub does not wait for that: it
// takes a free turn and runs a TRUNCATE checkpoint, which has nothing left
// to copy or fsync (no turn ended since the copy) and never waits (the
// connection has no busy timeout).
//
// The erased content is out of every query from the erasure's commit on;
// the scrubs bound how long the files keep its bytes: until the last
// reader older than the erasure ends, plus one retry interval.

const (
	scrubRetryMin = 20 * time.Millisecond
	scrubRetryMax = 2 * time.Second
	// vacuumStep is the most pages one incremental vacuum step moves.
	vacuumStep = 1000
)

// scrubber runs the scrubs of a DB that could not finish at once.
type scrubber struct {
	want   atomic.Int64 // scrubs asked for
	did    atomic.Int64 // the want a finished scrub started at
	failed atomic.Bool  // the last attempt did not finish: retries are under way
	wake   chan struct{}
	stop   chan struct{}
	done   sync.WaitGroup
	closed sync.Once
	busy   atomic.Int64 // attempts readers kept from finishing, for tests
	// copied is the WAL's length when a scrub for the erasures up to
	// copiedAt saw every frame copied (guarded by the checkpointer's mu).
	copied, copiedAt int64
}

func newScrubber(db *DB) *scrubber {
	s := &scrubber{wake: make(chan struct{}, 1), stop: make(chan struct{})}
	s.done.Go(func() { s.loop(db) })
	return s
}

// ask records that an erasure committed and returns its number.
func (s *scrubber) ask() int64 { return s.want.Add(1) }

// finished records a scrub that started when want was at.
func (s *scrubber) finished(at int64) {
	for {
		did := s.did.Load()
		if did >= at || s.did.CompareAndSwap(did, at) {
			return
		}
	}
}

// pending reports whether an erasure committed after the last finished
// scrub began.
func (s *scrubber) pending() bool { return s.did.Load() < s.want.Load() }

func (s *scrubber) kick() {
	select {
	case s.wake <- struct{}{}:
	default: // already awake
	}
}

func (s *scrubber) loop(db *DB) {
	delay := scrubRetryMin
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		for s.pending() {
			at := s.want.Load()
			ok, err := db.scrubOnce(context.Background(), 0, at)
			if err == nil && ok {
				s.finished(at)
				s.failed.Store(false)
				delay = scrubRetryMin
				continue
			}
			s.failed.Store(true)
			select {
			case <-s.stop:
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, scrubRetryMax)
		}
	}
}

func (s *scrubber) close() {
	s.closed.Do(func() {
		close(s.stop)
		s.done.Wait()
	})
}

// scrubAfterErase scrubs after an erasure committed. When retries are under
// way already it only asks for one more; otherwise it tries once (without
// waiting on readers) and leaves a scrub it could not finish to the
// scrubber's retries. It never fails: the erasure has committed.
func (db *DB) scrubAfterErase(ctx context.Context, org int64) {
	at := db.scrubs.ask()
	if db.scrubs.failed.Load() {
		db.scrubs.kick()
		return
	}
	if ok, err := db.scrubOnce(ctx, org, at); err == nil && ok {
		db.scrubs.finished(at)
		return
	}
	db.scrubs.kick()
}

// HistoryScrub makes the bytes deletes and redactions freed unrecoverable
// from the files: one scrub (see the top of this file). It fails with
// EUnavailable when readers kept the WAL busy; the scrubber retries then
// by itself.
func (db *DB) HistoryScrub(ctx context.Context) error {
	at := db.scrubs.ask()
	ok, err := db.scrubOnce(ctx, 0, at)
	if err == nil && ok {
		db.scrubs.finished(at)
		return nil
	}
	db.scrubs.kick()
	if err != nil {
		return err
	}
	return teammem.Errorf(teammem.EUnavailable, "readers kept the write-ahead log busy, so it still holds erased bytes; the server retries by itself")
}

// ScrubPending reports whether an erasure's scrub is still to finish (its
// bytes may still be in the WAL file).
func (db *DB) ScrubPending() bool { return db.scrubs.pending() }

// scrubOnce scrubs the files (scrubFiles) and, when that finished, clears
// the durable record (scrubs_pending) of the erasures it covered: those
// counted before it began.
func (db *DB) scrubOnce(ctx context.Context, org, at int64) (bool, error) {
	owed, err := db.scrubsOwed(ctx)
	if err != nil {
		return false, err
	}
	ok, err := db.scrubFiles(ctx, org, at)
	if err != nil || !ok || owed == 0 {
		return ok, err
	}
	err = db.writing(ctx, org, func() error {
		_, err := db.w.ExecContext(ctx, `DELETE FROM scrubs_pending WHERE table_name = 'wal' AND xid <= ?`, owed)
		return interpret(err)
	})
	return err == nil, err
}

// scrubFiles vacuums the free pages, in turns of org, then checkpoints as
// the top of this file says, for the scrubs asked for up to at. It reports
// whether the files are free of what those erasures freed.
func (db *DB) scrubFiles(ctx context.Context, org, at int64) (bool, error) {
	if err := db.searchMerge(ctx, org); err != nil {
		return false, err
	}
	if err := db.vacuumFree(ctx, org); err != nil {
		return false, err
	}
	// Not alongside the checkpointer's own (checkpoint.go).
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	ended := db.turns.ended()
	var busy, frames, done int64
	if err := db.ckpt.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done); err != nil {
		return false, interpret(err)
	}
	s := db.scrubs
	if busy != 0 || frames != done {
		s.busy.Add(1)
		return false, nil
	}
	if s.copiedAt == at && frames < s.copied {
		return true, nil // the WAL started over since every frame was copied
	}
	s.copiedAt, s.copied = at, frames
	if !db.turns.tryAcquire(org) {
		return false, nil
	}
	defer db.turns.release()
	if db.turns.ended() != ended {
		return false, nil // a write came between: its frames are not copied
	}
	if err := db.ckpt.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil {
		return false, interpret(err)
	}
	if busy != 0 {
		s.busy.Add(1)
	}
	return busy == 0, nil
}

// searchMerge rewrites the search index (migration 0015) into one
// segment: a deleted or overwritten entry's words stay in the index's
// segments until a merge drops them, and an erased version was once live
// content. Its old pages are then freed, zeroed by secure_delete, for
// vacuumFree. It holds the writer for one turn, as long as the rewrite of
// the whole index takes.
func (db *DB) searchMerge(ctx context.Context, org int64) error {
	return db.writing(ctx, org, func() error {
		_, err := db.w.ExecContext(ctx, `INSERT INTO entry_fts (entry_fts) VALUES ('optimize')`)
		return interpret(err)
	})
}

// vacuumFree shrinks the file by its free pages, vacuumStep pages per
// transaction, so no step holds the writer for long. Only databases created
// with auto_vacuum=INCREMENTAL can (Open creates every new one so); older
// ones keep their free pages for reuse, zeroed.
func (db *DB) vacuumFree(ctx context.Context, org int64) error {
	var mode int
	err := db.writing(ctx, org, func() error { return interpret(db.w.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode)) })
	if err != nil || mode != 2 {
		return err
	}
	last := int64(-1)
	for {
		var free int64
		err := db.writing(ctx, org, func() error {
			if err := db.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
				return interpret(err)
			}
			if free == 0 || free == last {
				return nil
			}
			_, err := db.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumStep))
			return interpret(err)
		})
		if err != nil || free == 0 || free == last {
			return err
		}
		last = free
	}
}
