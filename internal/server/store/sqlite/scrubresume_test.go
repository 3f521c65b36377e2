package sqlite_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
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
	runScrubJob(t, e.db)
	for deadline := time.Now().Add(30 * time.Second); len(e.filesHolding(t, m)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart the scrub job left the marker in %v", e.filesHolding(t, m))
		}
	}
}

// runScrubJob starts a jobs queue on st with the scrub job alone, as the
// server does, until the test ends.
func runScrubJob(t *testing.T, st teammem.Store) {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(ctx, st, nil, jobs.Config{FetchPoll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.AddScrubs(q, st); err != nil {
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
