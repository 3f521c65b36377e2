package teammem

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ApplyParams is one SpaceApply: who writes, the plan to run under the
// space's lock, and what commits with the changes.
type ApplyParams struct {
	Actor Actor
	// Plan decides the changes under the lock (see ApplyFunc).
	Plan ApplyFunc
	// Audit, when set, is called once Plan returned changes: its events
	// commit in the write's own transaction, so the log never records a
	// write that rolled back nor misses one that committed.
	Audit func() []AuditEvent
	// Announce, when set and the store CanAnnounce, names the notification
	// of the committed head, sent inside the write's transaction (delivered
	// at commit, and only then).
	Announce Announcer
	// Early lets SpaceApply run Plan once before it takes the lock too,
	// against the entry heads the store cached for the space's last
	// committed head, and compute the new heads and checksum there. When
	// the head at the lock is still that one, the write stores what the
	// early plan decided without planning again: its writer turn is only
	// the SQL and the commit. Otherwise (another write came first, or
	// nothing was cached) Plan runs under the lock as without Early. An
	// early Plan that fails or changes nothing is discarded the same way,
	// so Plan must be safe to call twice, its last call deciding; current
	// fails in the early call (a conflict report is then made under the
	// lock).
	Early bool
	// Timing, when set, is told how long the write waited for the
	// space's lock and held it (the request's Server-Timing).
	Timing *WriteTiming
}

// errEarly is what current returns to an early plan: content for a
// conflict report is read under the lock.
var errEarly = errors.New("content is read under the lock")

// earlyPlan is what an early Plan decided, against head.
type earlyPlan struct {
	head    Space
	changes []EntryChange
	heads   map[string]Entry // after the changes
	at      time.Time
	sum     string
	count   int
	bytes   int64
}

// planEarly runs p.Plan against the cached heads of the space's last
// committed head, or returns nil.
func planEarly(cache *HeadsCache, orgID, spaceID int64, p ApplyParams) *earlyPlan {
	head, heads, ok := cache.Latest(spaceID)
	if !ok || head.OrgID != orgID {
		return nil
	}
	changes, err := p.Plan(head, heads, func(string) (string, error) { return "", errEarly })
	if err != nil || len(changes) == 0 {
		return nil
	}
	e := &earlyPlan{head: head, changes: changes, at: time.Now().UTC().Truncate(time.Microsecond)}
	e.heads = ApplyChanges(heads, changes, head.Version+1, p.Actor, e.at)
	e.sum, e.count, e.bytes = Summarize(e.heads)
	return e
}

// Announcement is a notification a store sends in the same transaction as
// the write it announces, so that other replicas hear of every committed
// write and of nothing that was rolled back.
type Announcement struct {
	Channel string
	Payload string
}

// Announcer returns the announcement of a space's newly committed head, or
// false when there is none to send.
type Announcer func(head Space) (Announcement, bool)

// WriteTx is the SQL of one write transaction, which a driver supplies and
// CommitWrite sequences. Methods return teammem errors (the driver has
// interpreted its own); the Put methods may queue their statement until
// Commit, so an error can surface there instead.
type WriteTx interface {
	// LockSpace takes the space's write lock and returns its head, with
	// Archived read after the lock was granted (ENotFound when the org has
	// no such space). Archiving a store takes the same lock.
	LockSpace(ctx context.Context) (Space, error)
	// EntryHeads returns every entry head of the space, read under the lock.
	EntryHeads(ctx context.Context) (map[string]Entry, error)
	// Content returns a live entry's content, read under the lock.
	Content(ctx context.Context, key string) (string, error)
	// PutEntry stores an entry's new state and its history row.
	PutEntry(ctx context.Context, c EntryChange, h Entry, head Space, actor Actor) error
	// PutHead stores the space's new head.
	PutHead(ctx context.Context, head Space) error
	// PutAudit appends an audit event of the space's org.
	PutAudit(ctx context.Context, e AuditEvent) error
	// Announce sends a notification at commit; only called when the store
	// CanAnnounce.
	Announce(ctx context.Context, a Announcement) error
	// Commit commits the transaction.
	Commit(ctx context.Context) error
	// Rollback ends a transaction that was not committed, and releases
	// what it holds; after Commit it only releases.
	Rollback(ctx context.Context)
}

