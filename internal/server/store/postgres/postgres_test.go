package postgres_test

import (
	"context"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/storetest"
	"github.com/teammem/teammem/internal/testing/testpg"
	"github.com/teammem/teammem/migrations"
)

// MustOpen opens a store on url, closed when tb ends.
func MustOpen(tb testing.TB, url string) *postgres.DB {
	tb.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) teammem.Store {
		return MustOpen(t, testpg.NewDatabase(t))
	})
}

func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (teammem.Store, teammem.Store) {
		url := testpg.NewDatabase(t)
		return MustOpen(t, url), MustOpen(t, url)
	})
}

// TestConcurrentOpen starts several replicas on one fresh database at once:
// all must open, and the schema must be migrated exactly once.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	url := testpg.NewDatabase(t)
	const replicas = 4
	dbs := make([]*postgres.DB, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() { dbs[i], errs[i] = postgres.Open(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	var version int64
	var dirty bool
	if err := dbs[0].Pool().QueryRow(t.Context(), `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty); err != nil {
		t.Fatal(err)
	}
	if version != latestMigration(t) || dirty {
		t.Fatalf("schema_migrations = %d, dirty %v", version, dirty)
	}
	if _, err := dbs[1].OrgCreate(t.Context(), teammem.OrgCreateParams{Slug: "a", Name: "A"}); err != nil {
		t.Fatal(err)
	}
	if n, err := dbs[2].OrgCount(t.Context()); err != nil || n != 1 {
		t.Fatalf("OrgCount through another replica = %d, %v", n, err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	url := testpg.NewDatabase(t)
	db := MustOpen(t, url)
	org, err := db.OrgCreate(t.Context(), teammem.OrgCreateParams{Slug: "a", Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if org.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt in %v, want UTC like the SQLite driver", org.CreatedAt.Location())
	}
	db.Close()
	if n, err := MustOpen(t, url).OrgCount(t.Context()); err != nil || n != 1 {
		t.Fatalf("OrgCount after reopen = %d, %v", n, err)
	}
}

// TestOpenUnreachable needs no server: nothing listens on port 1.
func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	_, err := postgres.Open(t.Context(), "postgres://teammem@127.0.0.1:1/teammem?sslmode=disable&connect_timeout=5")
	if code := teammem.ErrorCode(err); code != teammem.EUnavailable {
		t.Fatalf("Open of an unreachable server: code %q (%v), want %q", code, err, teammem.EUnavailable)
	}
	_, err = postgres.Open(t.Context(), "postgres://%zz")
	if code := teammem.ErrorCode(err); code != teammem.EInvalid {
		t.Fatalf("Open of a malformed URL: code %q (%v), want %q", code, err, teammem.EInvalid)
	}
}

// orgWithOwner creates the org acme and its owner alice.
func orgWithOwner(t *testing.T, db *postgres.DB) (teammem.Org, teammem.User) {
	t.Helper()
	org, err := db.OrgCreate(t.Context(), teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := db.UserCreate(t.Context(), org.ID, teammem.UserCreateParams{Handle: "alice", Role: teammem.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	return org, user
}

// setup opens a fresh store with one org, one user and one team space.
func setup(t *testing.T) (*postgres.DB, teammem.Org, teammem.User, teammem.Space) {
	t.Helper()
	db := MustOpen(t, testpg.NewDatabase(t))
	ctx := t.Context()
	org, user := orgWithOwner(t, db)
	repo, err := db.RepoEnsure(ctx, org.ID, "o/r")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := db.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	return db, org, user, sp
}

func changes(c ...teammem.EntryChange) teammem.ApplyFunc {
	return func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return c, nil
	}
}

// TestErrorCodes checks the translations the conformance suite does not
// reach: missing referenced rows, text Postgres cannot store, cancellation.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	db, org, user, sp := setup(t)
	ctx := t.Context()

	_, err := db.UserCreate(ctx, 999999, teammem.UserCreateParams{Handle: "x", Role: teammem.RoleMember})
	wantCode(t, "UserCreate in a missing org", err, teammem.ENotFound)

	err = db.AuditAppend(ctx, org.ID, teammem.AuditEvent{ActorID: 999999, Action: "x"})
	wantCode(t, "AuditAppend by a missing actor", err, teammem.ENotFound)

	_, err = teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user.ID}, Plan: changes(teammem.EntryChange{Key: "nul.md", Op: teammem.OpWrite, Content: "a\x00b"})})
	wantCode(t, "SpaceApply of a NUL byte", err, teammem.EInvalid)
	if !strings.Contains(err.Error(), "nul.md") {
		t.Errorf("error %q does not name the entry", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = db.OrgGet(cancelled, org.ID)
	wantCode(t, "OrgGet with a cancelled context", err, teammem.EUnavailable)

	if got, err := db.SpaceGet(ctx, org.ID, teammem.SpaceRef{RepoID: sp.RepoID, Scope: teammem.ScopeTeam}); err != nil || got.Version != 0 {
		t.Fatalf("space after failed writes = %+v, %v", got, err)
	}
}

// TestPersonalSpaceOfAnotherOrg checks that a personal space cannot be given
// to a user of another org.
func TestPersonalSpaceOfAnotherOrg(t *testing.T) {
	t.Parallel()
	db, org, _, sp := setup(t)
	ctx := t.Context()
	other, err := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := db.UserCreate(ctx, other.ID, teammem.UserCreateParams{Handle: "eve", Role: teammem.RoleOwner})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: sp.RepoID, Scope: teammem.ScopePersonal, UserID: stranger.ID})
	wantCode(t, "SpaceEnsure for another org's user", err, teammem.ENotFound)
}

// TestKeyOrder checks that listings sort by bytes, as SpaceChecksum does and
// as SQLite does, whatever collation the database was created with.
func TestKeyOrder(t *testing.T) {
	t.Parallel()
	db, org, user, sp := setup(t)
	ctx := t.Context()
	// Give the column a linguistic collation, where available, so that an
	// ORDER BY relying on the column's collation would fail here.
	var icu bool
	if err := db.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')`).Scan(&icu); err != nil {
		t.Fatal(err)
	}
	if icu {
		// The search column is generated from key, which Postgres does not
		// let a column change under; this test's database needs no search.
		if _, err := db.Pool().Exec(ctx, `ALTER TABLE entries DROP COLUMN search`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool().Exec(ctx, `ALTER TABLE entries ALTER COLUMN key TYPE text COLLATE "und-x-icu"`); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"b.md", "a-b.md", "B.md", "ab.md", "é.md", "a.md"}
	var cs []teammem.EntryChange
	for _, k := range keys {
		cs = append(cs, teammem.EntryChange{Key: k, Op: teammem.OpWrite, Content: k})
	}
	if _, err := teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user.ID}, Plan: changes(cs...)}); err != nil {
		t.Fatal(err)
	}
	list, err := db.EntriesList(ctx, org.ID, sp.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Key)
	}
	want := "B.md a-b.md a.md ab.md b.md é.md"
	if strings.Join(got, " ") != want {
		t.Fatalf("EntriesList order = %v, want %s", got, want)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := teammem.ErrorCode(err); got != code {
		t.Fatalf("%s: code %q (%v), want %q", what, got, err, code)
	}
}

// latestMigration is the highest migration version the binary embeds.
func latestMigration(tb testing.TB) int64 {
	tb.Helper()
	names, err := fs.Glob(migrations.FS, "postgres/*.up.sql")
	if err != nil || len(names) == 0 {
		tb.Fatalf("no embedded migrations: %v", err)
	}
	var latest int64
	for _, n := range names {
		v, err := strconv.ParseInt(strings.SplitN(strings.TrimPrefix(n, "postgres/"), "_", 2)[0], 10, 64)
		if err != nil {
			tb.Fatalf("migration %s: %v", n, err)
		}
		latest = max(latest, v)
	}
	return latest
}
