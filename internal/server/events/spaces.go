package events

import (
	"context"
	"log/slog"

	"github.com/teammem/teammem/internal/teammem"
)

// Spaces is a broker as the teammem.Writer's ChangePublisher: a committed
// head becomes a space event, sent inside the write's own transaction when
// the broker can have the store send it (a Notifier), else published after
// the commit.
type Spaces struct {
	Broker Broker
	// Log hears of failed publishes, which only delay clients until their
	// next poll; nil discards them.
	Log *slog.Logger
}

// Announcement returns the notification the store sends with a write, when
// the broker is one a store can notify through (Postgres).
func (s Spaces) Announcement(repo string, head teammem.Space) (teammem.Announcement, bool) {
	p, ok := s.Broker.(interface {
		Notification(e Event) (channel, payload string, err error)
	})
	if !ok {
		return teammem.Announcement{}, false
	}
	ch, payload, err := p.Notification(SpaceEvent(repo, head))
	return teammem.Announcement{Channel: ch, Payload: payload}, err == nil
}

// Publish announces a committed head that was not announced with its write.
func (s Spaces) Publish(ctx context.Context, repo string, head teammem.Space) {
	if err := s.Broker.Publish(context.WithoutCancel(ctx), SpaceEvent(repo, head)); err != nil && s.Log != nil {
		s.Log.WarnContext(ctx, "publishing a change event failed", "error", err.Error())
	}
}

// SpaceEvent is the change event of a space's new head.
func SpaceEvent(repo string, sp teammem.Space) Event {
	return Event{OrgID: sp.OrgID, Repo: repo, Scope: string(sp.Scope), UserID: sp.UserID, Version: sp.Version, Checksum: sp.Checksum}
}