// SpaceApply runs p.Plan under the space's write lock with its current
// head and every entry head (tombstones included, no content) and commits
// the changes it returns as one new version: entries, tombstones, history
// rows, the head (checksum from Summarize) and p.Audit's events, in one
// transaction of st. No changes → nothing is written and the head is
// returned unchanged. Errors from p.Plan abort the transaction and are
// returned as they are; ENotFound when the org has no such space; EInvalid
// (MsgArchived) when it is an archived memory store and the plan does more
// than delete.
func SpaceApply(ctx context.Context, st Store, orgID, spaceID int64, p ApplyParams) (Space, error) {
	var early *earlyPlan
	if p.Early {
		early = planEarly(st.HeadsCache(), orgID, spaceID, p)
	}
	tx, err := st.SpaceWrite(ctx, orgID, spaceID, p.Timing)
	if err != nil {
		return Space{}, err
	}
	defer tx.Rollback(ctx)
	return commitWrite(ctx, tx, st.HeadsCache(), st.CanAnnounce(), p, early)
}

// deletesOnly reports whether changes delete and nothing else: the one
// kind of write an archived store still takes (the SDKs declare that its
// memories can be deleted, never created or changed).
func deletesOnly(changes []EntryChange) bool {
	for _, c := range changes {
		if c.Op != OpDelete {
			return false
		}
	}
	return len(changes) > 0
}

// CommitWrite is the one commit sequence of every write, on any driver:
// lock the space → read its entry heads (from
// cache when the head is the one they were cached for) → plan → refuse an
// archived store anything but deletes → store each
// change, the new head and the audit events → announce → commit → cache
// the new heads. The driver supplies only the SQL (tx); SpaceApply opens
// and ends it.
func CommitWrite(ctx context.Context, tx WriteTx, cache *HeadsCache, canAnnounce bool, p ApplyParams) (Space, error) {
	return commitWrite(ctx, tx, cache, canAnnounce, p, nil)
}

// commitWrite is CommitWrite, which stores early's decision when the
// locked head is the one it was planned on.
func commitWrite(ctx context.Context, tx WriteTx, cache *HeadsCache, canAnnounce bool, p ApplyParams, early *earlyPlan) (Space, error) {
	space, err := tx.LockSpace(ctx)
	if err != nil {
		return space, err
	}
	next := space
	var changes []EntryChange
	var newHeads map[string]Entry
	if early != nil && SameHead(early.head, space) {
		changes, newHeads = early.changes, early.heads
		next.Version, next.UpdatedAt = space.Version+1, early.at
		next.Checksum, next.EntryCount, next.TotalBytes = early.sum, early.count, early.bytes
		if space.Archived && !deletesOnly(changes) {
			return space, StoreArchived()
		}
	} else {
		heads, cached := cache.Get(space)
		if !cached {
			if heads, err = tx.EntryHeads(ctx); err != nil {
				return space, err
			}
		}
		changes, err = p.Plan(space, heads, func(key string) (string, error) { return tx.Content(ctx, key) })
		if err == nil && space.Archived && !deletesOnly(changes) {
			// Checked under the lock the archive takes too: a write that
			// loaded the store before it was archived cannot land after.
			err = StoreArchived()
		}
		if err != nil || len(changes) == 0 {
			if err == nil && !cached {
				cache.Put(space, heads)
			}
			return space, err
		}
		at := time.Now().UTC().Truncate(time.Microsecond)
		next.Version, next.UpdatedAt = space.Version+1, at
		newHeads = ApplyChanges(heads, changes, next.Version, p.Actor, at)
		next.Checksum, next.EntryCount, next.TotalBytes = Summarize(newHeads)
	}
	at := next.UpdatedAt
	for _, c := range changes {
		if err := tx.PutEntry(ctx, c, newHeads[c.Key], next, p.Actor); err != nil {
			return space, fmt.Errorf("write entry %q: %w", c.Key, err)
		}
	}
	if err := tx.PutHead(ctx, next); err != nil {
		return space, fmt.Errorf("update space head: %w", err)
	}
	if p.Audit != nil {
		for _, e := range p.Audit() {
			if e.CreatedAt.IsZero() {
				e.CreatedAt = at
			}
			if err := tx.PutAudit(ctx, e); err != nil {
				return space, fmt.Errorf("record audit event %s: %w", e.Action, err)
			}
		}
	}
	if canAnnounce && p.Announce != nil {
		if a, ok := p.Announce(next); ok {
			if err := tx.Announce(ctx, a); err != nil {
				return space, fmt.Errorf("announce the write: %w", err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		// The commit may or may not have happened: forget the space.
		cache.Drop(space.ID)
		return space, err
	}
	cache.Put(next, newHeads)
	return next, nil
}
