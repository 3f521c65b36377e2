package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/teammem"
)

// TestScrubSurvivesRestart: a redaction while a transaction older than it
// is open puts its rewrite off; the store closes (a restart) before it ran.
// The store reopened, the reader gone, nothing in the new process knows of
// the erasure but the row it recorded: the jobs queue's scrub job rewrites
// the tables and the bytes leave the files.
func TestScrubSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	url, db, conn := eraseDB(t)
	org, user := orgWithOwner(t, db)
	repo, err := db.RepoEnsure(ctx, org.ID, "acme/app")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := db.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	if err != nil {
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
	reader, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close(ctx)
	tx, err := reader.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM entries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.VersionRedact(ctx, org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: user.ID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if !db.ScrubPending() {
		t.Fatal("the rewrite ran under the reader: this test proves nothing")
	}
	db.Close() // the restart, the rewrite still due
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	db = MustOpen(t, url)
	if len(filesHolding(t, conn, m)) == 0 {
		t.Fatal("the files lost the bytes before the job ran: this test proves nothing")
	}
	runScrubJob(t, db)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var owed int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM scrubs_pending`).Scan(&owed); err != nil {
			t.Fatal(err)
		}
		if owed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after the restart the scrub job did not clear the pending scrubs")
		}
	}
	if got := filesHolding(t, conn, m); len(got) > 0 {
		t.Fatalf("after the restart and the scrub job the table files still hold the marker: %v", got)
	}
}

// runScrubJob starts a jobs queue on db with the scrub job alone, as the
// server does, until the test ends.
func runScrubJob(t *testing.T, db *postgres.DB) {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(ctx, db, nil, jobs.Config{FetchPoll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.AddScrubs(q, db); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		q.Stop(ctx)
	})
}
