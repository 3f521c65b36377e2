package testpg_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/testing/testpg"
)

func TestNewDatabase(t *testing.T) {
	t.Parallel()
	adminConn := mustConnect(t, testpg.AdminURL(t))

	var first, second string
	outer := t
	t.Run("create", func(t *testing.T) {
		first, second = testpg.NewDatabase(t), testpg.NewDatabase(t)
		if first == second {
			t.Fatalf("two calls returned the same database %s", first)
		}
		for _, u := range []string{first, second} {
			var name string
			err := mustConnect(t, u).QueryRow(t.Context(), "SELECT current_database()").Scan(&name)
			if err != nil {
				t.Fatal(err)
			}
			if name != dbName(t, u) || !strings.HasPrefix(name, testpg.NamePrefix) {
				t.Errorf("connected to database %q through %s", name, u)
			}
		}
		// A connection left open, as by a leaked pool, must not keep the database alive.
		leaked, err := pgx.Connect(t.Context(), second)
		if err != nil {
			t.Fatal(err)
		}
		// Closed only once the outer test ends, long after the drop has cut it off.
		outer.Cleanup(func() { leaked.Close(context.Background()) })
	})

	for _, u := range []string{first, second} {
		if u == "" {
			continue // "create" failed before making it, and said so.
		}
		var exists bool
		err := adminConn.QueryRow(t.Context(),
			"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", dbName(t, u)).Scan(&exists)
		if err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Errorf("database %s still exists after its test ended", dbName(t, u))
		}
	}
}

// TestNewDatabaseWithoutServer runs the test binary again without TEAMMEM_TEST_DATABASE_URL, to
// see NewDatabase skip, or fail under TEAMMEM_REQUIRE_POSTGRES=1 as scripts/test and CI set it.
func TestNewDatabaseWithoutServer(t *testing.T) {
	if os.Getenv("TESTPG_CHILD") == "1" {
		testpg.NewDatabase(t)
		t.Fatal("NewDatabase returned without a server")
	}
	t.Parallel()
	tests := []struct {
		require string
		wantErr bool
		want    string
	}{
		{require: "", wantErr: false, want: "--- SKIP"},
		{require: "1", wantErr: true, want: "must not be skipped"},
	}
	for _, tt := range tests {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNewDatabaseWithoutServer$", "-test.v")
		cmd.Env = append(withoutTestpgEnv(), "TESTPG_CHILD=1", testpg.EnvRequire+"="+tt.require)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tt.wantErr || !strings.Contains(string(out), tt.want) {
			t.Errorf("%s=%q: err = %v, want error %v and output containing %q; output:\n%s",
				testpg.EnvRequire, tt.require, err, tt.wantErr, tt.want, out)
		}
	}
}

// withoutTestpgEnv returns the environment less the variables testpg reads.
func withoutTestpgEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, testpg.EnvURL+"=") && !strings.HasPrefix(kv, testpg.EnvRequire+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// mustConnect opens a connection to rawURL that is closed when tb ends.
func mustConnect(tb testing.TB, rawURL string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), rawURL)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// dbName returns the database named by the path of rawURL.
func dbName(tb testing.TB, rawURL string) string {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}
