package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Erased bytes leave the table files (issue 21 point 3). An UPDATE or a
// DELETE leaves the old row version in its heap page (and its TOAST chunks
// in the TOAST table); a plain VACUUM prunes it, but pruning only compacts
// the page: the freed space keeps the old bytes until something else is
// written over them. Only a rewrite of the table drops them: VACUUM FULL
// writes the live rows into new files, TOAST table and indexes included,
// and truncates the old ones. So every erasure asks the scrubber to rewrite
// the tables that held the bytes: entries (an overwritten entry's old
// content is a dead row of it), entry_versions, proposals and
// session_notes.
//
// A rewrite holds an ACCESS EXCLUSIVE lock on its table for as long as it
// copies the table, and every query on the table waits meanwhile; the
// README states how long that is at scale. To bound everything else:
//   - the scrubber runs in the background, one table at a time, and never
//     in a request: the erasure is answered once it commits;
//   - erasures coalesce: a table is rewritten once for all the erasures
//     asked for before its rewrite began; after a pass the scrubber rests
//     scrubPace, or scrubRest times as long as the pass held its locks if
//     that is longer, so rewrites hold a table at most about 1/scrubRest
//     of the time however fast erasures come;
//   - each rewrite waits at most scrubLockTimeout for its lock (lock_timeout),
//     so it never queues for long behind a slow reader, which would make
//     every later query of the table queue behind it; it retries later,
//     backing off up to scrubRetryMax;
//   - a rewrite keeps the dead rows some snapshot may still see (any
//     snapshot whose xmin is not past the erasure's transaction, however
//     young the snapshot: an autovacuum ANALYZE that began while an old
//     transaction ran, say), so the scrubber waits until no session of the
//     database, no walsender and no replication slot holds an xmin at or
//     before the erasure's transaction id.

const (
	scrubLockTimeout = 200 * time.Millisecond
	scrubPace        = time.Second
	scrubRest        = 20
	scrubRetryMin    = 100 * time.Millisecond
	scrubRetryMax    = 30 * time.Second
)

// The tables erasures ask the scrubber to rewrite.
const (
	tableEntries   = "entries"
	tableVersions  = "entry_versions"
	tableProposals = "proposals"
	// tableSessionNotes holds the session notes a purge of a space's
	// history deletes.
	tableSessionNotes = "session_notes"
)

// erasedTables returns the tables an erasure of content left bytes in:
// entries (the content was an entry's once, and is a dead row of it since
// it was overwritten) and entry_versions, and proposals when it erased
// some.
func erasedTables(proposals int) []string {
	if proposals > 0 {
		return []string{tableEntries, tableVersions, tableProposals}
	}
	return []string{tableEntries, tableVersions}
}

// scrubber rewrites the tables erasures left old bytes in.
type scrubber struct {
	mu      sync.Mutex
	due     map[string]uint64 // table → the latest erasure's transaction id (xid8)
	running int               // rewrites under way, for pending
	wake    chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
	closed  sync.Once
	// held is how long each table's last rewrite took (its lock held), for
	// tests and the bench.
	held map[string]time.Duration
	// pass is held by the rewrites of one pass (scrubPass).
	pass sync.Mutex
	// paused holds every rewrite back (tests that need the tables as they
	// are: export_test.go).
	paused atomic.Bool
}

func newScrubber(db *DB) *scrubber {
	s := &scrubber{due: map[string]uint64{}, held: map[string]time.Duration{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	s.done.Go(func() { s.loop(db) })
	return s
}

// ask records that an erasure, transaction xid, left bytes in tables.
func (s *scrubber) ask(xid uint64, tables ...string) {
	s.mu.Lock()
	for _, t := range tables {
		s.due[t] = max(s.due[t], xid)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pending reports whether a rewrite is due or under way.
func (s *scrubber) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.due) > 0 || s.running > 0
}

// next takes the due tables.
func (s *scrubber) next() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.due) == 0 {
		return nil
	}
	due := s.due
	s.due = map[string]uint64{}
	s.running++
	return due
}

// requeue gives back what a pass could not rewrite, unless newer erasures
// asked for it meanwhile.
func (s *scrubber) requeue(left map[string]uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	for t, xid := range left {
		s.due[t] = max(s.due[t], xid)
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
		for !s.paused.Load() {
			due := s.next()
			if due == nil {
				break
			}
			start := time.Now()
			left := db.scrubPass(context.Background(), due)
			s.requeue(left)
			wait := max(scrubPace, scrubRest*time.Since(start))
			if len(left) > 0 {
				wait, delay = delay, min(2*delay, scrubRetryMax)
			} else {
				delay = scrubRetryMin
			}
			select {
			case <-s.stop:
				return
			case <-time.After(wait):
			}
		}
	}
}

func (s *scrubber) close() {
	s.closed.Do(func() {
		close(s.stop)
		s.done.Wait()
	})
}

// ScrubPending reports whether a rewrite after an erasure is due or under
// way (until then the table files may hold erased bytes).
func (db *DB) ScrubPending() bool { return db.scrubs.pending() }

// ScrubHeld returns how long the last rewrite of each table took, the time
// it held the table's lock.
func (db *DB) ScrubHeld() map[string]time.Duration {
	db.scrubs.mu.Lock()
	defer db.scrubs.mu.Unlock()
	out := make(map[string]time.Duration, len(db.scrubs.held))
	for t, d := range db.scrubs.held {
		out[t] = d
	}
	return out
}

