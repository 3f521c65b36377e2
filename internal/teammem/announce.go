package teammem

import "context"

// Announcement is a notification a store sends in the same transaction as
// the write it announces, so that other replicas hear of every committed
// write and of nothing that was rolled back.
type Announcement struct {
	Channel string
	Payload string
}

// Announcer returns the announcement of a space's newly committed head.
type Announcer func(head Space) (Announcement, bool)

type announcerKey struct{}

// WithAnnouncer asks the store's SpaceApply to send a's announcement with
// the write. A store that cannot (SQLite: one process) ignores it, and the
// caller learns so because a was never called.
func WithAnnouncer(ctx context.Context, a Announcer) context.Context {
	return context.WithValue(ctx, announcerKey{}, a)
}

// AnnouncerFrom returns the announcer WithAnnouncer put in ctx, or nil.
func AnnouncerFrom(ctx context.Context) Announcer {
	a, _ := ctx.Value(announcerKey{}).(Announcer)
	return a
}
