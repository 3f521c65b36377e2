package events

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Channel is the Postgres NOTIFY channel teammem uses.
const Channel = "teammem_events"

// Postgres is a broker for replicas sharing one Postgres database: Publish
// sends NOTIFY, and one LISTEN connection per replica feeds a Local fan-out.
type Postgres struct {
	*Local
	pool   *pgxpool.Pool
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
}

// NewPostgres starts listening on pool; Close stops it.
func NewPostgres(pool *pgxpool.Pool, log *slog.Logger) *Postgres {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Postgres{Local: NewLocal(), pool: pool, log: log, cancel: cancel, done: make(chan struct{})}
	go p.listen(ctx)
	return p
}

// Publish sends e to every replica (this one included) through NOTIFY.
func (p *Postgres) Publish(ctx context.Context, e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = p.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, string(b))
	return err
}

// Notification returns the channel and payload Publish would NOTIFY for
// e, for a writer to send inside its own transaction instead.
func (p *Postgres) Notification(e Event) (channel, payload string, err error) {
	b, err := json.Marshal(e)
	return Channel, string(b), err
}

// listen holds a LISTEN connection, reconnecting with backoff until ctx ends.
func (p *Postgres) listen(ctx context.Context) {
	defer close(p.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		err := p.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			backoff = 100 * time.Millisecond // it was healthy: a new outage starts small
		}
		p.log.Warn("event listener lost its connection; reconnecting", "error", err, "backoff", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (p *Postgres) listenOnce(ctx context.Context) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	// Anything published while we were not listening is lost: caches start over.
	p.deliver(Event{Kind: KindReset})
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			// The connection may hold a half-read state: do not reuse it.
			_ = conn.Conn().Close(context.Background())
			return err
		}
		var e Event
		if json.Unmarshal([]byte(n.Payload), &e) == nil {
			p.deliver(e)
		}
	}
}

// Close stops listening.
func (p *Postgres) Close() error {
	p.cancel()
	<-p.done
	return nil
}