// erasureRecord returns the id of the erasure's transaction tx (assigning
// one), for the rewrite's wait for older snapshots, and records in tx that
// tables are owed a rewrite past it (scrubs_pending), so the rewrite still
// happens if this process stops before it (ScrubsResume).
func erasureRecord(ctx context.Context, tx pgx.Tx, tables ...string) (uint64, error) {
	var xid uint64
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text::bigint`, pgx.QueryExecModeSimpleProtocol).Scan(&xid); err != nil {
		return 0, interpret(err)
	}
	for _, t := range tables {
		if _, err := tx.Exec(ctx, `INSERT INTO scrubs_pending (table_name, xid) VALUES ($1, $2)
			ON CONFLICT (table_name) DO UPDATE SET xid = GREATEST(scrubs_pending.xid, EXCLUDED.xid)`, t, int64(xid)); err != nil {
			return 0, fmt.Errorf("record the scrub of %s: %w", t, interpret(err))
		}
	}
	return xid, nil
}

// scrubAfterErase asks for the rewrites of tables after the erasure of
// transaction xid committed.
func (db *DB) scrubAfterErase(xid uint64, tables ...string) { db.scrubs.ask(xid, tables...) }

// scrubPass rewrites the due tables it can, in name order, and returns
// those it could not.
func (db *DB) scrubPass(ctx context.Context, due map[string]uint64) map[string]uint64 {
	// One pass at a time in this process: the scrubber's and ScrubsResume's
	// (other replicas' rewrites queue on the table's lock).
	db.scrubs.pass.Lock()
	defer db.scrubs.pass.Unlock()
	left := map[string]uint64{}
	tables := make([]string, 0, len(due))
	for t := range due {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		if err := db.rewrite(ctx, t, due[t]); err != nil {
			left[t] = due[t]
		}
	}
	return left
}

// errOldSnapshot is a rewrite put off for an older snapshot.
var errOldSnapshot = errors.New("a snapshot older than the erasure is open")

// oldSnapshotSQL reports whether a session of the database (other than
// this one), a session not yet in any database (one still starting holds
// back every database's horizon), a walsender (a standby's
// hot_standby_feedback) or a replication slot holds an xmin at or before $1, a 32-bit xid, or a
// transaction that old still runs (a later snapshot's xmin would be it):
// age() compares xids across wraparound. A transaction that old running in
// any database counts too: a snapshot's xmin is the oldest transaction
// still running in the cluster, so VACUUM FULL's own snapshot would keep
// the erased rows for it. A new snapshot's xmin says so ($2, the xid8).
const oldSnapshotSQL = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
		WHERE (datname = current_database() OR datname IS NULL OR backend_type = 'walsender') AND pid <> pg_backend_pid()
			AND (age(backend_xmin) >= age($1::text::xid) OR age(backend_xid) >= age($1::text::xid)))
	OR EXISTS (SELECT 1 FROM pg_replication_slots WHERE age(xmin) >= age($1::text::xid))
	OR EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE age(transaction) >= age($1::text::xid))
	OR pg_snapshot_xmin(pg_current_snapshot()) <= $2::text::xid8`

// rewrite runs VACUUM FULL of table once no snapshot that may still see
// what the erasure of transaction xid removed is left, waiting at most
// scrubLockTimeout for the table's lock.
func (db *DB) rewrite(ctx context.Context, table string, xid uint64) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var old bool
	// Simple protocol: the scrubber's statements stay out of the
	// connections' statement caches.
	if err := conn.QueryRow(ctx, oldSnapshotSQL, pgx.QueryExecModeSimpleProtocol, fmt.Sprint(uint32(xid)), fmt.Sprint(xid)).Scan(&old); err != nil {
		return err
	}
	if old {
		return errOldSnapshot
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(`SET lock_timeout = %d`, scrubLockTimeout.Milliseconds()), pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	// A released connection goes back to the pool: reset it in any case.
	defer conn.Exec(context.WithoutCancel(ctx), `RESET lock_timeout`, pgx.QueryExecModeSimpleProtocol)
	start := time.Now()
	_, err = conn.Exec(ctx, `VACUUM (FULL) `+pgx.Identifier{table}.Sanitize(), pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55P03" { // lock_not_available: readers hold the table
			return err
		}
		return fmt.Errorf("rewrite %s: %w", table, interpret(err))
	}
	db.scrubs.mu.Lock()
	db.scrubs.held[table] = time.Since(start)
	db.scrubs.mu.Unlock()
	// The rewrite began after every erasure up to xid committed: it owes
	// nothing for them any more (a later erasure's row stays).
	if _, err := conn.Exec(ctx, `DELETE FROM scrubs_pending WHERE table_name = $1 AND xid <= $2`, table, int64(xid)); err != nil {
		return fmt.Errorf("clear the scrub of %s: %w", table, interpret(err))
	}
	return nil
}

// HistoryScrub vacuums entry_versions after the retention sweep, so the
// space its deletions freed is reused. It does not rewrite the table: the
// sweep runs every hour, and a rewrite holds the table (every org's
// history) for as long as it copies it; the aged-out rows' bytes leave the
// files with the next erasure's rewrite (README, "Erasing history").
func (db *DB) HistoryScrub(ctx context.Context) error {
	if _, err := db.pool.Exec(ctx, `VACUUM entry_versions`, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("vacuum entry_versions: %w", interpret(err))
	}
	return nil
}
