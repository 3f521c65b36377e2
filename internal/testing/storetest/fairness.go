package storetest

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// writersWaiting is what a store with one writer for every org (SQLite)
// reports: how many writers wait for it. A store without it locks each
// space on its own (Postgres), so no other org's write waits for a space.
type writersWaiting interface{ WritersWaiting() int }

// testWriteFairness holds a write of org A open with two more of A's
// writers queued behind it, then starts a write of org B: B's write must
// be admitted before A's queued ones, so an org never waits behind another
// org's queue for longer than the write in progress. With one writer for
// every org, B goes next once A's open write ends; with a lock per space, B
// does not wait at all.
func testWriteFairness(t *testing.T, b *bundle) {
	ctx := b.ctx
	spA := b.space(t, "acme/busy")
	other := must[teammem.Org](t)(b.store.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	repoB := must[teammem.Repo](t)(b.store.RepoEnsure(ctx, other.ID, "other/calm"))
	spB := must[teammem.Space](t)(b.store.SpaceEnsure(ctx, other.ID, teammem.SpaceRef{RepoID: repoB.ID, Scope: teammem.ScopeTeam}))

	open := must[teammem.WriteTx](t)(b.store.SpaceWrite(ctx, b.org.ID, spA.ID, nil))
	if _, err := open.LockSpace(ctx); err != nil {
		t.Fatal(err)
	}
	ww, single := b.store.(writersWaiting)
	queued := func(n int) {
		for single && ww.WritersWaiting() < n {
			runtime.Gosched()
		}
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	admit := func(name string, orgID, spaceID int64) chan struct{} {
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			tx, err := b.store.SpaceWrite(ctx, orgID, spaceID, nil)
			if err != nil {
				t.Error(name, err)
				return
			}
			defer tx.Rollback(context.Background())
			if _, err := tx.LockSpace(ctx); err != nil {
				t.Error(name, err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		})
		return done
	}
	admit("A2", b.org.ID, spA.ID)
	queued(1)
	admit("A3", b.org.ID, spA.ID)
	queued(2)
	doneB := admit("B", other.ID, spB.ID)
	if single {
		queued(3)
		// A's open write is a long batch, as in the case this guards:
		// turns go to the org that has held the writer least, and org B's
		// own setup writes (its repo, its space) were charged to it too.
		// Short of this, whichever setup took longer could decide.
		time.Sleep(20 * time.Millisecond)
	} else {
		<-doneB
	}
	open.Rollback(ctx)
	wg.Wait()
	if len(order) != 3 || order[0] != "B" {
		t.Fatalf("admitted in the order %v; want org B's write first, before org A's queued ones", order)
	}
}
