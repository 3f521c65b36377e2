package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// BackupInto writes a consistent copy of the database to path, a file that
// must not exist yet, while the server goes on serving: VACUUM INTO reads
// one snapshot (every write committed before it began, nothing after) on a
// reader connection, so writers are never held. The copy is one file, in
// rollback-journal mode, with free pages left out.
//
// A scrub an erasure still owes runs first: until it has, the search
// index's segments can still hold the erased words, and the copy would
// keep them (the WAL and free pages are never copied). The scrub's error,
// when readers keep it from finishing, is returned and nothing is written.
func (db *DB) BackupInto(ctx context.Context, path string) error {
	if err := db.ScrubsResume(ctx); err != nil {
		return fmt.Errorf("an erasure's scrub must finish before a backup (else the backup would keep what was erased): %w", err)
	}
	if _, err := db.r.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		return fmt.Errorf("back up into %s: %w", path, interpret(err))
	}
	return nil
}

// openReadOnly opens the file at path for reading only. A live database
// (a server may be writing it) is read with its WAL; any other file, such
// as a backup, as immutable, which makes no companions beside it.
func openReadOnly(path string, live bool) (*sql.DB, error) {
	q := url.Values{"mode": {"ro"}}
	if !live {
		q.Set("immutable", "1")
	}
	return sql.Open("sqlite", "file:"+path+"?"+q.Encode())
}

// Inspect describes the database file at path without changing it: its
// schema version and whether it holds any org (live: see openReadOnly). A
// file that is not a teammem database is an error that says so.
func Inspect(ctx context.Context, path string, live bool) (version int64, orgs bool, err error) {
	db, err := openReadOnly(path, live)
	if err != nil {
		return 0, false, err
	}
	defer db.Close()
	var dirty bool
	if err := db.QueryRowContext(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&version, &dirty); err != nil {
		return 0, false, fmt.Errorf("%s is not a teammem SQLite database: %w", path, interpret(err))
	}
	if dirty {
		return 0, false, fmt.Errorf("%s: migration %d is dirty", path, version)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM orgs LIMIT 1)`).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, interpret(err))
	}
	return version, n > 0, nil
}

// QuickCheck runs SQLite's quick_check over the file at path, a file
// nobody writes: nil when every page and index is well formed.
func QuickCheck(ctx context.Context, path string) error {
	db, err := openReadOnly(path, false)
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); err != nil {
		return fmt.Errorf("check %s: %w", path, interpret(err))
	}
	if res != "ok" {
		return fmt.Errorf("check %s: %s", path, res)
	}
	return nil
}

// InUse reports whether another connection, of this process or another,
// has the database file at path open: it asks for the file's exclusive
// lock, without waiting, and lets it go at once. A missing file is not in
// use. Before it answers, a file nobody holds has its WAL folded in, so
// that the file alone holds every committed write.
func InUse(ctx context.Context, path string) (bool, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	q := url.Values{"_pragma": {"busy_timeout(0)", "locking_mode(EXCLUSIVE)"}}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return false, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n)
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED) {
			return true, nil
		}
		return false, fmt.Errorf("open %s: %w", path, interpret(err))
	}
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return false, fmt.Errorf("checkpoint %s: %w", path, interpret(err))
	}
	return false, nil
}
