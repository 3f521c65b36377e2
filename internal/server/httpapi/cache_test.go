package httpapi

import (
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/teammem"
)

func TestHeadCacheKeepsTheNewestHead(t *testing.T) {
	c := newCache(teammem.NewHeadsCache(teammem.DefaultHeadsCacheEntries))
	k := teammem.SpaceKey{Org: 1, Repo: "o/r", Scope: teammem.ScopeTeam}
	now := time.Now()
	at := func(v int64) teammem.Space { return teammem.Space{ID: 7, Version: v} }
	version := func() int64 {
		t.Helper()
		_, h, ok := c.heads.Head(k, now)
		if !ok {
			return -1
		}
		return h.Version
	}
	c.heads.PutHead(k, teammem.Repo{}, at(5), now) // this replica's write
	c.heads.PutHead(k, teammem.Repo{}, at(4), now) // a read that began before it
	if v := version(); v != 5 {
		t.Fatalf("after a stale read the cache holds version %d, want 5", v)
	}
	c.apply(events.Event{Kind: events.KindSpace, OrgID: 1, Repo: "o/r", Scope: "team", Version: 5}) // its own echo
	if v := version(); v != 5 {
		t.Fatalf("the replica's own announcement dropped its head: %d", v)
	}
	c.apply(events.Event{Kind: events.KindSpace, OrgID: 1, Repo: "o/r", Scope: "team", Version: 6}) // another replica
	if v := version(); v != -1 {
		t.Fatalf("a newer version elsewhere left version %d cached", v)
	}
	// An expired head gives way even to an older one: the database is the truth.
	c.heads.PutHead(k, teammem.Repo{}, at(9), now.Add(-2*headTTL))
	c.heads.PutHead(k, teammem.Repo{}, at(8), now)
	if v := version(); v != 8 {
		t.Fatalf("an expired head was kept over a fresh read: %d", v)
	}
}

func TestBodyCacheDropsSupersededVersions(t *testing.T) {
	c := newCache(teammem.NewHeadsCache(teammem.DefaultHeadsCacheEntries))
	body := func(v int64, hashes bool) bodyKey { return bodyKey{space: 7, version: v, hashes: hashes, repo: "o/r"} }
	c.putBody(body(1, false), make([]byte, 100))
	c.putBody(body(1, true), make([]byte, 10))
	c.putBody(bodyKey{space: 8, version: 1}, make([]byte, 5))
	c.putBody(body(2, false), make([]byte, 200))
	for _, k := range []bodyKey{body(1, false), body(1, true)} {
		if _, ok := c.body(k); ok {
			t.Errorf("body %+v of a superseded version is still cached", k)
		}
	}
	c.putBody(body(1, true), make([]byte, 10)) // a late pull of version 1
	if _, ok := c.body(body(1, true)); ok {
		t.Error("a body older than the cached version was cached")
	}
	if _, ok := c.body(body(2, false)); !ok {
		t.Error("the current body is missing")
	}
	if _, ok := c.body(bodyKey{space: 8, version: 1}); !ok {
		t.Error("another space's body was dropped")
	}
	if c.bodyBytes != 205 {
		t.Errorf("bodyBytes = %d, want 205", c.bodyBytes)
	}
}

// TestStoreCacheFollowsEvents checks the memory store cache: a space event
// of a newer version drops the store (its own echo does not), a store event
// drops the org's stores and no other org's, and entries expire.
func TestStoreCacheFollowsEvents(t *testing.T) {
	c := newCache(teammem.NewHeadsCache(teammem.DefaultHeadsCacheEntries))
	now := time.Now()
	store := func(org int64, uid string, v int64) teammem.MemoryStore {
		return teammem.MemoryStore{Space: teammem.Space{ID: org*10 + v, OrgID: org, UID: uid, Scope: teammem.ScopeTeam, Version: v},
			Repo: teammem.Repo{Slug: "@memstore/" + uid}}
	}
	cached := func(org int64, uid string) bool {
		_, ok := c.store(storeKey{org: org, uid: uid}, now)
		return ok
	}
	put := func(m teammem.MemoryStore) { c.putStore(storeKey{org: m.Space.OrgID, uid: m.Space.UID}, m, now) }
	put(store(1, "a", 5))
	put(store(2, "b", 5))
	c.apply(events.Event{Kind: events.KindSpace, OrgID: 1, Repo: "@memstore/a", Scope: "team", Version: 5})
	if !cached(1, "a") {
		t.Fatal("the store's own version dropped it")
	}
	c.apply(events.Event{Kind: events.KindSpace, OrgID: 1, Repo: "@memstore/a", Scope: "team", Version: 6})
	if cached(1, "a") || !cached(2, "b") {
		t.Fatalf("after a newer version of a: a cached %v, b cached %v", cached(1, "a"), cached(2, "b"))
	}
	put(store(1, "a", 6))
	c.apply(events.Event{Kind: events.KindStore, OrgID: 1})
	if cached(1, "a") || !cached(2, "b") {
		t.Fatal("a store event of org 1 kept its store or dropped org 2's")
	}
	c.putStore(storeKey{org: 1, uid: "a"}, store(1, "a", 7), now.Add(-2*headTTL))
	if cached(1, "a") {
		t.Fatal("an expired store was served")
	}
	c.apply(events.Event{Kind: events.KindReset})
	if cached(2, "b") {
		t.Fatal("a reset kept a store")
	}
}

// TestHeadCacheCorrectedByARefusedWrite: a write refused for its base read
// the true head under the lock; CorrectHead puts it over a wrong cached head
// of the same or an older version, never over a newer one, and leaves an
// agreeing entry (and its age) alone.
func TestHeadCacheCorrectedByARefusedWrite(t *testing.T) {
	c := newCache(teammem.NewHeadsCache(teammem.DefaultHeadsCacheEntries))
	k := teammem.SpaceKey{Org: 1, Repo: "o/r", Scope: teammem.ScopeTeam}
	t0 := time.Now()
	sp := func(v int64, sum string) teammem.Space { return teammem.Space{ID: 7, Version: v, Checksum: sum} }
	head := func(now time.Time) (teammem.Space, bool) {
		_, h, ok := c.heads.Head(k, now)
		return h, ok
	}
	c.heads.PutHead(k, teammem.Repo{}, sp(28, "sha256:wrong"), t0)
	c.heads.CorrectHead(k, teammem.Repo{}, sp(28, "sha256:right"), t0)
	if h, _ := head(t0); h.Checksum != "sha256:right" {
		t.Fatalf("same version, other checksum: cache holds %s", h.Checksum)
	}
	c.heads.CorrectHead(k, teammem.Repo{}, sp(29, "sha256:new"), t0)
	if h, _ := head(t0); h.Version != 29 {
		t.Fatalf("older cached head not corrected: version %d", h.Version)
	}
	c.heads.CorrectHead(k, teammem.Repo{}, sp(28, "sha256:right"), t0)
	if h, _ := head(t0); h.Version != 29 {
		t.Fatalf("an older head replaced a newer one: version %d", h.Version)
	}
	c.heads.CorrectHead(k, teammem.Repo{}, sp(29, "sha256:new"), t0.Add(headTTL-time.Millisecond))
	if _, ok := head(t0.Add(headTTL + time.Millisecond)); ok {
		t.Fatal("an agreeing correction extended the entry's age")
	}
}
