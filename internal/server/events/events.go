// Package events carries "a space changed" notifications from the replica
// that committed a write to every replica with a subscriber, so clients
// learn of changes within a second instead of polling. Local fans out in
// process (SQLite, one server). A store that can carry events between the
// replicas sharing it declares so as a Carrier (the Postgres driver, over
// LISTEN/NOTIFY); this package never knows which driver that is.
package events

import (
	"context"
	"log/slog"
	"sync"
)

// Event kinds. A space event says a space reached a new head; an auth event
// says an org's keys, users or settings changed, so cached credentials and
// org settings of that org must be dropped; a store event says a memory
// store's own fields changed (archived, renamed, deleted), so cached stores
// of that org must be dropped; a reset event (local only) says
// notifications may have been missed, so every cache must be dropped.
const (
	KindSpace = ""
	KindAuth  = "auth"
	KindStore = "store"
	KindReset = "reset"
)

// Event says that one space reached a new head, or (Kind) that cached state
// of an org went stale. It carries no content.
type Event struct {
	Kind     string `json:"k,omitempty"`
	OrgID    int64  `json:"o"`
	Repo     string `json:"r"` // the repo slug, so a stream may wait for a repo that does not exist yet
	Scope    string `json:"s"`
	UserID   int64  `json:"u,omitempty"` // owner of a personal space
	Version  int64  `json:"v"`
	Checksum string `json:"c"`
}

// Broker publishes events and hands them to subscribers of a repo.
type Broker interface {
	// Publish announces a committed change. It never blocks on subscribers.
	Publish(ctx context.Context, e Event) error
	// SubscribeAll returns every event of every org, for the server's own
	// cache invalidation, until cancel is called.
	SubscribeAll() (events <-chan Event, cancel func())
	// Subscribe returns the events of one repo until cancel is called. A
	// subscriber that falls behind loses events (it resynchronises by
	// comparing heads), never blocks the publisher.
	Subscribe(orgID int64, repo string) (events <-chan Event, cancel func())
	// Close stops background work.
	Close() error
}

// Carrier is the capability of a store whose replicas share it and can
// announce each other's writes through it. A store without it serves one
// replica, which a Local serves as well.
type Carrier interface {
	// Broker starts a broker on the store's own connections; its Close
	// stops it, before the store closes.
	Broker(log *slog.Logger) Broker
}

// For returns the broker the store offers as a Carrier, else a Local.
func For(store any, log *slog.Logger) Broker {
	if c, ok := store.(Carrier); ok {
		return c.Broker(log)
	}
	return NewLocal()
}

// Notifier is a broker a store can notify through inside a write's own
// transaction, so that a head is announced exactly when it commits.
type Notifier interface {
	// Notification returns the channel and payload Publish would send for e.
	Notification(e Event) (channel, payload string, err error)
}

type repoKey struct {
	org  int64
	repo string
}

// allKey is the subscription key of SubscribeAll.
var allKey = repoKey{org: -1}

// Local is an in-process broker.
type Local struct {
	mu   sync.Mutex
	subs map[repoKey]map[chan Event]struct{}
}

// NewLocal returns an in-process broker.
func NewLocal() *Local { return &Local{subs: map[repoKey]map[chan Event]struct{}{}} }

// Publish delivers e to the repo's subscribers, dropping it for any whose
// buffer is full.
func (l *Local) Publish(_ context.Context, e Event) error {
	l.deliver(e)
	return nil
}

func (l *Local) deliver(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.subs[allKey] {
		select {
		case ch <- e:
		default:
			// A cache subscriber that falls behind must not keep stale
			// entries: tell it to drop everything instead.
			select {
			case <-ch:
			default:
			}
			select {
			case ch <- Event{Kind: KindReset}:
			default:
			}
		}
	}
	if e.Kind == KindReset { // every stream must re-check its heads
		for k, subs := range l.subs {
			if k == allKey {
				continue
			}
			for ch := range subs {
				select {
				case ch <- e:
				default:
				}
			}
		}
		return
	}
	if e.Kind != KindSpace {
		return
	}
	for ch := range l.subs[repoKey{e.OrgID, e.Repo}] {
		select {
		case ch <- e:
		default:
		}
	}
}

// SubscribeAll registers a subscriber of every event.
func (l *Local) SubscribeAll() (<-chan Event, func()) {
	return l.subscribe(allKey, 1024)
}

// Subscribe registers a subscriber of one repo.
func (l *Local) Subscribe(orgID int64, repo string) (<-chan Event, func()) {
	return l.subscribe(repoKey{orgID, repo}, 64)
}

func (l *Local) subscribe(k repoKey, buffer int) (<-chan Event, func()) {
	ch := make(chan Event, buffer)
	l.mu.Lock()
	if l.subs[k] == nil {
		l.subs[k] = map[chan Event]struct{}{}
	}
	l.subs[k][ch] = struct{}{}
	l.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.subs[k], ch)
			if len(l.subs[k]) == 0 {
				delete(l.subs, k)
			}
			l.mu.Unlock()
		})
	}
}

// Close does nothing for a local broker.
func (l *Local) Close() error { return nil }
