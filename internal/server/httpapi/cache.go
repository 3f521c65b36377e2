package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/teammem"
)

// Authenticated pulls that end in 304 are served from memory: the key's
// principal is cached here, the space's head in the store's head cache
// (teammem.HeadsCache, which the Writer keeps). Entries are dropped at once
// by the replica that changes them and, through the event broker
// (LISTEN/NOTIFY on Postgres), by every other replica; a TTL bounds
// staleness should a notification ever be lost, and a broker reconnect
// drops everything.
const (
	authTTL = 30 * time.Second
	headTTL = teammem.HeadTTL
)

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

// cache holds principals by key hash and encoded pull bodies by space
// version, and applies the broker's events to the store's head cache.
type cache struct {
	mu        sync.RWMutex
	auth      map[[32]byte]cachedPrincipal
	heads     *teammem.HeadsCache // the store's
	bodies    map[bodyKey][]byte
	bodyBytes int
	// spaceBodies lists the cached bodies of each space, all of one
	// version: a pull serves only the current version, so bodies of a
	// superseded one are dropped when the next is cached.
	spaceBodies map[int64][]bodyKey
	// stores are memory stores by id, and storeByHead which one a space
	// event names (storecache.go).
	stores      map[storeKey]cachedStore
	storeByHead map[teammem.SpaceKey]storeKey
}

func newCache(heads *teammem.HeadsCache) *cache {
	return &cache{auth: map[[32]byte]cachedPrincipal{}, heads: heads, bodies: map[bodyKey][]byte{},
		spaceBodies: map[int64][]bodyKey{}, stores: map[storeKey]cachedStore{}, storeByHead: map[teammem.SpaceKey]storeKey{}}
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

// spaceMoved forgets a space's head, and its store, unless the cache
// already holds the announced version or a later one, as after this
// replica's own write.
func (c *cache) spaceMoved(k teammem.SpaceKey, version int64) {
	c.heads.SpaceMoved(k, version)
	c.storeMoved(k, version)
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
	clear(c.bodies)
	clear(c.spaceBodies)
	clear(c.stores)
	clear(c.storeByHead)
	c.bodyBytes = 0
	c.mu.Unlock()
	c.heads.Reset()
}

// apply handles one broker event.
func (c *cache) apply(e events.Event) {
	switch e.Kind {
	case events.KindSpace:
		c.spaceMoved(teammem.SpaceKey{Org: e.OrgID, Repo: e.Repo, Scope: teammem.Scope(e.Scope), User: e.UserID}, e.Version)
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
