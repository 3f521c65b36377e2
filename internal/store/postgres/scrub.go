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
// content is a dead row of it), entry_versions and proposals.
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
//   - a rewrite keeps the dead rows an open transaction may still see, so
//     the scrubber waits until every transaction of the database older
//     than the erasure has ended.

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
)

// scrubTables are the tables every erasure of content asks to rewrite.
var scrubTables = []string{tableEntries, tableVersions, tableProposals}

// scrubber rewrites the tables erasures left old bytes in.
type scrubber struct {
	mu      sync.Mutex
	due     map[string]time.Time // table → the latest erasure's commit, by the database clock
	running int                  // rewrites under way, for Pending
	wake    chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
	closed  sync.Once
	// held is how long each table's last rewrite took (its lock held), for
	// tests and the bench.
	held map[string]time.Duration
	// paused holds every rewrite back (tests that need the tables as they
	// are: export_test.go).
	paused atomic.Bool
}

func newScrubber(db *DB) *scrubber {
	s := &scrubber{due: map[string]time.Time{}, held: map[string]time.Duration{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	s.done.Go(func() { s.loop(db) })
	return s
}

// ask records that an erasure, committed at at, left bytes in tables.
func (s *scrubber) ask(at time.Time, tables ...string) {
	s.mu.Lock()
	for _, t := range tables {
		if at.After(s.due[t]) {
			s.due[t] = at
		}
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

// next takes the due tables, in name order.
func (s *scrubber) next() map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.due) == 0 {
		return nil
	}
	due := s.due
	s.due = map[string]time.Time{}
	s.running++
	return due
}

// requeue gives back what a pass could not rewrite, unless newer erasures
// asked for it meanwhile.
func (s *scrubber) requeue(left map[string]time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	for t, at := range left {
		if at.After(s.due[t]) {
			s.due[t] = at
		}
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

// scrubAfterErase asks for the rewrites of tables after an erasure that
// committed just before; it never fails (the erasure has committed).
func (db *DB) scrubAfterErase(ctx context.Context, tables ...string) {
	var at time.Time
	// Simple protocol: the scrubber's statements stay out of the
	// connections' statement caches.
	if err := db.pool.QueryRow(ctx, `SELECT clock_timestamp()`, pgx.QueryExecModeSimpleProtocol).Scan(&at); err != nil {
		at = time.Now() // the database's clock is the one xact_start uses; this is the best next
	}
	db.scrubs.ask(at, tables...)
}

// scrubPass rewrites the due tables it can and returns those it could not.
func (db *DB) scrubPass(ctx context.Context, due map[string]time.Time) map[string]time.Time {
	left := map[string]time.Time{}
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

// errOldSnapshot is a rewrite put off for an older transaction.
var errOldSnapshot = errors.New("a transaction older than the erasure is open")

// rewrite runs VACUUM FULL of table once no transaction of the database
// that began before erased may still see what it erased, waiting at most
// scrubLockTimeout for the table's lock.
func (db *DB) rewrite(ctx context.Context, table string, erased time.Time) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var old bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
		AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL AND xact_start <= $1)`, pgx.QueryExecModeSimpleProtocol, erased).Scan(&old); err != nil {
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
