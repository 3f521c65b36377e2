package teammem

import (
	"context"
	"time"
)

// ConsoleStore is the state of the web console (/ui/) that drivers keep
// besides the Store: sign-in sessions, one-time login links and two
// aggregate reads of the overview page. A driver declares the capability by
// implementing it; the server asks with a type assertion. Session and link
// lookups are not scoped by org, like KeyLookup: the secret token names its
// org. Tokens are stored only as their SHA-256.
type ConsoleStore interface {
	// ConsoleSessionCreate stores a new session.
	ConsoleSessionCreate(ctx context.Context, orgID int64, s ConsoleSession) error
	// ConsoleSessionGet returns the session whose id hashes to idHash,
	// ENotFound when there is none or it expired before now.
	ConsoleSessionGet(ctx context.Context, idHash []byte, now time.Time) (ConsoleSession, error)
	// ConsoleSessionDelete ends a session (no error when there is none),
	// and with it every session that expired before now.
	ConsoleSessionDelete(ctx context.Context, idHash []byte, now time.Time) error
	// LoginLinkCreate stores a one-time login link.
	LoginLinkCreate(ctx context.Context, orgID int64, l LoginLink) error
	// LoginLinkRedeem uses up the link whose token hashes to tokenHash and
	// returns it: ENotFound when there is none, it expired before now or
	// it was used already. Of two concurrent redemptions one wins.
	LoginLinkRedeem(ctx context.Context, tokenHash []byte, now time.Time) (LoginLink, error)
	// TeamWritesPerDay counts the recorded versions (writes, deletions,
	// restores) of an org's team spaces per UTC day from since on, oldest
	// day first; days without a version are left out.
	TeamWritesPerDay(ctx context.Context, orgID int64, since time.Time) ([]DayCount, error)
	// TeamLastWrites returns, per repo slug, the newest recorded version of
	// the repo's team space: who wrote it and when. A repo whose history
	// is empty (never written, or purged) is absent.
	TeamLastWrites(ctx context.Context, orgID int64) (map[string]LastWrite, error)
	// KeysWithPrefix returns up to limit keys, of any org, whose display
	// prefix is prefix, oldest first: a console sign-in with a wrong
	// secret for a real key's prefix is audited in that key's org.
	KeysWithPrefix(ctx context.Context, prefix string, limit int) ([]APIKey, error)
}

// ConsoleSession is one signed-in browser. It acts with the API key it
// signed in with (KeyHash), so it ends when that key is revoked or expires
// or its user is disabled: the key is checked on every request.
type ConsoleSession struct {
	IDHash  []byte // SHA-256 of the cookie's session id
	OrgID   int64
	KeyHash []byte // the signed-in key's hash, as api_keys holds it
	// CSRF is the token every form of the session carries.
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// LoginLink is a one-time sign-in minted by `teammem-server admin
// login-link`: redeeming it opens a session with the key it names.
type LoginLink struct {
	TokenHash []byte
	OrgID     int64
	KeyHash   []byte
	ExpiresAt time.Time
}

// DayCount is a count for one UTC day.
type DayCount struct {
	Day   time.Time // midnight UTC
	Count int
}

// LastWrite is the newest version of a space: by whom and when.
type LastWrite struct {
	Author string // handle; empty when the user is unknown
	At     time.Time
}
