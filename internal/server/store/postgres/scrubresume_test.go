package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/storetest"
)

// TestScrubSurvivesRestart: a redaction while a transaction older than it
// is open puts its rewrite off; the store closes (a restart) before it ran.
// The store reopened, the reader gone, nothing in the new process knows of
// the erasure but the row it recorded: the jobs queue's scrub job rewrites
// the tables and the bytes leave the files.
func TestScrubSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	url, db, conn := eraseDB(t)
	org, user, sp := teamSpace(t, db)
	var err error
	m, secret := pgMarker(t, 200)
	for _, content := range []string{secret, "clean\n"} {
		if sp, err = teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user.ID},
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: content}}, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	tx := oldReader(t, url)
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
	storetest.RunScrubJob(t, db)
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
