package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// batcher buffers rows per table and hands them to flush in genTables
// order once enough are buffered, so foreign keys always find their rows.
type batcher struct {
	rows  map[string][][]any
	n     int
	limit int
	flush func(ctx context.Context, t table, rows [][]any) error
}

func newBatcher(limit int, flush func(context.Context, table, [][]any) error) *batcher {
	return &batcher{rows: map[string][][]any{}, limit: limit, flush: flush}
}

func (b *batcher) add(ctx context.Context, table string, row []any) error {
	b.rows[table] = append(b.rows[table], row)
	if b.n++; b.n >= b.limit {
		return b.flushAll(ctx)
	}
	return nil
}

func (b *batcher) flushAll(ctx context.Context) error {
	for _, t := range genTables {
		if rows := b.rows[t.name]; len(rows) > 0 {
			if err := b.flush(ctx, t, rows); err != nil {
				return fmt.Errorf("insert into %s: %w", t.name, err)
			}
			b.rows[t.name] = rows[:0]
		}
	}
	b.n = 0
	return nil
}

// pgSink writes with COPY (pgx CopyFrom).
type pgSink struct {
	conn *pgx.Conn
	*batcher
}

// openPGSink connects to dsn on a connection of its own.
func openPGSink(ctx context.Context, dsn string) (*pgSink, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	s := &pgSink{conn: conn}
	s.batcher = newBatcher(20000, func(ctx context.Context, t table, rows [][]any) error {
		_, err := conn.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, pgx.CopyFromRows(rows))
		return err
	})
	return s, nil
}

func (s *pgSink) maxID(ctx context.Context, table string) (int64, error) {
	var n int64
	err := s.conn.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n)
	return n, err
}

// finish flushes, moves each serial sequence past the ids written and
// refreshes the planner's statistics and visibility maps, as autovacuum
// would have on a database that grew slowly.
func (s *pgSink) finish(ctx context.Context) error {
	if err := s.flushAll(ctx); err != nil {
		return err
	}
	for _, t := range serialTables {
		q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', 'id'), greatest((SELECT max(id) FROM %s), 1))`, t, t)
		if _, err := s.conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("setval %s: %w", t, err)
		}
	}
	_, err := s.conn.Exec(ctx, `VACUUM (ANALYZE)`)
	return err
}

func (s *pgSink) close() { s.conn.Close(context.Background()) }

// sqliteSink writes with multi-row INSERTs, one transaction per batch.
type sqliteSink struct {
	db *sql.DB
	*batcher
}

// openSQLiteSink opens the file at path; synchronous=OFF, since a crash
// mid-generation only loses a database about to be regenerated.
func openSQLiteSink(path string) (*sqliteSink, error) {
	q := url.Values{"_txlock": {"immediate"}}
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(1)", "busy_timeout(10000)", "synchronous(OFF)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	s := &sqliteSink{db: db}
	s.batcher = newBatcher(20000, s.insert)
	return s, nil
}

// insert writes rows of t in statements of up to 400 rows.
func (s *sqliteSink) insert(ctx context.Context, t table, rows [][]any) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", ") + ")"
	for len(rows) > 0 {
		chunk := rows[:min(400, len(rows))]
		rows = rows[len(chunk):]
		args := make([]any, 0, len(chunk)*len(t.cols))
		for _, r := range chunk {
			for _, v := range r {
				args = append(args, sqliteValue(v))
			}
		}
		q := "INSERT INTO " + t.name + " (" + strings.Join(t.cols, ", ") + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(one+", ", len(chunk)), ", ")
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// sqliteValue stores values as the SQLite store does: timestamps as
// microseconds since the epoch, booleans as 0 or 1.
func sqliteValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UnixMicro()
	case bool:
		if x {
			return 1
		}
		return 0
	}
	return v
}

func (s *sqliteSink) maxID(ctx context.Context, table string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+table).Scan(&n)
	return n, err
}

func (s *sqliteSink) finish(ctx context.Context) error {
	if err := s.flushAll(ctx); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

func (s *sqliteSink) close() { s.db.Close() }
