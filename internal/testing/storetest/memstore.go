package storetest

import (
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// testMemoryIDs checks memory ids: kept by edits, carried by a rename, new
// for a key written again after its delete; versions record them and their
// provenance.
func testMemoryIDs(t *testing.T, b *bundle) {
	sp := b.space(t, "o/mem")
	sp = b.apply(t, sp, write("a.md", "one"), write("b.md", "bee"))
	a := must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "a.md"))
	if !teammem.ValidMemoryID(a.MemoryID) {
		t.Fatalf("memory id %q is not a memory id", a.MemoryID)
	}
	sp = b.apply(t, sp, write("a.md", "two"))
	if got := must[teammem.Entry](t)(b.store.MemoryGet(b.ctx, b.org.ID, sp.ID, a.MemoryID)); got.Key != "a.md" || got.Content != "two" {
		t.Fatalf("after an edit, memory %s = %q %q", a.MemoryID, got.Key, got.Content)
	}
	// A rename: the old key deleted, the new one written with its id.
	sp = b.apply(t, sp, del("a.md"), teammem.EntryChange{Key: "dir/a.md", Op: teammem.OpWrite, Content: "two", MemoryID: a.MemoryID})
	if got := must[teammem.Entry](t)(b.store.MemoryGet(b.ctx, b.org.ID, sp.ID, a.MemoryID)); got.Key != "dir/a.md" {
		t.Fatalf("after a rename, memory %s is at %q", a.MemoryID, got.Key)
	}
	// Writing the deleted key again makes a new memory.
	sp = b.apply(t, sp, write("a.md", "three"))
	again := must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "a.md"))
	if again.MemoryID == a.MemoryID || !teammem.ValidMemoryID(again.MemoryID) {
		t.Fatalf("a re-created key got memory id %q (the old one was %q)", again.MemoryID, a.MemoryID)
	}
	// Pages in key order, filtered by prefix.
	page := must[[]teammem.Entry](t)(b.store.MemoriesList(b.ctx, b.org.ID, sp.ID, teammem.MemoryFilter{Limit: 2}))
	if len(page) != 2 || page[0].Key != "a.md" || page[1].Key != "b.md" {
		t.Fatalf("first page = %+v", page)
	}
	page = must[[]teammem.Entry](t)(b.store.MemoriesList(b.ctx, b.org.ID, sp.ID, teammem.MemoryFilter{AfterKey: "b.md", Limit: 10}))
	if len(page) != 1 || page[0].Key != "dir/a.md" {
		t.Fatalf("page after b.md = %+v", page)
	}
	page = must[[]teammem.Entry](t)(b.store.MemoriesList(b.ctx, b.org.ID, sp.ID, teammem.MemoryFilter{Prefix: "dir/", Limit: 10, WithContent: true}))
	if len(page) != 1 || page[0].Content != "two" {
		t.Fatalf("prefix page = %+v", page)
	}
	n := 0
	head := must[teammem.Space](t)(b.store.MemoriesEach(b.ctx, b.org.ID, sp.ID, true, func(_ teammem.Space, e teammem.Entry) error {
		n++
		return nil
	}))
	if n != 3 || head.Version != sp.Version {
		t.Fatalf("MemoriesEach saw %d entries at version %d, want 3 at %d", n, head.Version, sp.Version)
	}
	// Versions of the renamed memory: created, modified, then the rename's write (modified).
	vs := must[[]teammem.EntryVersion](t)(b.store.MemoryVersionsList(b.ctx, b.org.ID, sp.ID, teammem.MemoryVersionFilter{MemoryID: a.MemoryID, Limit: 10}))
	if len(vs) != 4 { // write, write, delete of a.md, write of dir/a.md
		t.Fatalf("memory %s has %d versions, want 4", a.MemoryID, len(vs))
	}
	if !vs[len(vs)-1].Created || vs[0].Created {
		t.Fatalf("created flags = first %v, last %v", vs[len(vs)-1].Created, vs[0].Created)
	}
	created := must[[]teammem.EntryVersion](t)(b.store.MemoryVersionsList(b.ctx, b.org.ID, sp.ID, teammem.MemoryVersionFilter{Operation: "created", Limit: 10}))
	if len(created) != 3 { // a.md (first), b.md, a.md again
		t.Fatalf("%d created versions, want 3", len(created))
	}
	v := must[teammem.EntryVersion](t)(b.store.MemoryVersionGet(b.ctx, b.org.ID, sp.ID, vs[0].ID))
	if v.Key != "dir/a.md" || v.Content != "two" || v.MemoryID != a.MemoryID {
		t.Fatalf("version %d = %+v", vs[0].ID, v)
	}
	other := b.space(t, "o/other")
	wantCode(t, func() error { _, err := b.store.MemoryVersionGet(b.ctx, b.org.ID, other.ID, vs[0].ID); return err }(), teammem.ENotFound)
}

