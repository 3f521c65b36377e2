package httpapi

import (
	"context"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/events"
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
}

func newCache() *cache {
	return &cache{auth: map[[32]byte]cachedPrincipal{}, heads: map[headKey]cachedHead{}, bodies: map[bodyKey][]byte{}}
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
	if c.bodyBytes+len(b) > maxBodyCacheBytes {
		clear(c.bodies) // crude but bounded; hot bodies come back at once
		c.bodyBytes = 0
	}
	if _, ok := c.bodies[k]; !ok {
		c.bodies[k] = b
		c.bodyBytes += len(b)
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

func (c *cache) putHead(k headKey, repo teammem.Repo, sp teammem.Space, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.heads) > 100_000 {
		clear(c.heads)
	}
	c.heads[k] = cachedHead{repo: repo, space: sp, at: now}
}

// dropHead forgets one space's head.
func (c *cache) dropHead(k headKey) {
	c.mu.Lock()
	delete(c.heads, k)
	c.mu.Unlock()
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
	c.bodyBytes = 0
	c.mu.Unlock()
}

// apply handles one broker event.
func (c *cache) apply(e events.Event) {
	switch e.Kind {
	case events.KindSpace:
		c.dropHead(headKey{org: e.OrgID, repo: e.Repo, scope: teammem.Scope(e.Scope), user: e.UserID})
	case events.KindAuth:
		c.dropOrg(e.OrgID)
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
