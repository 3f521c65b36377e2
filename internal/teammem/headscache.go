package teammem

import "sync"

// HeadsCache keeps the entry heads of recently written spaces, so a write
// need not read every head of its space again under the space lock.
//
// Heads are kept with the space head they belong to — version, checksum,
// purge mark and update time — and returned only for exactly that head. Every
// change to a space's entries moves its head, whichever process or replica
// made it, so a stale copy is never used: it misses and the caller reads the
// database. A nil *HeadsCache keeps nothing.
type HeadsCache struct {
	mu     sync.Mutex
	max    int // entries kept across all spaces
	n      int
	spaces map[int64]cachedHeads
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
	return &HeadsCache{max: maxEntries, spaces: map[int64]cachedHeads{}}
}

// Get returns the heads stored for space s at exactly its current head.
// The map is shared: callers must not modify it.
func (c *HeadsCache) Get(s Space) (map[string]Entry, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
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
	c.mu.Lock()
	defer c.mu.Unlock()
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

// Reset forgets every space.
func (c *HeadsCache) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spaces, c.n = map[int64]cachedHeads{}, 0
}
