package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/teammem"
)

// Authenticated pulls that end in 304 are served from memory: the key's
// principal and the space's head are cached. Entries are dropped at once by
// the replica that changes them and, through the event broker (LISTEN/NOTIFY
// on Postgres), by every other replica; a TTL bounds staleness should a
// notification ever be lost, and a broker reconnect drops everything.
const (
	authTTL = 30 * time.Second
	headTTL = 10 * time.Second
)

type headKey struct {
	org   int64
	repo  string
	scope teammem.Scope
	user  int64
}

type cachedHead struct {
	repo  teammem.Repo
	space teammem.Space
	at    time.Time
}

type cachedPrincipal struct {
	p  teammem.Principal
	at time.Time
}

// bodyKey names an encoded pull body. A space's content at a version never
// changes, so bodies need no invalidation, only eviction.
type bodyKey struct {
	space   int64
	version int64
	hashes  bool
	repo    string // the slug as the client spelled it, echoed in the body
}

// maxBodyCacheBytes bounds the encoded bodies kept per replica.
const maxBodyCacheBytes = 64 << 20

// cache holds principals by key hash, space heads by space and encoded pull
// bodies by space version.
type cache struct {
	mu        sync.RWMutex
	auth      map[[32]byte]cachedPrincipal
	heads     map[headKey]cachedHead
	bodies    map[bodyKey][]byte
	bodyBytes int
	// spaceBodies lists the cached bodies of each space, all of one
	// version: a pull serves only the current version, so bodies of a
	// superseded one are dropped when the next is cached.
	spaceBodies map[int64][]bodyKey
	// stores are memory stores by id, and storeByHead which one a space
	// event names (storecache.go).
	stores      map[storeKey]cachedStore
	storeByHead map[headKey]storeKey
}

func newCache() *cache {
	return &cache{auth: map[[32]byte]cachedPrincipal{}, heads: map[headKey]cachedHead{}, bodies: map[bodyKey][]byte{},
		spaceBodies: map[int64][]bodyKey{}, stores: map[storeKey]cachedStore{}, storeByHead: map[headKey]storeKey{}}
}

func (c *cache) body(k bodyKey) ([]byte, bool) {
	c.mu.RLock()
	b, ok := c.bodies[k]
	c.mu.RUnlock()
	return b, ok
}

func (c *cache) putBody(k bodyKey, b []byte) {
	if len(b) > maxBodyCacheBytes/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if keys := c.spaceBodies[k.space]; len(keys) > 0 && keys[0].version != k.version {
		if keys[0].version > k.version {
			return // a pull of a version already superseded
		}
		for _, old := range keys {
			c.bodyBytes -= len(c.bodies[old])
			delete(c.bodies, old)
		}
		delete(c.spaceBodies, k.space)
	}
	if c.bodyBytes+len(b) > maxBodyCacheBytes {
		clear(c.bodies) // crude but bounded; hot bodies come back at once
		clear(c.spaceBodies)
		c.bodyBytes = 0
	}
	if _, ok := c.bodies[k]; !ok {
		c.bodies[k] = b
		c.bodyBytes += len(b)
		c.spaceBodies[k.space] = append(c.spaceBodies[k.space], k)
	}
}

func (c *cache) principal(hash [32]byte, now time.Time) (teammem.Principal, bool) {
	c.mu.RLock()
	e, ok := c.auth[hash]
	c.mu.RUnlock()
	return e.p, ok && now.Sub(e.at) < authTTL
}

func (c *cache) putPrincipal(hash [32]byte, p teammem.Principal, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.auth) > 100_000 {
		clear(c.auth)
	}
	c.auth[hash] = cachedPrincipal{p: p, at: now}
}

func (c *cache) head(k headKey, now time.Time) (cachedHead, bool) {
	c.mu.RLock()
	e, ok := c.heads[k]
	c.mu.RUnlock()
	return e, ok && now.Sub(e.at) < headTTL
}

// putHead caches a space's head, read from the database or just committed
// by this replica. It never replaces a newer live head of the same space: a
// read that started before a write committed must not undo it.
func (c *cache) putHead(k headKey, repo teammem.Repo, sp teammem.Space, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.heads[k]; ok && e.space.ID == sp.ID && e.space.Version > sp.Version && now.Sub(e.at) < headTTL {
		return
	}
	if len(c.heads) > 100_000 {
		clear(c.heads)
	}
	c.heads[k] = cachedHead{repo: repo, space: sp, at: now}
}

// correctHead caches a head a write read under the space's lock and did
// not move, when the cache holds another one for the space: it changes
// nothing (nor extends the TTL) when the cache already agrees, as it does
// for a refusal planned against the cached head itself.
func (c *cache) correctHead(k headKey, repo teammem.Repo, sp teammem.Space, now time.Time) {
	c.mu.RLock()
	e, ok := c.heads[k]
	c.mu.RUnlock()
	if ok && e.space.ID == sp.ID && e.space.Version == sp.Version && e.space.Checksum == sp.Checksum {
		return
	}
	c.putHead(k, repo, sp, now)
}

// spaceMoved forgets a space's head unless the cache already holds the
// announced version or a later one, as after this replica's own write.
func (c *cache) spaceMoved(k headKey, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.heads[k]; ok && e.space.Version < version {
		delete(c.heads, k)
	}
	c.storeMovedLocked(k, version)
}

// dropOrg forgets every cached principal of an org.
func (c *cache) dropOrg(org int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.auth {
		if e.p.Org.ID == org {
			delete(c.auth, h)
		}
	}
}

// reset forgets everything.
func (c *cache) reset() {
	c.mu.Lock()
	clear(c.auth)
	clear(c.heads)
	clear(c.bodies)
	clear(c.spaceBodies)
	clear(c.stores)
	clear(c.storeByHead)
	c.bodyBytes = 0
	c.mu.Unlock()
}

// apply handles one broker event.
func (c *cache) apply(e events.Event) {
	switch e.Kind {
	case events.KindSpace:
		c.spaceMoved(headKey{org: e.OrgID, repo: e.Repo, scope: teammem.Scope(e.Scope), user: e.UserID}, e.Version)
	case events.KindAuth:
		c.dropOrg(e.OrgID)
	case events.KindStore:
		c.dropOrgStores(e.OrgID)
	default:
		c.reset()
	}
}

// invalidateAuth drops an org's cached principals here and, through the
// broker, on every replica. Call it after changing keys, users or settings.
func (s *Server) invalidateAuth(ctx context.Context, org int64) {
	s.cache.dropOrg(org)
	if err := s.events.Publish(context.WithoutCancel(ctx), events.Event{Kind: events.KindAuth, OrgID: org}); err != nil {
		s.log.WarnContext(ctx, "publishing an auth invalidation failed", "error", err.Error())
	}
}

// watchInvalidations applies broker events to the cache until ctx ends.
func (s *Server) watchInvalidations(ctx context.Context) {
	ch, cancel := s.events.SubscribeAll()
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-ch:
			s.cache.apply(e)
		}
	}
}
