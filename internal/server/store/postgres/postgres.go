// Package postgres is the teammem.Store driver for PostgreSQL (pgx v5). It
// mirrors the SQLite driver's behaviour: the same orderings, the same error
// codes and every tenant query scoped by org. Writers to one space queue on a
// row lock of the space (SELECT ... FOR UPDATE) instead of a process mutex, so
// any number of server replicas may share the database.
//
// Erased history is out of every query at once and vacuumed right after,
// but Postgres may keep the bytes in free space, WAL and backups until they
// are reused or expire (history.go).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/teammem/teammem/internal/server/store/dreamsql"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/migrations"
)

// DB is the Postgres store.
type DB struct {
	// Transitions are the dream transitions, run by dreamUpdate.
	dreamsql.Transitions

	pool   *pgxpool.Pool
	heads  *teammem.HeadsCache // entry heads of recently written spaces
	scrubs *scrubber           // rewrites of tables erasures left bytes in (scrub.go)
	// queries counts the statements sent (PoolStats.Queries).
	queries *atomic.Int64
}

var _ teammem.Store = (*DB)(nil)

// migrateLockID is the advisory lock key Open holds while it migrates. Any
// constant works: advisory locks are per database, and this one is only ever
// taken by teammem's own Open.
const migrateLockID int64 = 0x7465616d6d656d // "teammem"

// Open connects to the database named by dsn (a postgres:// URL or key=value
// string) and applies pending migrations. Replicas opening the same database
// at once queue on an advisory lock, so exactly one of them migrates. It
// returns EInvalid for a malformed dsn and EUnavailable when the server
// cannot be reached before ctx ends.
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EInvalid, Message: "invalid database URL"}, err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		// pgxpool's default (max(4, CPUs)) starves a server whose requests
		// are short and many, and one connection is held by LISTEN.
		cfg.MaxConns = int32(max(16, 4*runtime.GOMAXPROCS(0)))
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		// Return timestamps in UTC, as the SQLite driver does, whatever the
		// server's or the process's time zone.
		conn.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}
	queries := new(atomic.Int64)
	cfg.ConnConfig.Tracer = queryCounter{queries}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", interpret(err))
	}
	db := &DB{pool: pool, heads: teammem.NewHeadsCache(teammem.DefaultHeadsCacheEntries), queries: queries}
	db.Transitions = dreamsql.Transitions{Run: db.dreamUpdate}
	if err := db.migrate(ctx, cfg.ConnConfig); err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	db.scrubs = newScrubber(db)
	return db, nil
}

// migrate applies pending migrations while holding migrateLockID on a
// connection of its own. golang-migrate takes an advisory lock too, but gives
// up after 15 seconds and ignores ctx; ours waits as long as ctx allows, so a
// replica starting during a slow migration waits for it instead of failing.
func (db *DB) migrate(ctx context.Context, cc *pgx.ConnConfig) error {
	lock, err := pgx.ConnectConfig(ctx, cc.Copy())
	if err != nil {
		return fmt.Errorf("migrate: %w", interpret(err))
	}
	// Ending the session releases the lock, whatever happened meanwhile.
	defer lock.Close(context.WithoutCancel(ctx))
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLockID); err != nil {
		return fmt.Errorf("migrate: wait for lock: %w", interpret(err))
	}
	return db.migrateLocked()
}

// migrateLocked runs golang-migrate over a database/sql view of the pool.
func (db *DB) migrateLocked() error {
	src, err := iofs.New(migrations.FS, "postgres")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close() // leaves the pool open
	drv, err := migratepgx.WithInstance(sqlDB, &migratepgx.Config{})
	if err != nil {
		return fmt.Errorf("migrate: %w", migrateError(err))
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		drv.Close()
		return fmt.Errorf("migrate: %w", err)
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate: %w", migrateError(err))
	}
	return nil
}

