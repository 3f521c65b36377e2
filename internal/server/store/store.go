// Package store opens the teammem.Store driver a DSN names:
// "sqlite://relative/path.db", "sqlite:///absolute/path.db" or a bare file
// path for SQLite, "postgres://..." or "postgresql://..." for Postgres.
package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// DefaultDSN is the database used when none is configured.
const DefaultDSN = "sqlite://./data/teammem.db"

// Open opens and migrates the database dsn names.
func Open(ctx context.Context, dsn string) (teammem.Store, error) {
	driver, target, err := Parse(dsn)
	if err != nil {
		return nil, err
	}
	switch driver {
	case "postgres":
		db, err := postgres.Open(ctx, target)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		return db, nil
	default:
		db, err := sqlite.Open(ctx, target)
		if err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", target, err)
		}
		return db, nil
	}
}

// Parse splits a DSN into its driver ("sqlite" or "postgres") and what the
// driver opens: a file path for SQLite, the URL itself for Postgres.
func Parse(dsn string) (driver, target string, err error) {
	switch {
	case dsn == "":
		return "", "", fmt.Errorf("database URL is empty")
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", dsn, nil
	case strings.HasPrefix(dsn, "sqlite://"):
		path := strings.TrimPrefix(dsn, "sqlite://")
		if path == "" || strings.ContainsAny(path, "?#") {
			return "", "", fmt.Errorf("database URL %q: want sqlite://relative/path.db or sqlite:///absolute/path.db", dsn)
		}
		return "sqlite", path, nil
	case strings.Contains(dsn, "://"):
		return "", "", fmt.Errorf("database URL %q: unsupported scheme (use sqlite:// or postgres://)", redact(dsn))
	default:
		return "sqlite", dsn, nil
	}
}

// redact hides a password in a URL-shaped DSN for messages.
func redact(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return dsn
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":***@" + host
	}
	return dsn
}

// Redact hides the password of a DSN for logs and errors.
func Redact(dsn string) string { return redact(dsn) }