// testMemoryCreatedAt checks a memory's creation time: set by its first
// write, kept by edits, carried by a rename, new for a key written again
// after its delete.
func testMemoryCreatedAt(t *testing.T, b *bundle) {
	sp := b.space(t, "o/created")
	sp = b.apply(t, sp, write("a.md", "one"))
	a := must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "a.md"))
	if a.MemoryCreatedAt.IsZero() || !a.MemoryCreatedAt.Equal(a.UpdatedAt) {
		t.Fatalf("first write: created %v, updated %v", a.MemoryCreatedAt, a.UpdatedAt)
	}
	// Times are kept to the microsecond: make the later writes tell apart.
	time.Sleep(2 * time.Millisecond)
	sp = b.apply(t, sp, write("a.md", "two"))
	got := must[teammem.Entry](t)(b.store.MemoryGet(b.ctx, b.org.ID, sp.ID, a.MemoryID))
	if !got.MemoryCreatedAt.Equal(a.MemoryCreatedAt) || !got.UpdatedAt.After(a.UpdatedAt) {
		t.Fatalf("after an edit: created %v (was %v), updated %v", got.MemoryCreatedAt, a.MemoryCreatedAt, got.UpdatedAt)
	}
	sp = b.apply(t, sp, del("a.md"), teammem.EntryChange{Key: "dir/a.md", Op: teammem.OpWrite, Content: "two", MemoryID: a.MemoryID})
	got = must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "dir/a.md"))
	if !got.MemoryCreatedAt.Equal(a.MemoryCreatedAt) {
		t.Fatalf("after a rename: created %v, want %v", got.MemoryCreatedAt, a.MemoryCreatedAt)
	}
	time.Sleep(2 * time.Millisecond)
	sp = b.apply(t, sp, write("a.md", "three"))
	again := must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "a.md"))
	if !again.MemoryCreatedAt.After(a.MemoryCreatedAt) || !again.MemoryCreatedAt.Equal(again.UpdatedAt) {
		t.Fatalf("re-created key: created %v, updated %v (the old memory's %v)", again.MemoryCreatedAt, again.UpdatedAt, a.MemoryCreatedAt)
	}
	list := must[[]teammem.Entry](t)(b.store.MemoriesList(b.ctx, b.org.ID, sp.ID, teammem.MemoryFilter{Prefix: "dir/", Limit: 10}))
	if len(list) != 1 || !list[0].MemoryCreatedAt.Equal(a.MemoryCreatedAt) {
		t.Fatalf("listing: %+v", list)
	}
}

