package httpapi

import (
	"context"
	"time"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/teammem"
)

// Memory stores by id, cached as space heads are (cache.go): every store
// request names its store, and the listing and export bodies of an
// unchanged store are cached already, so the store row is what each one
// would read. An entry is dropped when its space moves (this replica's
// writes, and every replica's through the broker's space events), when a
// store's own fields change (everywhere, through a store event),
// and after headTTL whatever happens.

// storeKey names a cached store.
type storeKey struct {
	org int64
	uid string
}

type cachedStore struct {
	m  teammem.MemoryStore
	at time.Time
}

// storeHeadKey is the head cache's key of a store's space, by which space
// events name it.
func storeHeadKey(m teammem.MemoryStore) teammem.SpaceKey {
	return teammem.SpaceKey{Org: m.Space.OrgID, Repo: m.Repo.Slug, Scope: m.Space.Scope, User: m.Space.UserID}
}

func (c *cache) store(k storeKey, now time.Time) (teammem.MemoryStore, bool) {
	c.mu.RLock()
	e, ok := c.stores[k]
	c.mu.RUnlock()
	return e.m, ok && now.Sub(e.at) < headTTL
}

// putStore caches a store as read from the database at now.
func (c *cache) putStore(k storeKey, m teammem.MemoryStore, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.stores) > 100_000 {
		clear(c.stores)
		clear(c.storeByHead)
	}
	c.stores[k] = cachedStore{m: m, at: now}
	c.storeByHead[storeHeadKey(m)] = k
}

// storeMoved forgets the store of a space that reached version, unless the
// cached one is already there.
func (c *cache) storeMoved(hk teammem.SpaceKey, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.storeByHead[hk]
	if !ok {
		return
	}
	if e, ok := c.stores[k]; !ok || e.m.Space.Version < version {
		delete(c.stores, k)
		delete(c.storeByHead, hk)
	}
}

// dropStore forgets one store.
func (c *cache) dropStore(m teammem.MemoryStore) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.stores, storeKey{org: m.Space.OrgID, uid: m.Space.UID})
	delete(c.storeByHead, storeHeadKey(m))
}

// dropOrgStores forgets every cached store of an org.
func (c *cache) dropOrgStores(org int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.stores {
		if k.org == org {
			delete(c.stores, k)
			delete(c.storeByHead, storeHeadKey(e.m))
		}
	}
}

// memoryStore returns the store with uid in org, from the cache when fresh.
func (s *Server) memoryStore(ctx context.Context, org int64, uid string) (teammem.MemoryStore, error) {
	k, now := storeKey{org: org, uid: uid}, time.Now()
	if m, ok := s.cache.store(k, now); ok {
		return m, nil
	}
	m, err := s.store.MemoryStoreGet(ctx, org, uid)
	if err == nil {
		s.cache.putStore(k, m, now)
	}
	return m, err
}

// storeChanged forgets a store whose own fields changed (archived,
// renamed, deleted) here and, through the broker, on every replica.
func (s *Server) storeChanged(ctx context.Context, m teammem.MemoryStore) {
	s.cache.dropStore(m)
	if err := s.events.Publish(context.WithoutCancel(ctx), events.Event{Kind: events.KindStore, OrgID: m.Space.OrgID}); err != nil {
		s.log.WarnContext(ctx, "publishing a store invalidation failed", "error", err.Error())
	}
}
