package storetest

import (
	"fmt"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// testStoreCap checks MemoryStoreCreate's MaxStores (issue 21 point 5):
// repo spaces and other orgs' stores do not count, archived stores do, a
// deleted one frees its place, and a create past the cap is refused with
// TooManyStores and leaves nothing behind.
func testStoreCap(t *testing.T, b *bundle) {
	const max = 2
	create := func(org teammem.Org, name string) (teammem.MemoryStore, error) {
		return b.store.MemoryStoreCreate(b.ctx, org.ID, teammem.MemoryStoreCreateParams{Name: name, MaxStores: max})
	}
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	must[teammem.MemoryStore](t)(create(other, "theirs"))
	repo := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, b.org.ID, "o/r"))
	must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam}))
	first := must[teammem.MemoryStore](t)(create(b.org, "a"))
	must[teammem.MemoryStore](t)(create(b.org, "b"))
	_, err := create(b.org, "c")
	wantCode(t, err, teammem.ETooLarge)
	if d := teammem.ErrorDetails(err); teammem.ErrorReason(err) != teammem.ReasonTooManyStores || d["max_stores_per_org"] != max {
		t.Fatalf("refusal reason %v, details = %v", teammem.ErrorReason(err), d)
	}
	list := must[[]teammem.MemoryStore](t)(b.store.MemoryStoreList(b.ctx, b.org.ID, teammem.MemoryStoreFilter{Limit: 100, IncludeArchived: true}))
	if len(list) != 3 { // the repo's team space and the two stores
		t.Fatalf("%d stores after the refusal, want 3", len(list))
	}
	must[teammem.MemoryStore](t)(create(other, "theirs too"))
	must[teammem.MemoryStore](t)(b.store.MemoryStoreUpdate(b.ctx, b.org.ID, first.Space.ID, teammem.MemoryStoreUpdateParams{ArchivedAt: &first.CreatedAt}))
	_, err = create(b.org, "c")
	wantCode(t, err, teammem.ETooLarge)
	if err := b.store.MemoryStoreDelete(b.ctx, b.org.ID, first.Space.ID); err != nil {
		t.Fatal(err)
	}
	must[teammem.MemoryStore](t)(create(b.org, "c"))
	// Without a cap the store is made.
	must[teammem.MemoryStore](t)(b.store.MemoryStoreCreate(b.ctx, b.org.ID, teammem.MemoryStoreCreateParams{Name: "uncapped"}))
}

// testStoreCapConcurrent races many creates of one org's stores against a
// cap: exactly the cap's worth succeed, whatever the interleaving.
func testStoreCapConcurrent(t *testing.T, b *bundle) {
	const max = 5
	ok := raceCreates(t, teammem.ETooLarge, func(i int) error {
		_, err := b.store.MemoryStoreCreate(b.ctx, b.org.ID, teammem.MemoryStoreCreateParams{Name: fmt.Sprint("s", i), MaxStores: max})
		return err
	})
	list := must[[]teammem.MemoryStore](t)(b.store.MemoryStoreList(b.ctx, b.org.ID, teammem.MemoryStoreFilter{Limit: 100}))
	if ok != max || len(list) != max {
		t.Fatalf("%d concurrent creates under a cap of %d: %d succeeded, %d stored", raceTries, max, ok, len(list))
	}
}
