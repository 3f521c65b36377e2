package teammem

import "time"

// Scope says whose a space is.
type Scope string

// The scopes. A repo has one team space and one personal space per user.
const (
	ScopeTeam     Scope = "team"
	ScopePersonal Scope = "personal"
)

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s == ScopeTeam || s == ScopePersonal }

// SpaceRef names a space: a repo, a scope and, for personal spaces, the user.
type SpaceRef struct {
	RepoID int64
	Scope  Scope
	UserID int64 // owner of a personal space; 0 for the team space
}

// Space is one set of memory files and its head: the version counts committed
// changes, the checksum is SpaceChecksum over the live entries.
type Space struct {
	ID int64 `json:"-"`
	// UID names this incarnation of the space: random, never reused. A
	// client that last synced another UID is not continuing its history
	// (a new server, a re-created database, another org).
	UID        string    `json:"-"`
	OrgID      int64     `json:"-"`
	RepoID     int64     `json:"-"`
	Scope      Scope     `json:"scope"`
	UserID     int64     `json:"-"`
	Version    int64     `json:"version"`
	Checksum   string    `json:"checksum"`
	EntryCount int       `json:"entry_count"`
	TotalBytes int64     `json:"total_bytes"`
	UpdatedAt  time.Time `json:"updated_at"`
	// PurgedThrough is the highest version whose tombstones were purged: a
	// change feed starting before it could miss deletions (EGone).
	PurgedThrough int64 `json:"-"`
	// Archived reports whether the space is a memory store archived for
	// good. Only WriteTx.LockSpace reads it (elsewhere it is false): it is
	// what CommitWrite refuses every write of, under the space's lock, so
	// an archive and a write are ordered one way or the other.
	Archived bool `json:"-"`
}

// Empty reports whether the space has no live entries.
func (s Space) Empty() bool { return s.EntryCount == 0 }
