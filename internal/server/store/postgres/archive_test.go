package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/teammem"
)

// TestArchiveAndWriteSerialize orders an archive and a write of one store
// both ways on the space's row lock, across connections as two replicas
// would: an archive waits for a write that holds the lock (and the write
// lands), and a write that waited for an archive reads it once granted
// (and is refused). Waiting is observed in pg_stat_activity, not timed.
func TestArchiveAndWriteSerialize(t *testing.T) {
	t.Parallel()
	db, org, user, _ := setup(t)
	ctx := t.Context()
	newStore := func(name string) teammem.MemoryStore {
		m, err := db.MemoryStoreCreate(ctx, org.ID, teammem.MemoryStoreCreateParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	apply := func(m teammem.MemoryStore, plan teammem.ApplyFunc) error {
		_, err := teammem.SpaceApply(ctx, db, org.ID, m.Space.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user.ID}, Plan: plan})
		return err
	}

	t.Run("write first", func(t *testing.T) {
		m := newStore("write first")
		locked, release, wrote := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			wrote <- apply(m, func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				close(locked) // under the lock
				<-release
				return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: "landed"}}, nil
			})
		}()
		<-locked
		archived := make(chan error, 1)
		go func() {
			at := time.Now()
			_, err := db.MemoryStoreUpdate(ctx, org.ID, m.Space.ID, teammem.MemoryStoreUpdateParams{ArchivedAt: &at})
			archived <- err
		}()
		waitForLockWaiter(t, db, archived, "the archive did not wait for the write holding the space's lock")
		close(release)
		if err := <-wrote; err != nil {
			t.Fatalf("the write that held the lock: %v", err)
		}
		if err := <-archived; err != nil {
			t.Fatalf("archive: %v", err)
		}
		if e, err := db.EntryGet(ctx, org.ID, m.Space.ID, "a.md"); err != nil || e.Content != "landed" {
			t.Fatalf("a.md = %+v, %v", e, err)
		}
		err := apply(m, changes(teammem.EntryChange{Key: "b.md", Op: teammem.OpWrite, Content: "late"}))
		if teammem.ErrorMessage(err) != teammem.MsgArchived {
			t.Fatalf("a write after the archive: %v", err)
		}
	})

	t.Run("archive first", func(t *testing.T) {
		m := newStore("archive first")
		// An archive in progress, as MemoryStoreUpdate runs it: the space's
		// row lock, then the update, not committed yet.
		tx, err := db.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		if _, err := tx.Exec(ctx, `SELECT 1 FROM spaces WHERE id = $1 FOR UPDATE`, m.Space.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE memory_stores SET archived_at = now() WHERE space_id = $1`, m.Space.ID); err != nil {
			t.Fatal(err)
		}
		wrote := make(chan error, 1)
		go func() {
			wrote <- apply(m, changes(teammem.EntryChange{Key: "a.md", Op: teammem.OpWrite, Content: "raced"}))
		}()
		waitForLockWaiter(t, db, wrote, "the write did not wait for the archive holding the space's lock")
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-wrote; teammem.ErrorMessage(err) != teammem.MsgArchived {
			t.Fatalf("the write that waited for the archive: %v, want %q", err, teammem.MsgArchived)
		}
		if _, err := db.EntryGet(ctx, org.ID, m.Space.ID, "a.md"); teammem.ErrorCode(err) != teammem.ENotFound {
			t.Fatalf("a.md after the refused write: %v", err)
		}
	})
}

// waitForLockWaiter returns once a backend of the test's database waits
// for a lock, and fails with msg if done delivers first (the other side
// finished without waiting).
func waitForLockWaiter(t *testing.T, db *postgres.DB, done chan error, msg string) {
	t.Helper()
	for {
		var n int
		if err := db.Pool().QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("%s (it returned %v)", msg, err)
		case <-time.After(5 * time.Millisecond): // poll again
		}
	}
}
