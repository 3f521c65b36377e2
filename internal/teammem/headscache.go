package teammem

import (
	"sync"
	"time"
)

// HeadsCache is a store's one cache of heads: the space heads of repos'
// spaces as requests name them (by org, repo slug, scope and user), which
// Targets finds a request's space with, and the entry heads of recently
// written spaces, so a write need not read every head of its space again
// under the space lock.
//
// A space head is served for HeadTTL at most. The process that writes a
// space caches the head it committed (or, for a write that changed nothing
// or was refused for its base, the head it read under the lock); every
// other change reaches it as SpaceMoved, from the server's event broker.
//
// Entry heads are kept with the space head they belong to — version, checksum,
// purge mark and update time — and returned only for exactly that head. Every
// change to a space's entries moves its head, whichever process or replica
// made it, so a stale copy is never used: it misses and the caller reads the
// database. A nil *HeadsCache keeps nothing.
type HeadsCache struct {
	mu     sync.RWMutex
	max    int // entries kept across all spaces
	n      int
	spaces map[int64]cachedHeads
	// byKey holds space heads by the name a request gives them.
	byKey map[SpaceKey]cachedSpace
}

// SpaceKey names a space as a request does: its org, its repo's slug (a
// memory store's hidden one for an API store), its scope and, for a
// personal space, its user.
type SpaceKey struct {
	Org   int64
	Repo  string
	Scope Scope
	User  int64
}

// SpaceKeyOf names p's space of repo slug in scope (personal: p's own).
func SpaceKeyOf(p Principal, slug string, scope Scope) SpaceKey {
	k := SpaceKey{Org: p.Org.ID, Repo: slug, Scope: scope}
	if scope == ScopePersonal {
		k.User = p.User.ID
	}
	return k
}

// HeadTTL bounds how long a cached space head is served: the staleness a
// lost notification of another replica's write could cause.
const HeadTTL = 10 * time.Second

// maxCachedSpaces bounds the space heads kept.
const maxCachedSpaces = 100_000

type cachedSpace struct {
	repo  Repo
	space Space
	at    time.Time
}

type cachedHeads struct {
	stamp headStamp
	space Space // the head the heads belong to
	heads map[string]Entry
}

// headStamp identifies one state of a space.
type headStamp struct {
	version, purgedThrough, updatedMicros int64
	checksum                              string
}

func stampOf(s Space) headStamp {
	return headStamp{version: s.Version, purgedThrough: s.PurgedThrough, updatedMicros: s.UpdatedAt.UnixMicro(), checksum: s.Checksum}
}

// DefaultHeadsCacheEntries bounds a store's cache: about 5 MB of heads.
const DefaultHeadsCacheEntries = 20000

// NewHeadsCache returns a cache holding at most maxEntries heads.
func NewHeadsCache(maxEntries int) *HeadsCache {
	return &HeadsCache{max: maxEntries, spaces: map[int64]cachedHeads{}, byKey: map[SpaceKey]cachedSpace{}}
}

// Head returns the space head cached under k and its repo, if one is
// fresh at now.
func (c *HeadsCache) Head(k SpaceKey, now time.Time) (Repo, Space, bool) {
	if c == nil {
		return Repo{}, Space{}, false
	}
	c.mu.RLock()
	e, ok := c.byKey[k]
	c.mu.RUnlock()
	return e.repo, e.space, ok && now.Sub(e.at) < HeadTTL
}

// PutHead caches a space's head, read from the database or just committed
// by this process. It never replaces a newer live head of the same space: a
// read that started before a write committed must not undo it.
func (c *HeadsCache) PutHead(k SpaceKey, repo Repo, sp Space, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putHeadLocked(k, repo, sp, now)
}

func (c *HeadsCache) putHeadLocked(k SpaceKey, repo Repo, sp Space, now time.Time) {
	if e, ok := c.byKey[k]; ok && e.space.ID == sp.ID && e.space.Version > sp.Version && now.Sub(e.at) < HeadTTL {
		return
	}
	if len(c.byKey) > maxCachedSpaces {
		clear(c.byKey)
	}
	c.byKey[k] = cachedSpace{repo: repo, space: sp, at: now}
}

// CorrectHead caches a head a write read under the space's lock and did
// not move, when the cache holds another one for the space: it changes
// nothing (nor extends the TTL) when the cache already agrees, as it does
// for a refusal planned against the cached head itself.
func (c *HeadsCache) CorrectHead(k SpaceKey, repo Repo, sp Space, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok && e.space.ID == sp.ID && e.space.Version == sp.Version && e.space.Checksum == sp.Checksum {
		return
	}
	c.putHeadLocked(k, repo, sp, now)
}

// SpaceMoved forgets the space head cached under k unless it is already at
// version or later, as after this process's own write.
func (c *HeadsCache) SpaceMoved(k SpaceKey, version int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok && e.space.Version < version {
		delete(c.byKey, k)
	}
}

// Get returns the heads stored for space s at exactly its current head.
// The map is shared: callers must not modify it.
func (c *HeadsCache) Get(s Space) (map[string]Entry, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.spaces[s.ID]
	if !ok || e.stamp != stampOf(s) {
		return nil, false
	}
	return e.heads, true
}

// Latest returns the space head last stored for space id and its heads,
// whether or not that head is still current: a caller may plan on them
// ahead of the lock, and must check at the lock that the head is the same
// (SameHead) before using what it planned. The map is shared: callers must
// not modify it.
func (c *HeadsCache) Latest(id int64) (Space, map[string]Entry, bool) {
	if c == nil {
		return Space{}, nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.spaces[id]
	return e.space, e.heads, ok
}

// SameHead reports whether a and b are one state of a space: what the
// cache keys its heads by.
func SameHead(a, b Space) bool { return a.ID == b.ID && stampOf(a) == stampOf(b) }

// Put stores heads as those of space s at its current head; the cache
// takes ownership of the map, which nobody may modify afterwards.
func (c *HeadsCache) Put(s Space, heads map[string]Entry) {
	if c == nil || len(heads) > c.max {
		c.Drop(s.ID)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n -= len(c.spaces[s.ID].heads)
	c.spaces[s.ID] = cachedHeads{stamp: stampOf(s), space: s, heads: heads}
	c.n += len(heads)
	// Over the bound, evict arbitrary other spaces: map order is random.
	for id, e := range c.spaces {
		if c.n <= c.max {
			break
		}
		if id != s.ID {
			c.n -= len(e.heads)
			delete(c.spaces, id)
		}
	}
}

// Drop forgets space id.
func (c *HeadsCache) Drop(id int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n -= len(c.spaces[id].heads)
	delete(c.spaces, id)
}

// Reset forgets every space and every space head.
func (c *HeadsCache) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spaces, c.n = map[int64]cachedHeads{}, 0
	clear(c.byKey)
}