// testMemoryStoreUpdatedAt checks a store's updated_at: moved by its name,
// description, metadata and archiving, never by its memories; a repo
// space's keeps its creation time.
func testMemoryStoreUpdatedAt(t *testing.T, b *bundle) {
	m := must[teammem.MemoryStore](t)(b.store.MemoryStoreCreate(b.ctx, b.org.ID, teammem.MemoryStoreCreateParams{Name: "u"}))
	// Times are kept to the microsecond: make the later writes tell apart.
	time.Sleep(2 * time.Millisecond)
	b.apply(t, m.Space, write("x.md", "x"))
	got := must[teammem.MemoryStore](t)(b.store.MemoryStoreGet(b.ctx, b.org.ID, m.Space.UID))
	if !got.UpdatedAt.Equal(m.UpdatedAt) {
		t.Fatalf("a memory write moved the store's updated_at: %v → %v", m.UpdatedAt, got.UpdatedAt)
	}
	desc := "described"
	got = must[teammem.MemoryStore](t)(b.store.MemoryStoreUpdate(b.ctx, b.org.ID, m.Space.ID, teammem.MemoryStoreUpdateParams{Description: &desc}))
	if !got.UpdatedAt.After(m.UpdatedAt) {
		t.Fatalf("a description change left updated_at at %v", got.UpdatedAt)
	}
	sp := b.space(t, "o/updated")
	repo := must[teammem.MemoryStore](t)(b.store.MemoryStoreGet(b.ctx, b.org.ID, sp.UID))
	time.Sleep(2 * time.Millisecond)
	b.apply(t, sp, write("y.md", "y"))
	again := must[teammem.MemoryStore](t)(b.store.MemoryStoreGet(b.ctx, b.org.ID, sp.UID))
	if !again.UpdatedAt.Equal(repo.UpdatedAt) || !again.UpdatedAt.Equal(again.CreatedAt) {
		t.Fatalf("repo space store: updated_at %v → %v (created %v)", repo.UpdatedAt, again.UpdatedAt, again.CreatedAt)
	}
}

// testMemoryStores checks API stores: hidden from repo listings, visible
// as stores, updated, archived and deleted with their memories.
func testMemoryStores(t *testing.T, b *bundle) {
	m := must[teammem.MemoryStore](t)(b.store.MemoryStoreCreate(b.ctx, b.org.ID, teammem.MemoryStoreCreateParams{
		Name: "notes", Description: "d", Metadata: map[string]string{"k": "v"}}))
	if !m.API || m.Name != "notes" || m.Metadata["k"] != "v" || !m.Repo.Store || m.Space.ID == 0 {
		t.Fatalf("created store = %+v", m)
	}
	repos := must[[]teammem.RepoSummary](t)(b.store.RepoList(b.ctx, b.org.ID))
	for _, r := range repos {
		if r.ID == m.Repo.ID {
			t.Fatalf("the store's hidden repo is listed: %+v", r)
		}
	}
	got := must[teammem.MemoryStore](t)(b.store.MemoryStoreGet(b.ctx, b.org.ID, m.Space.UID))
	if got.Space.ID != m.Space.ID || got.Name != "notes" {
		t.Fatalf("got %+v", got)
	}
	b.space(t, "o/repo")
	list := must[[]teammem.MemoryStore](t)(b.store.MemoryStoreList(b.ctx, b.org.ID, teammem.MemoryStoreFilter{UserID: b.member.ID, Limit: 10}))
	if len(list) != 2 {
		t.Fatalf("listed %d stores, want 2", len(list))
	}
	b.apply(t, m.Space, write("x.md", "x"))
	name, at := "renamed", m.CreatedAt
	up := must[teammem.MemoryStore](t)(b.store.MemoryStoreUpdate(b.ctx, b.org.ID, m.Space.ID, teammem.MemoryStoreUpdateParams{Name: &name, ArchivedAt: &at}))
	if up.Name != "renamed" || !up.Archived() || up.Description != "d" {
		t.Fatalf("updated = %+v", up)
	}
	list = must[[]teammem.MemoryStore](t)(b.store.MemoryStoreList(b.ctx, b.org.ID, teammem.MemoryStoreFilter{UserID: b.member.ID, Limit: 10}))
	if len(list) != 1 {
		t.Fatalf("listed %d stores without archived ones, want 1", len(list))
	}
	// Archived for good: its fields stay, archiving again keeps the date.
	other := "other"
	_, err := b.store.MemoryStoreUpdate(b.ctx, b.org.ID, m.Space.ID, teammem.MemoryStoreUpdateParams{Name: &other})
	wantCode(t, err, teammem.EInvalid)
	later := at.Add(time.Hour)
	again := must[teammem.MemoryStore](t)(b.store.MemoryStoreUpdate(b.ctx, b.org.ID, m.Space.ID, teammem.MemoryStoreUpdateParams{ArchivedAt: &later}))
	if again.Name != "renamed" || !again.ArchivedAt.Equal(*up.ArchivedAt) {
		t.Fatalf("archived again = %+v", again)
	}
	must[struct{}](t)(struct{}{}, b.store.MemoryStoreDelete(b.ctx, b.org.ID, m.Space.ID))
	wantCode(t, func() error { _, err := b.store.MemoryStoreGet(b.ctx, b.org.ID, m.Space.UID); return err }(), teammem.ENotFound)
	repo := b.space(t, "o/keep")
	wantCode(t, b.store.MemoryStoreDelete(b.ctx, b.org.ID, repo.ID), teammem.ENotFound) // only API stores
}

