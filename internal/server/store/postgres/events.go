package postgres

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/teammem/teammem/internal/server/events"
)

// eventChannel is the NOTIFY channel teammem uses.
const eventChannel = "teammem_events"

// Broker returns a broker for replicas sharing this database: Publish sends
// NOTIFY, and one LISTEN connection per replica feeds an in-process fan-out.
// It is the store's events.Carrier capability; Close stops the listener.
func (db *DB) Broker(log *slog.Logger) events.Broker {
	ctx, cancel := context.WithCancel(context.Background())
	b := &broker{Local: events.NewLocal(), db: db, log: log, cancel: cancel, done: make(chan struct{})}
	go b.listen(ctx)
	return b
}

var (
	_ events.Carrier  = (*DB)(nil)
	_ events.Notifier = (*broker)(nil)
)

// broker is the Postgres events.Broker. Its embedded Local is the fan-out
// to this replica's subscribers, fed only by the listener.
type broker struct {
	*events.Local
	db     *DB
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
}

// Publish sends e to every replica (this one included) through NOTIFY.
func (b *broker) Publish(ctx context.Context, e events.Event) error {
	_, payload, err := b.Notification(e)
	if err != nil {
		return err
	}
	_, err = b.db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, eventChannel, payload)
	return err
}

// Notification returns the channel and payload Publish would NOTIFY for
// e, for a writer to send inside its own transaction instead.
func (b *broker) Notification(e events.Event) (channel, payload string, err error) {
	p, err := json.Marshal(e)
	return eventChannel, string(p), err
}

// listen holds a LISTEN connection, reconnecting with backoff until ctx ends.
func (b *broker) listen(ctx context.Context) {
	defer close(b.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		err := b.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			backoff = 100 * time.Millisecond // it was healthy: a new outage starts small
		}
		b.log.Warn("event listener lost its connection; reconnecting", "error", err, "backoff", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// deliver hands e to this replica's subscribers.
func (b *broker) deliver(e events.Event) { _ = b.Local.Publish(context.Background(), e) }

func (b *broker) listenOnce(ctx context.Context) error {
	conn, err := b.db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+eventChannel); err != nil {
		return err
	}
	// Anything published while we were not listening is lost: caches start over.
	b.deliver(events.Event{Kind: events.KindReset})
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// The connection may hold a half-read state: do not reuse it.
			_ = conn.Conn().Close(context.Background())
			return err
		}
		var e events.Event
		if json.Unmarshal([]byte(n.Payload), &e) == nil {
			b.deliver(e)
		}
	}
}

// Close stops listening.
func (b *broker) Close() error {
	b.cancel()
	<-b.done
	return nil
}
