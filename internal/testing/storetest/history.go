package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// historyOps returns an entry's history as "version:op" words, newest first.
func (b *bundle) historyOps(t *testing.T, orgID int64, sp teammem.Space, key string) string {
	t.Helper()
	var words []string
	for _, v := range must[[]teammem.EntryVersion](t)(b.store.EntryHistory(b.ctx, orgID, sp.ID, key)) {
		words = append(words, fmt.Sprintf("%d:%s", v.Version, v.Op))
	}
	return strings.Join(words, " ")
}

// wantHistory fails unless each key's history reads as given.
func (b *bundle) wantHistory(t *testing.T, orgID int64, sp teammem.Space, want map[string]string) {
	t.Helper()
	for key, ops := range want {
		if got := b.historyOps(t, orgID, sp, key); got != ops {
			t.Errorf("history of %s = %q, want %q", key, got, ops)
		}
	}
}

// testVersionsPurgeByAge purges versions older than a cutoff, in batches
// smaller than the work, across many versions sharing one timestamp (one
// commit): every old version goes but each entry's newest, live or a
// delete marker, and another org's history stays.
func testVersionsPurgeByAge(t *testing.T, b *bundle) {
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	otherRepo := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, other.ID, "o/r"))
	otherSpace := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, other.ID, teammem.SpaceRef{RepoID: otherRepo.ID, Scope: teammem.ScopeTeam}))
	must[teammem.Space](t)(teammem.SpaceApply(b.ctx, b.store, other.ID, otherSpace.ID, teammem.ApplyParams{Actor: teammem.Actor{}, Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return []teammem.EntryChange{write("a.md", "theirs 1")}, nil
	}}))

	sp := b.space(t, "o/r")
	keys := []string{"a.md", "b.md", "c.md", "d.md", "e.md"}
	var first, second []teammem.EntryChange
	for _, k := range keys {
		first = append(first, write(k, k+" 1"))
		second = append(second, write(k, k+" 2"))
	}
	first = append(first, write("old.md", "never changed"), write("gone.md", "deleted later"))
	sp = b.apply(t, sp, first...)
	sp = b.apply(t, sp, append(second, del("gone.md"))...)
	cutoff := must[[]teammem.EntryVersion](t)(b.store.EntryHistory(b.ctx, b.org.ID, sp.ID, "a.md"))[0].CreatedAt

	got := must[teammem.VersionsPurged](t)(b.store.VersionsPurge(b.ctx, b.org.ID, teammem.VersionsPurgeParams{Before: cutoff, Batch: 2}))
	// a..e and gone.md lose version 1; old.md keeps its only version.
	if got.Versions != 6 || got.Batches != 3 {
		t.Fatalf("purge before the second commit = %+v, want 6 versions in 3 batches of at most 2", got)
	}
	b.wantHistory(t, b.org.ID, sp, map[string]string{"a.md": "2:write", "e.md": "2:write", "old.md": "1:write", "gone.md": "2:delete"})
	if got := must[teammem.VersionsPurged](t)(b.store.VersionsPurge(b.ctx, b.org.ID, teammem.VersionsPurgeParams{Before: cutoff, Batch: 2})); got.Versions != 0 {
		t.Fatalf("a second purge deleted %+v", got)
	}
	// Everything is old now: still every entry keeps its newest version.
	sp = b.apply(t, sp, write("a.md", "a 3"))
	got = must[teammem.VersionsPurged](t)(b.store.VersionsPurge(b.ctx, b.org.ID, teammem.VersionsPurgeParams{Before: time.Now().Add(time.Hour)}))
	if got.Versions != 1 {
		t.Fatalf("purge of everything = %+v, want the one version a.md has besides its newest", got)
	}
	b.wantHistory(t, b.org.ID, sp, map[string]string{"a.md": "3:write", "b.md": "2:write", "old.md": "1:write", "gone.md": "2:delete"})
	b.checkHead(t, sp)
	if h := b.historyOps(t, other.ID, otherSpace, "a.md"); h != "1:write" {
		t.Fatalf("another org's history after the purge = %q", h)
	}
}

// testVersionsPurgeByCount keeps the newest versions of each entry.
func testVersionsPurgeByCount(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	for i := 1; i <= 5; i++ {
		sp = b.apply(t, sp, write("a.md", fmt.Sprint("a ", i)))
	}
	sp = b.apply(t, sp, write("b.md", "b"), write("c.md", "c 1"))
	sp = b.apply(t, sp, write("c.md", "c 2"))
	sp = b.apply(t, sp, del("c.md"))
	got := must[teammem.VersionsPurged](t)(b.store.VersionsPurge(b.ctx, b.org.ID, teammem.VersionsPurgeParams{MaxPerKey: 2, Batch: 2}))
	if got.Versions != 4 || got.Batches != 2 {
		t.Fatalf("purge to 2 versions = %+v, want 4 versions (3 of a.md, 1 of c.md) in 2 batches", got)
	}
	b.wantHistory(t, b.org.ID, sp, map[string]string{"a.md": "5:write 4:write", "b.md": "6:write", "c.md": "8:delete 7:write"})
	got = must[teammem.VersionsPurged](t)(b.store.VersionsPurge(b.ctx, b.org.ID, teammem.VersionsPurgeParams{MaxPerKey: 1}))
	if got.Versions != 2 || got.Batches != 1 {
		t.Fatalf("purge to 1 version = %+v", got)
	}
	b.wantHistory(t, b.org.ID, sp, map[string]string{"a.md": "5:write", "b.md": "6:write", "c.md": "8:delete"})
	b.checkHead(t, sp)
}

