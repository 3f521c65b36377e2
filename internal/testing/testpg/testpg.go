// Package testpg gives each test a fresh Postgres database of its own, created on the server
// named by TEAMMEM_TEST_DATABASE_URL and dropped when the test ends.
//
// scripts/test always sets that variable, reusing a local server or starting a throwaway one,
// together with TEAMMEM_REQUIRE_POSTGRES=1, so under it a missing server fails tests instead of
// skipping them. A plain `go test` without the variable skips them.
package testpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// EnvURL names the variable holding the admin URL of the Postgres server tests use.
	EnvURL = "TEAMMEM_TEST_DATABASE_URL"
	// EnvRequire names the variable that, set to "1", makes tests fail rather than skip when
	// EnvURL is unset.
	EnvRequire = "TEAMMEM_REQUIRE_POSTGRES"
	// NamePrefix starts the name of every database NewDatabase creates, so leftovers of a killed
	// test run are easy to find and drop.
	NamePrefix = "teammem_test_"

	// adminTimeout bounds each admin session, so a wedged server fails a test instead of hanging
	// it until the go test timeout.
	adminTimeout = 30 * time.Second
)

// URL returns the admin URL from TEAMMEM_TEST_DATABASE_URL, or "" when it is unset. A caller
// that gets "" must skip, or fail when Required reports true; AdminURL does both.
func URL() string {
	return strings.TrimSpace(os.Getenv(EnvURL))
}

// Required reports whether TEAMMEM_REQUIRE_POSTGRES=1 asks Postgres tests to fail rather than
// skip when no server is configured.
func Required() bool {
	return os.Getenv(EnvRequire) == "1"
}

// AdminURL returns the admin URL, naming the postgres database when the configured URL names
// none. It skips tb when no server is configured, and fails it when Required reports true or
// the URL is not a postgres:// URL.
func AdminURL(tb testing.TB) string {
	tb.Helper()
	return admin(tb).String()
}

// NewDatabase creates a fresh, uniquely named database (teammem_test_<random>) on the server
// named by TEAMMEM_TEST_DATABASE_URL and returns its URL: the admin URL with its path replaced.
// The database is dropped when tb and its subtests finish, even while connections to it remain
// open; a failed drop is only logged. Without a configured server NewDatabase skips tb, or
// fails it when TEAMMEM_REQUIRE_POSTGRES=1.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	u := admin(tb)
	name := NamePrefix + randomSuffix()
	err := withAdmin(u.String(), func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		return err
	})
	if err != nil {
		tb.Fatalf("testpg: create database %s on %s: %v", name, u.Redacted(), err)
	}
	tb.Cleanup(func() {
		if err := dropDatabase(u.String(), name); err != nil {
			tb.Logf("testpg: could not drop database %s; drop it by hand: %v", name, err)
		}
	})
	return withDatabase(u, name).String()
}

// admin is AdminURL before it is turned back into a string.
func admin(tb testing.TB) *url.URL {
	tb.Helper()
	raw := URL()
	if raw == "" {
		if Required() {
			tb.Fatalf("testpg: %s is unset but %s=1: Postgres tests must not be skipped; run them with scripts/test",
				EnvURL, EnvRequire)
		}
		tb.Skipf("testpg: %s is unset, skipping this Postgres test; scripts/test sets it", EnvURL)
	}
	u, err := parseAdmin(raw)
	if err != nil {
		tb.Fatalf("testpg: %s: %v", EnvURL, err)
	}
	return u
}

// withAdmin runs fn on a fresh connection to the admin URL, closing it afterwards.
func withAdmin(adminURL string, fn func(context.Context, *pgx.Conn) error) error {
	// Not the test's own context: cleanups run after it has been cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return fn(ctx, conn)
}

// dropDatabase drops the named database, ending any sessions still connected to it.
func dropDatabase(adminURL, name string) error {
	return withAdmin(adminURL, func(ctx context.Context, conn *pgx.Conn) error {
		ident := pgx.Identifier{name}.Sanitize()
		var version int
		err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version)
		if err != nil {
			return err
		}
		if version >= 130000 {
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
			return err
		}
		// Before 13 DROP DATABASE refuses while sessions remain, so end them first.
		_, err = conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = $1 AND pid <> pg_backend_pid()`, name)
		if err != nil {
			return err
		}
		_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident)
		return err
	})
}

// randomSuffix returns 16 lowercase hex digits, enough that parallel test processes sharing one
// server never pick the same database name.
func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:]) // Never fails since Go 1.24.
	return hex.EncodeToString(b[:])
}
