package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/teammem"
)

// testScrubsResume: with nothing erased ScrubsResume has nothing to do;
// after an erasure it finishes what is owed (EUnavailable only while
// readers hold it off, which none does here), and calls after that find
// nothing owed.
func testScrubsResume(t *testing.T, b *bundle) {
	if err := b.store.ScrubsResume(b.ctx); err != nil {
		t.Fatalf("ScrubsResume with nothing erased: %v", err)
	}
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "secret"))
	sp = b.apply(t, sp, write("a.md", "clean"))
	if _, _, err := b.store.VersionRedact(b.ctx, b.org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: b.owner.ID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := b.store.ScrubsResume(b.ctx)
		if err == nil {
			break
		}
		if teammem.ErrorCode(err) != teammem.EUnavailable || time.Now().After(deadline) {
			t.Fatalf("ScrubsResume after a redaction: %v", err)
		}
	}
	for range 2 {
		if err := b.store.ScrubsResume(b.ctx); err != nil {
			t.Fatalf("ScrubsResume with nothing owed: %v", err)
		}
	}
}

// RunScrubJob starts a jobs queue on st with the scrub job alone, as the
// server runs it (migrating river's schema first), until the test ends:
// for the drivers' tests that a scrub survives a restart.
func RunScrubJob(t *testing.T, st teammem.Store) {
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
		if err := q.Stop(ctx); err != nil {
			t.Errorf("stop the jobs queue: %v", err)
		}
	})
}