// Ping checks that the database answers and that migrations left it clean.
func (db *DB) Ping(ctx context.Context) error {
	var dirty bool
	var version int64
	err := db.pool.QueryRow(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&version, &dirty)
	if err != nil {
		return interpret(err)
	}
	return teammem.MigrationsClean(version, dirty)
}

// Close closes the pool, waiting for connections in use to be released.
func (db *DB) Close() error {
	db.scrubs.close()
	db.pool.Close()
	return nil
}

// Pool returns the connection pool, for LISTEN/NOTIFY and pool metrics. The
// DB keeps ownership: callers must not close it.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// now is the clock, truncated to what TIMESTAMPTZ keeps.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// collect scans every row with scan. Like the SQLite driver it returns a nil
// slice, not an empty one, when there are no rows.
func collect[T any](rows pgx.Rows, err error, scan func(pgx.Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, interpret(err)
	}
	out, err := pgx.AppendRows([]T(nil), rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	return out, interpret(err)
}

// nullID maps the zero id to NULL, for optional references to users.
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// interpret translates driver errors into teammem codes, by SQLSTATE or error
// type, never by message. The original error stays wrapped for the log.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	var te *teammem.Error
	if errors.As(err, &te) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &teammem.Error{Code: teammem.ENotFound, Message: "not found"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EUnavailable, Message: "request cancelled or timed out"}, err)
	}
	var code string
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		code = pe.Code
	}
	switch {
	case code == "23505": // unique_violation
		return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EConflict, Message: "already exists"}, err)
	case code == "23503": // foreign_key_violation: the org, user or repo named does not exist
		return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.ENotFound, Message: "not found"}, err)
	case code == "22021" || code == "22P05": // a NUL byte or a character the database encoding lacks
		return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EInvalid, Message: "text the database cannot store (NUL byte?)"}, err)
	case unavailable(err, code):
		return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EUnavailable, Message: "database unavailable"}, err)
	}
	return err
}

// unavailable reports whether err means the database cannot serve us right
// now and a retry later may succeed: no connection, a server shutting down or
// overloaded, or a transaction the server aborted to break a lock cycle (the
// counterparts of SQLITE_BUSY and SQLITE_LOCKED).
func unavailable(err error, code string) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, pgconn.ErrConnClosed), pgconn.SafeToRetry(err):
		return true
	case len(code) == 5 && (code[:2] == "08" || code[:2] == "53"): // connection exception, insufficient resources
		return true
	}
	switch code {
	case "57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
		"57014",          // query_canceled, e.g. by statement_timeout
		"40001", "40P01", // serialization_failure, deadlock_detected
		"55P03", // lock_not_available
		"25006": // read_only_sql_transaction: a standby after a failover
		return true
	}
	return false
}

// migrateError unwraps golang-migrate's database.Error (a value or a
// pointer), which hides the driver error from errors.As, so that interpret
// can see it. The query excerpt, a whole migration file, is left out.
func migrateError(err error) error {
	var de database.Error
	var dp *database.Error
	switch {
	case errors.As(err, &dp) && dp != nil:
		de = *dp
	case errors.As(err, &de):
	default:
		return interpret(err)
	}
	if de.OrigErr == nil {
		return err
	}
	if de.Err == "" {
		return interpret(de.OrigErr)
	}
	return fmt.Errorf("%s (line %d): %w", de.Err, de.Line, interpret(de.OrigErr))
}

// PoolStats reports the pgx pool.
func (db *DB) PoolStats() teammem.PoolStats {
	s := db.pool.Stat()
	return teammem.PoolStats{InUse: int(s.AcquiredConns()), Idle: int(s.IdleConns()), Max: int(s.MaxConns()),
		WaitCount: s.EmptyAcquireCount(), WaitDuration: s.EmptyAcquireWaitTime(), Queries: db.queries.Load()}
}

// queryCounter counts every statement the pool's connections send, alone
// or in a batch (PoolStats.Queries).
type queryCounter struct{ n *atomic.Int64 }

func (c queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (queryCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c queryCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.n.Add(1)
}

func (queryCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
