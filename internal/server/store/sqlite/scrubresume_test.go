package sqlite_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/storetest"
)

// TestScrubSurvivesRestart: a redaction while a reader holds an older
// snapshot (which keeps the checkpoint from copying the WAL, so its frames
// keep the bytes), then the store closes before the scrub could finish. The
// store reopened, the reader gone, the jobs queue's scrub job finishes the
// scrub the erasure recorded: no file holds the bytes.
func TestScrubSurvivesRestart(t *testing.T) {
	e := newEraseEnv(t)
	m, secret := marker(t, 200)
	sp := e.apply(t, e.space(t), write("a.md", secret))
	sp = e.apply(t, sp, write("a.md", "clean\n"))
	reader, err := sql.Open("sqlite", "file:"+e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tx, err := reader.BeginTx(e.ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(e.ctx, `SELECT count(*) FROM entries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.VersionRedact(e.ctx, e.org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: e.user.ID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if !e.db.ScrubPending() {
		t.Fatal("the scrub finished under the reader: this test proves nothing")
	}
	e.db.Close() // the restart, the scrub unfinished
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if e.db, err = sqlite.Open(e.ctx, e.path); err != nil {
		t.Fatal(err)
	}
	if len(e.filesHolding(t, m)) == 0 {
		t.Fatal("the files lost the bytes before the job ran: this test proves nothing")
	}
	storetest.RunScrubJob(t, e.db)
	for deadline := time.Now().Add(30 * time.Second); len(e.filesHolding(t, m)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart the scrub job left the marker in %v", e.filesHolding(t, m))
		}
	}
}
