// Package sqlite is the teammem.Store driver for an embedded SQLite file
// (modernc.org/sqlite, no cgo): WAL journal, foreign keys on, and one writer
// connection whose transactions start IMMEDIATE, so writers queue in Go
// instead of failing with SQLITE_BUSY (fairly across orgs: turns.go), while
// readers use their own pool.
//
// Erased history is erased from the files: secure_delete zeroes what a
// redaction or purge frees, and a checkpoint then empties the WAL, so the
// bytes are in neither the database file nor the WAL (history.go); no
// checkpoint waits on readers in the writer's turn (scrub.go).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/teammem/teammem/internal/server/store/dreamsql"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/migrations"
)

// DB is the SQLite store.
type DB struct {
	path string // the database file, as Open was given it
	// Transitions are the dream transitions, run by dreamUpdate.
	dreamsql.Transitions

	w *sql.DB // the single writer connection
	r *sql.DB // readers

	stmts sync.Map // stmtKey → *sql.Stmt: hot statements are parsed once

	heads *teammem.HeadsCache // entry heads of recently written spaces

	turns *turns // who uses w next (turns.go); every use of w takes a turn

	ckpt *checkpointer // WAL checkpoints, off the writer's turn (checkpoint.go)

	scrubs *scrubber // erasures' scrubs that readers kept from finishing (scrub.go)

	// queries counts the statements run through stmt and the transactions
	// begun (PoolStats.Queries).
	queries atomic.Int64
}

type stmtKey struct {
	pool  *sql.DB
	query string
}

// stmt returns query prepared on pool, preparing it on first use. SQLite
// parses every statement it runs; for the statements of every push and
// pull that parse cost is a large share of the work.
func (db *DB) stmt(ctx context.Context, pool *sql.DB, query string) (*sql.Stmt, error) {
	db.queries.Add(1)
	k := stmtKey{pool, query}
	if s, ok := db.stmts.Load(k); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, interpret(err)
	}
	if prev, loaded := db.stmts.LoadOrStore(k, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

var _ teammem.Store = (*DB)(nil)

// Open opens (creating when missing) the database file at path and applies
// pending migrations.
func Open(ctx context.Context, path string) (*DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
	}
	q := url.Values{}
	// secure_delete: what deletes and updates free is overwritten with
	// zeros, so redacted and purged history leaves no bytes behind.
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(1)", "busy_timeout(10000)", "synchronous(NORMAL)", "secure_delete(1)"} {
		q.Add("_pragma", p)
	}
	// The writer opens the file first (migrations run on it): on a new,
	// empty file auto_vacuum=INCREMENTAL takes effect, so that the pages
	// purges free can be given back to the file system (see scrub); on an
	// existing file it changes nothing.
	// Its own checkpoints are only a backstop (checkpoint.go).
	// journal_size_limit(0): when the writer starts the WAL over, its
	// first commit cuts the file to its own frames, so erased bytes in
	// older frames leave it (scrub.go).
	wq := url.Values{"_txlock": {"immediate"}, "_pragma": append([]string{"auto_vacuum(2)", fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages),
		"journal_size_limit(0)"}, q["_pragma"]...)}
	w, err := sql.Open("sqlite", "file:"+path+"?"+wq.Encode())
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	r.SetMaxIdleConns(max(4, runtime.GOMAXPROCS(0)))
	// The checkpointer's connection never waits for a lock: a checkpoint
	// that readers or the writer keep busy reports it and is retried
	// (scrub.go), instead of waiting out a busy timeout.
	cq := url.Values{"_pragma": {"journal_mode(WAL)", "busy_timeout(0)", "synchronous(NORMAL)", "secure_delete(1)"}}
	c, err := sql.Open("sqlite", "file:"+path+"?"+cq.Encode())
	if err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	c.SetMaxOpenConns(1)
	db := &DB{path: path, w: w, r: r, heads: teammem.NewHeadsCache(teammem.DefaultHeadsCacheEntries), turns: newTurns(), ckpt: newCheckpointer(c)}
	db.Transitions = dreamsql.Transitions{Run: db.dreamUpdate}
	db.scrubs = newScrubber(db)
	if err := db.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) migrate() error {
	src, err := iofs.New(migrations.FS, "sqlite")
	if err != nil {
		return err
	}
	drv, err := migratesqlite.WithInstance(db.w, &migratesqlite.Config{})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "sqlite", drv)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	err = m.Up()
	if errors.Is(err, migrate.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// A migration that rewrote a table (0016: entries) left its old pages
	// free in the file: give them back to the file system now rather than
	// at the next erasure's scrub. Nothing to do on a file without
	// incremental auto-vacuum, or with no free pages.
	if _, err := db.w.Exec(`PRAGMA incremental_vacuum`); err != nil {
		return fmt.Errorf("migrate: return free pages: %w", interpret(err))
	}
	return nil
}

// Ping checks that the database answers and that migrations left it clean.
func (db *DB) Ping(ctx context.Context) error {
	var dirty bool
	var version int64
	err := db.queryRow(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&version, &dirty)
	if err != nil {
		return interpret(err)
	}
	return teammem.MigrationsClean(version, dirty)
}

// Path returns the database file Open opened, for the job queue's own
// connection to it (internal/server/jobs).
func (db *DB) Path() string { return db.path }

// Close closes both pools.
func (db *DB) Close() error {
	db.stmts.Range(func(_, s any) bool {
		s.(*sql.Stmt).Close()
		return true
	})
	db.scrubs.close()
	return errors.Join(db.ckpt.close(), db.w.Close(), db.r.Close())
}

// interpret translates driver errors into teammem codes, by error code.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	var te *teammem.Error
	if errors.As(err, &te) {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		return &teammem.Error{Code: teammem.ENotFound, Message: "not found"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EUnavailable, Message: "request cancelled or timed out"}, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EConflict, Message: "already exists"}, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.ENotFound, Message: "a referenced record does not exist"}, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EUnavailable, Message: "database unavailable"}, err)
		}
	}
	return err
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func ptrFromMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// now is the clock, truncated to what the database keeps.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// collect scans every row of a query with scan and closes the rows; err is
// the query's own.
func collect[T any](rows *sql.Rows, err error, scan func(rowScanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, interpret(rows.Err())
}

// scanExtra scans a row whose columns are a scan function's and then extra.
type scanExtra struct {
	row   rowScanner
	extra []any
}

func (s scanExtra) Scan(dest ...any) error { return s.row.Scan(append(dest, s.extra...)...) }

// PoolStats reports both pools (the writer and the readers) together; the
// waits include those for a writer turn, where writers queue before the
// writer pool.
func (db *DB) PoolStats() teammem.PoolStats {
	w, r := db.w.Stats(), db.r.Stats()
	tw, td := db.turns.stats()
	return teammem.PoolStats{InUse: w.InUse + r.InUse, Idle: w.Idle + r.Idle, Max: w.MaxOpenConnections + r.MaxOpenConnections,
		WaitCount: w.WaitCount + r.WaitCount + tw, WaitDuration: w.WaitDuration + r.WaitDuration + td, Queries: db.queries.Load()}
}

// queryRow runs a read through a statement prepared on the read pool.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) rowScanner {
	st, err := db.stmt(ctx, db.r, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// query runs a read through a statement prepared on the read pool.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := db.stmt(ctx, db.r, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// errRow is a row that failed before its query ran.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
