package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// pgMarker returns a string found nowhere else, inside content of about n
// bytes that does not compress (a compressed TOAST value would hide the
// marker from the search, and prove nothing).
func pgMarker(t *testing.T, n int) (string, string) {
	t.Helper()
	b := make([]byte, 12+n/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	m := "ERASE-ME-" + hex.EncodeToString(b[:12])
	return m, m + "\n" + hex.EncodeToString(b[12:]) + "\n" + m + "\n"
}

// tableFiles returns the files of the test database's directory in the
// cluster's data directory (every table, TOAST table and index of it),
// after a CHECKPOINT wrote every dirty buffer out. The test runs on the
// database server's machine; without read access to its data directory it
// fails under TEAMMEM_REQUIRE_POSTGRES and skips otherwise.
func tableFiles(t *testing.T, conn *pgx.Conn) (dir string, relOf func(file string) string) {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	var data, db string
	if err := conn.QueryRow(ctx, `SELECT current_setting('data_directory'), pg_relation_filepath('entries')`).Scan(&data, &db); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(data, filepath.Dir(db))
	if _, err := os.ReadDir(dir); err != nil {
		if testpg.Required() {
			t.Fatalf("the database's files are not readable here (%v): run the test on the server's machine as a user that can read %s", err, data)
		}
		t.Skipf("the database's files are not readable here: %v", err)
	}
	names := map[string]string{}
	rows, err := conn.Query(ctx, `SELECT pg_relation_filepath(oid), relname FROM pg_class WHERE pg_relation_filepath(oid) IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var path, name string
		if err := rows.Scan(&path, &name); err != nil {
			t.Fatal(err)
		}
		names[filepath.Base(path)] = name
	}
	rows.Close()
	return dir, func(file string) string {
		base, _, _ := strings.Cut(filepath.Base(file), "_") // forks: _fsm, _vm
		base, _, _ = strings.Cut(base, ".")                 // segments
		if n, ok := names[base]; ok {
			return n + " (" + filepath.Base(file) + ")"
		}
		return filepath.Base(file)
	}
}

// filesHolding returns the files of dir holding any of the markers, named
// by relation.
func filesHolding(t *testing.T, conn *pgx.Conn, markers ...string) []string {
	t.Helper()
	dir, relOf := tableFiles(t, conn)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			if os.IsNotExist(err) { // dropped meanwhile
				continue
			}
			t.Fatal(err)
		}
		for _, m := range markers {
			// The search column and its index keep the words of a text,
			// in lower case: the marker's random part alone is one.
			if bytes.Contains(b, []byte(m)) || bytes.Contains(b, []byte(strings.ToLower(strings.TrimPrefix(m, "ERASE-ME-")))) {
				found = append(found, relOf(e.Name())+": "+m[:16])
			}
		}
	}
	return found
}

// waitScrub waits for the store's own follow-up work after an erasure.
func waitScrub(t *testing.T, db *postgres.DB) {
	t.Helper()
	s, ok := any(db).(interface{ ScrubPending() bool })
	if !ok {
		return
	}
	for deadline := time.Now().Add(60 * time.Second); s.ScrubPending(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the scrub after the erasure did not finish")
		}
	}
}

// eraseDB opens a fresh store and a raw connection to its database, for
// reading where its tables' files are.
func eraseDB(t *testing.T) (url string, db *postgres.DB, conn *pgx.Conn) {
	t.Helper()
	url = testpg.NewDatabase(t)
	db = MustOpen(t, url)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return url, db, conn
}

// TestErasedBytesLeaveTheTableFiles writes unique markers into entries
// that are then overwritten (the old content stays behind as dead tuples
// of entries), into history, into proposals and into session notes, small ones in the heap and
// large ones in TOAST; then redacts and purges, lets the store's follow-up
// work finish, and searches the raw files of the database's tables, TOAST
// tables and indexes: every marker is there before, none after.
func TestErasedBytesLeaveTheTableFiles(t *testing.T) {
	ctx := context.Background()
	_, db, conn := eraseDB(t)
	org, user := orgWithOwner(t, db)
	space := func(slug string) teammem.Space {
		repo, err := db.RepoEnsure(ctx, org.ID, slug)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := db.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	apply := func(sp teammem.Space, changes ...teammem.EntryChange) teammem.Space {
		sp, err := teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user.ID},
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return changes, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	w := func(key, content string) teammem.EntryChange {
		return teammem.EntryChange{Key: key, Op: teammem.OpWrite, Content: content}
	}
	propose := func(repo, key, content string, status teammem.ProposalStatus) {
		p, err := db.ProposalCreate(ctx, org.ID, teammem.Proposal{Repo: repo, Scope: teammem.ScopeTeam, AuthorID: user.ID, Reason: teammem.HeldTeamWrites,
			Changes: []teammem.ProposedChange{{Key: key, Op: teammem.OpWrite, Content: content}}})
		if err != nil {
			t.Fatal(err)
		}
		if status != teammem.ProposalPending {
			if _, err := db.ProposalDecide(ctx, org.ID, p.ID, teammem.ProposalDecideParams{Status: status, By: user.ID, At: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var markers []string
	// Redacted: a small and a large version, overwritten, each also held by
	// a proposal.
	red := space("acme/redact")
	mSmall, small := pgMarker(t, 200)
	mLarge, large := pgMarker(t, 40_000)
	markers = append(markers, mSmall, mLarge)
	propose("acme/redact", "a.md", small, teammem.ProposalApproved)
	propose("acme/redact", "b.md", large, teammem.ProposalRejected)
	red = apply(red, w("a.md", small), w("b.md", large), w("keep.md", "unrelated"))
	propose("acme/redact", "a.md", small, teammem.ProposalPending)
	red = apply(red, w("a.md", "clean\n"), w("b.md", "clean\n"))
	// Purged: a space whose entries are overwritten and whose history goes.
	pur := space("acme/purge")
	mPurge, purged := pgMarker(t, 200)
	mPurgeLarge, purgedLarge := pgMarker(t, 40_000)
	markers = append(markers, mPurge, mPurgeLarge)
	propose("acme/purge", "p.md", purged, teammem.ProposalRejected)
	pur = apply(pur, w("p.md", purged), w("q.md", purgedLarge))
	pur = apply(pur, w("p.md", "clean\n"), w("q.md", "clean\n"))
	// Session notes uploaded for the purged space, small and large.
	for i, size := range []int{200, 40_000} {
		m, notes := pgMarker(t, size)
		markers = append(markers, m)
		if _, err := db.SessionNotesPut(ctx, org.ID, teammem.SessionNotesPutParams{ClaudeCodeSessionID: fmt.Sprintf("0a1b2c3d-0000-4000-8000-00000000000%d", i),
			SpaceID: pur.ID, UploaderID: user.ID, Content: notes}); err != nil {
			t.Fatal(err)
		}
	}

	if got := filesHolding(t, conn, markers...); len(got) < len(markers) {
		t.Fatalf("before the erasure only %v hold the markers: the search proves nothing", got)
	}
	for _, key := range []string{"a.md", "b.md"} {
		if _, _, err := db.VersionRedact(ctx, org.ID, red.ID, teammem.VersionRedactParams{Key: key, Version: 1, By: user.ID, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SpaceVersionsPurge(ctx, org.ID, pur.ID); err != nil {
		t.Fatal(err)
	}
	waitScrub(t, db)
	if held, ok := any(db).(interface {
		ScrubHeld() map[string]time.Duration
	}); ok {
		t.Logf("rewrites held their locks for %v", held.ScrubHeld())
	}
	if got := filesHolding(t, conn, markers...); len(got) > 0 {
		t.Fatalf("after the redactions, the purge and the scrub, the table files still hold markers:\n%s", strings.Join(got, "\n"))
	}
	if e, err := db.EntryGet(ctx, org.ID, red.ID, "keep.md"); err != nil || e.Content != "unrelated" {
		t.Fatalf("keep.md after the erasure: %+v, %v", e, err)
	}
}

// TestScrubWaitsOutOldReadersWithoutBlockingWriters: while a transaction
// older than a redaction is open (a slow export on the same table), the
// rewrite that removes the redacted bytes is put off, not queued for its
// lock, so writes of entries go on meanwhile; once the reader ends, the
// rewrite runs and the bytes leave the files.
func TestScrubWaitsOutOldReadersWithoutBlockingWriters(t *testing.T) {
	ctx := context.Background()
	url, db, conn := eraseDB(t)
	org, user, sp := teamSpace(t, db)
	apply := func(ctx context.Context, key, content string) error {
		var err error
		sp, err = teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user.ID},
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return []teammem.EntryChange{{Key: key, Op: teammem.OpWrite, Content: content}}, nil
			}})
		return err
	}
	m, secret := pgMarker(t, 200)
	if err := apply(ctx, "a.md", secret); err != nil {
		t.Fatal(err)
	}
	if err := apply(ctx, "a.md", "clean\n"); err != nil {
		t.Fatal(err)
	}
	tx := oldReader(t, url)
	if _, _, err := db.VersionRedact(ctx, org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: user.ID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// Writes of entries go on while the rewrite is due; a rewrite queued
	// for its lock behind the reader would hold every one of them.
	for i := range 20 {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a guard: a queued write would wait for the reader, forever here
		err := apply(wctx, "b.md", strings.Repeat("b", i+1))
		cancel()
		if err != nil {
			t.Fatalf("write %d while the reader is open: %v", i, err)
		}
	}
	if !db.ScrubPending() {
		t.Fatal("the rewrite ran while a transaction older than the redaction could still see the erased row")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitScrub(t, db)
	if got := filesHolding(t, conn, m); len(got) > 0 {
		t.Fatalf("after the reader ended and the rewrite ran, the table files still hold the marker: %v", got)
	}
}

// TestScrubWaitsOutOldTransactionsOfOtherDatabases: a transaction that
// began before the erasure in another database of the cluster makes every
// later snapshot's xmin older than the erasure, VACUUM FULL's own too,
// which would keep the erased rows; the rewrite waits for it.
func TestScrubWaitsOutOldTransactionsOfOtherDatabases(t *testing.T) {
	ctx := context.Background()
	_, db, conn := eraseDB(t)
	org, user, sp := teamSpace(t, db)
	other, err := pgx.Connect(ctx, testpg.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close(ctx) })
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil { // a transaction id of its own
		t.Fatal(err)
	}
	m, secret := pgMarker(t, 200)
	for _, content := range []string{secret, "clean\n"} {
		if sp, err = teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user.ID},
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: content}}, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := db.VersionRedact(ctx, org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: user.ID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the scrubber's first tries
	if !db.ScrubPending() {
		t.Fatal("the rewrite ran while a transaction older than the erasure ran in another database")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitScrub(t, db)
	if got := filesHolding(t, conn, m); len(got) > 0 {
		t.Fatalf("after the old transaction ended and the rewrite ran, the table files still hold the marker: %v", got)
	}
}

// oldReader opens the slow reader: a transaction of its own connection
// that read entries, still open, so its snapshot predates what comes next.
func oldReader(t *testing.T, url string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	reader, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close(ctx) })
	tx, err := reader.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM entries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return tx
}

// teamSpace creates an org with its owner and the team space of its repo
// acme/app.
func teamSpace(t *testing.T, db *postgres.DB) (teammem.Org, teammem.User, teammem.Space) {
	t.Helper()
	org, user := orgWithOwner(t, db)
	repo, err := db.RepoEnsure(t.Context(), org.ID, "acme/app")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := db.SpaceEnsure(t.Context(), org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	return org, user, sp
}