// testArchiveOrdersWrites archives a store between a writer's load of it
// and its write: the write, which still holds the unarchived store, is
// refused under the space's lock and changes nothing, unless its plan only
// deletes: an archived store's memories can still be deleted.
func testArchiveOrdersWrites(t *testing.T, b *bundle) {
	m := must[teammem.MemoryStore](t)(b.store.MemoryStoreCreate(b.ctx, b.org.ID, teammem.MemoryStoreCreateParams{Name: "race"}))
	sp := b.apply(t, m.Space, write("a.md", "before"))
	loaded := must[teammem.MemoryStore](t)(b.store.MemoryStoreGet(b.ctx, b.org.ID, m.Space.UID))
	if loaded.Archived() {
		t.Fatal("a new store is archived")
	}
	at := time.Now()
	must[teammem.MemoryStore](t)(b.store.MemoryStoreUpdate(b.ctx, b.org.ID, m.Space.ID, teammem.MemoryStoreUpdateParams{ArchivedAt: &at}))
	apply := func(changes ...teammem.EntryChange) (teammem.Space, error) {
		return teammem.SpaceApply(b.ctx, b.store, b.org.ID, loaded.Space.ID, teammem.ApplyParams{
			Actor: teammem.Actor{UserID: b.owner.ID, ClientID: "test"},
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return changes, nil
			}})
	}
	for _, changes := range [][]teammem.EntryChange{{write("a.md", "after"), write("b.md", "new")}, {del("a.md"), write("b.md", "new")}} {
		_, err := apply(changes...)
		wantCode(t, err, teammem.EInvalid)
		if teammem.ErrorMessage(err) != teammem.MsgArchived || teammem.ErrorReason(err) != teammem.ReasonArchived {
			t.Fatalf("write to an archived store: %v", err)
		}
	}
	if e := must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "a.md")); e.Content != "before" {
		t.Fatalf("a.md = %q after a refused write", e.Content)
	}
	head := must[teammem.MemoryStore](t)(b.store.MemoryStoreGet(b.ctx, b.org.ID, m.Space.UID))
	if head.Space.Version != sp.Version || head.Space.EntryCount != 1 {
		t.Fatalf("head after a refused write = %+v, want version %d", head.Space, sp.Version)
	}
	// Deletes alone land.
	after := must[teammem.Space](t)(apply(del("a.md")))
	if after.Version != sp.Version+1 || after.EntryCount != 0 {
		t.Fatalf("head after a delete in an archived store = %+v", after)
	}
	// Repo spaces are never archived: their writes go on.
	b.apply(t, b.space(t, "o/unarchived"), write("a.md", "fine"))
}