// testVersionRedact erases versions: never the live content, never a
// deletion, once only; the row stays, says who and when, and cannot be
// restored.
func testVersionRedact(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "leaked secret"))
	sp = b.apply(t, sp, write("a.md", "clean"))
	at := time.Now().UTC().Truncate(time.Microsecond)
	redact := func(key string, version int64) (teammem.EntryVersion, bool, error) {
		return b.store.VersionRedact(b.ctx, b.org.ID, sp.ID, teammem.VersionRedactParams{Key: key, Version: version, By: b.member.ID, At: at})
	}
	_, _, err := redact("a.md", 2)
	wantCode(t, err, teammem.EConflict) // the live content
	_, _, err = redact("a.md", 99)
	wantCode(t, err, teammem.ENotFound)
	_, _, err = b.store.VersionRedact(b.ctx, 999999, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: b.member.ID, At: at})
	wantCode(t, err, teammem.ENotFound) // another org

	v, changed, err := redact("a.md", 1)
	if err != nil || !changed {
		t.Fatalf("redact version 1 = %v, %v", changed, err)
	}
	if !v.Redacted() || !v.RedactedAt.Equal(at) || v.RedactedBy != "bob" || v.Checksum != "" || v.Size != 0 || v.Content != "" ||
		v.Op != teammem.OpWrite || v.Author != "alice" {
		t.Fatalf("redacted version = %+v", v)
	}
	got := must[teammem.EntryVersion](t)(b.store.EntryVersionGet(b.ctx, b.org.ID, sp.ID, "a.md", 1))
	if got.Content != "" || !got.Redacted() || got.RedactedBy != "bob" {
		t.Fatalf("EntryVersionGet of a redacted version = %+v", got)
	}
	if _, err := teammem.RestoreUpsert(got); teammem.ErrorCode(err) != teammem.EGone {
		t.Fatalf("restore of a redacted version: %v, want %s", err, teammem.EGone)
	}
	hist := must[[]teammem.EntryVersion](t)(b.store.EntryHistory(b.ctx, b.org.ID, sp.ID, "a.md"))
	if len(hist) != 2 || hist[0].Redacted() || hist[0].Checksum != teammem.EntryChecksum("clean") || !hist[1].Redacted() || hist[1].Checksum != "" {
		t.Fatalf("history after redaction = %+v", hist)
	}
	later := at.Add(time.Minute)
	again, changed, err := b.store.VersionRedact(b.ctx, b.org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: b.owner.ID, At: later})
	if err != nil || changed || !again.RedactedAt.Equal(at) || again.RedactedBy != "bob" {
		t.Fatalf("second redaction = %+v, %v, %v; want the first one kept", again, changed, err)
	}
	if e := must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "a.md")); e.Content != "clean" {
		t.Fatalf("the live entry after redaction = %+v", e)
	}
	b.checkHead(t, sp)

	// Once the entry is deleted, its last content may go; the deletion has none.
	sp = b.apply(t, sp, del("a.md"))
	if _, changed, err := redact("a.md", 2); err != nil || !changed {
		t.Fatalf("redact the content of a deleted entry: %v, %v", changed, err)
	}
	_, _, err = redact("a.md", 3)
	wantCode(t, err, teammem.EInvalid)

	// Content brought back by a restore is live, whatever the version.
	sp = b.apply(t, sp, write("b.md", "first"))
	sp = b.apply(t, sp, write("b.md", "second"))
	sp = b.apply(t, sp, teammem.EntryChange{Key: "b.md", Op: teammem.OpRestore, Content: "first"})
	_, _, err = redact("b.md", sp.Version-2)
	wantCode(t, err, teammem.EConflict)
}

// testSpaceVersionsPurge deletes one space's whole history and nothing else.
func testSpaceVersionsPurge(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	keep := b.space(t, "o/kept")
	for i := range 3 {
		sp = b.apply(t, sp, write("a.md", fmt.Sprint(i)), write("b.md", fmt.Sprint(i)))
		keep = b.apply(t, keep, write("a.md", fmt.Sprint(i)))
	}
	sp = b.apply(t, sp, del("b.md"))
	if n := must[int](t)(b.store.SpaceVersionsPurge(b.ctx, 999999, sp.ID)); n != 0 {
		t.Fatalf("a purge naming another org deleted %d versions", n)
	}
	if n := must[int](t)(b.store.SpaceVersionsPurge(b.ctx, b.org.ID, sp.ID)); n != 7 {
		t.Fatalf("space purge deleted %d versions, want 7", n)
	}
	b.wantHistory(t, b.org.ID, sp, map[string]string{"a.md": "", "b.md": ""})
	b.wantHistory(t, b.org.ID, keep, map[string]string{"a.md": "3:write 2:write 1:write"})
	// The entries and the tombstone stay: clients still see the deletion.
	heads := must[map[string]teammem.Entry](t)(b.store.EntryHeads(b.ctx, b.org.ID, sp.ID))
	if len(heads) != 2 || !heads["b.md"].Deleted || heads["a.md"].Deleted {
		t.Fatalf("heads after the history purge = %+v", heads)
	}
	b.checkHead(t, sp)
}
