package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// TestApplyAnnouncesInTransaction: an announcer's NOTIFY is delivered when
// the write commits, carries the committed head, and is never sent for a
// write that rolls back.
func TestApplyAnnouncesInTransaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := MustOpen(t, testpg.NewDatabase(t))
	listener, err := db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, `LISTEN test_announce`); err != nil {
		t.Fatal(err)
	}
	org, _ := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
	repo, _ := db.RepoEnsure(ctx, org.ID, "o/r")
	sp, err := db.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	if !db.CanAnnounce() {
		t.Fatal("the Postgres store does not declare in-transaction announcements")
	}
	announce := func(head teammem.Space) (teammem.Announcement, bool) {
		return teammem.Announcement{Channel: "test_announce", Payload: head.Checksum}, true
	}
	apply := func(fail error) (teammem.Space, error) {
		return teammem.SpaceApply(ctx, db, org.ID, sp.ID, teammem.ApplyParams{Announce: announce,
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: "x"}}, fail
			}})
	}
	next := func() (string, bool) {
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		n, err := listener.Conn().WaitForNotification(wctx)
		if err != nil {
			return "", false
		}
		return n.Payload, true
	}

	boom := errors.New("refused")
	if _, err := apply(boom); !errors.Is(err, boom) {
		t.Fatalf("apply = %v, want the plan's error", err)
	}
	if p, ok := next(); ok {
		t.Fatalf("a refused write was announced: %q", p)
	}
	head, err := apply(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := next(); !ok || p != head.Checksum {
		t.Fatalf("announcement = %q, %v; want the committed checksum %s", p, ok, head.Checksum)
	}
}
