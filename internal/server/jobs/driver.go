package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", as the store uses

	"github.com/teammem/teammem/internal/teammem"
)

// pgStore is the Postgres store: river runs on its pool.
type pgStore interface{ Pool() *pgxpool.Pool }

// sqliteStore is the SQLite store: river opens its file once more.
type sqliteStore interface{ Path() string }

// migrateLockID is the advisory lock replicas migrating river's schema
// at once take on Postgres (the store's migrations hold another).
const migrateLockID = 0x7465616d6a6f6273 // "teamjobs"

// open returns a river client on st's database, and what closes the
// connection it opened (nil on Postgres: the pool is the store's).
func open(ctx context.Context, st teammem.Store, rc *river.Config) (client, func() error, error) {
	switch s := st.(type) {
	case pgStore:
		c, err := river.NewClient(riverpgxv5.New(s.Pool()), rc)
		if err != nil {
			return nil, nil, fmt.Errorf("jobs: %w", err)
		}
		return c, nil, nil
	case sqliteStore:
		db, err := openSQLite(s.Path())
		if err != nil {
			return nil, nil, err
		}
		// Without LISTEN, every replica polls.
		rc.PollOnly = true
		c, err := river.NewClient(riversqlite.New(db), rc)
		if err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("jobs: %w", err)
		}
		return c, db.Close, nil
	default:
		return nil, nil, fmt.Errorf("jobs: the store %T is neither Postgres nor SQLite", st)
	}
}

// openSQLite opens river's own connection to the store's file: one
// connection (SQLite has one writer; river's statements would otherwise
// fail with SQLITE_BUSY on each other), the store's journal and
// durability, and a busy timeout to wait out the store's writer.
func openSQLite(path string) (*sql.DB, error) {
	q := url.Values{"_txlock": {"immediate"}}
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(1)", "busy_timeout(10000)", "synchronous(NORMAL)", "secure_delete(1)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("jobs: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// Migrate applies river's pending migrations to st's database; run it
// wherever the store's migrations run. Running it again changes nothing.
// On Postgres, replicas starting together migrate one after another.
func Migrate(ctx context.Context, st teammem.Store) error {
	switch s := st.(type) {
	case pgStore:
		conn, err := s.Pool().Acquire(ctx)
		if err != nil {
			return fmt.Errorf("jobs: migrate: %w", err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLockID)); err != nil {
			return fmt.Errorf("jobs: migrate: wait for lock: %w", err)
		}
		defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLockID))
		return migrateDriver(ctx, riverpgxv5.New(s.Pool()))
	case sqliteStore:
		db, err := openSQLite(s.Path())
		if err != nil {
			return err
		}
		defer db.Close()
		return migrateDriver(ctx, riversqlite.New(db))
	default:
		return fmt.Errorf("jobs: the store %T is neither Postgres nor SQLite", st)
	}
}

// migrateDriver runs river's migrations up on d.
func migrateDriver[TTx any](ctx context.Context, d riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(d, nil)
	if err != nil {
		return fmt.Errorf("jobs: migrate: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("jobs: migrate river's schema: %w", err)
	}
	return nil
}
