package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Target describes a database a restore would write into.
type Target struct {
	Version int64 // teammem's schema version; 0 with no teammem schema
	Tables  int   // tables in the schema, teammem's or not
	Orgs    bool  // it holds at least one org
	Others  int   // other sessions connected to the same database
}

// Inspect describes the database dsn names, changing nothing: what a
// restore there would replace, and who else is connected to it.
func Inspect(ctx context.Context, dsn string) (Target, error) {
	var t Target
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return t, fmt.Errorf("connect: %w", interpret(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&t.Tables)
	if err == nil {
		err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&t.Others)
	}
	if err != nil {
		return t, fmt.Errorf("inspect the database: %w", interpret(err))
	}
	var has bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL AND to_regclass('orgs') IS NOT NULL`).Scan(&has); err != nil || !has {
		return t, interpret(err)
	}
	if err := conn.QueryRow(ctx, `SELECT version FROM schema_migrations LIMIT 1`).Scan(&t.Version); err != nil && err != pgx.ErrNoRows {
		return t, fmt.Errorf("read the schema version: %w", interpret(err))
	}
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM orgs)`).Scan(&t.Orgs); err != nil {
		return t, fmt.Errorf("look for orgs: %w", interpret(err))
	}
	return t, nil
}
