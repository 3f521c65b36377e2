package teammem

import "time"

// Entry is one memory file in a space. A deleted entry is kept as a tombstone:
// Deleted is set, Content is empty and Checksum still names the content it
// deleted, so a stale re-upload of exactly that content can be recognised.
type Entry struct {
	Key       string    `json:"key"`
	Content   string    `json:"content,omitempty"`
	Checksum  string    `json:"checksum"`
	Size      int       `json:"size"`
	Version   int64     `json:"version"`
	Deleted   bool      `json:"deleted,omitempty"`
	AuthorID  int64     `json:"-"`
	Author    string    `json:"author,omitempty"`
	ClientID  string    `json:"-"`
	UpdatedAt time.Time `json:"updated_at"`
	// MemoryID names the entry as a memory of the memory stores API
	// ("mem_…"): kept by edits, carried by a rename, new when a deleted key
	// is written again. A tombstone keeps the id it deleted.
	MemoryID string `json:"-"`
	// MemoryCreatedAt is when MemoryID was first written: kept by edits,
	// carried by a rename, new with a new id (the memory's created_at).
	MemoryCreatedAt time.Time `json:"-"`
	// VersionRowID is the id of the version row that recorded the entry's
	// current state (read only by MemoriesList and MemoryGet).
	VersionRowID int64 `json:"-"`
	// Overlap reports whether the entry's content is a merge that kept both
	// sides of an overlapping edit, as its writer said (EntryChange.Overlap);
	// read only by ChangesList.
	Overlap bool `json:"-"`
}

// Op is the kind of change an entry version records.
type Op string

// The entry operations.
const (
	OpWrite   Op = "write"
	OpDelete  Op = "delete"
	OpRestore Op = "restore"
)

// EntryChange is one change a write plan commits.
type EntryChange struct {
	Key     string
	Op      Op
	Content string // for OpWrite and OpRestore
	// MemoryID, when set on a write, is the memory id the entry takes
	// (a rename carries its id to the new key); empty: keep the live
	// entry's id, or make a new one.
	MemoryID string
	// Findings are the poisoning checks' findings on Content, stored with
	// the version (team spaces only).
	Findings []PoisonFinding
	// Checksum is Content's checksum when the planner knew it already
	// (ApplyChanges computes it when empty).
	Checksum string
	// Recreates is the upsert's Upsert.Recreates, kept so that a held
	// write's proposal re-creates the key when approved.
	Recreates int64
	// Overlap is the upsert's Upsert.Overlap (false for a delete).
	Overlap bool
}

// EntryVersion is one recorded change of an entry, kept for history, blame
// and restore (until the retention sweep removes it).
//
// A redacted version keeps its place in the history (version, op, author,
// time) but not its content: Content and Checksum are empty, Size is 0, and
// RedactedAt and RedactedBy say when and by whom. Nothing can restore it.
type EntryVersion struct {
	Key     string `json:"-"`
	Version int64  `json:"version"`
	Op      Op     `json:"op"`
	// Checksum is empty only for a redacted version: even the hash of
	// erased content is not kept.
	Checksum   string     `json:"checksum,omitempty"`
	Size       int        `json:"size"`
	Content    string     `json:"-"`
	Author     string     `json:"author"`
	ClientID   string     `json:"client_id,omitempty"`
	CreatedAt  time.Time  `json:"time"`
	RedactedAt *time.Time `json:"redacted_at,omitempty"`
	RedactedBy string     `json:"redacted_by,omitempty"` // handle; empty when unknown
	// RedactedByID is the redacting user's id (0 when unknown).
	RedactedByID int64 `json:"-"`
	// ID is the row's id, unique in the database: the memory stores API
	// names a version by it ("memver_…").
	ID int64 `json:"-"`
	// MemoryID is the memory the version belongs to.
	MemoryID string `json:"-"`
	// Provenance: the API key that wrote the version (its id, and its name
	// while the key exists), the dialect it came through ("v1",
	// "claude_code", "memory_stores", "claude_code_memory") and the Claude
	// Code session id when the client sent one (X-Claude-Code-Session-Id).
	// Each is empty when unknown: versions older than these fields, and
	// for KeyID and SessionID an approved proposal's versions (a proposal
	// keeps its author, client and dialect, not the key or session).
	KeyID     string `json:"key_id,omitempty"`
	KeyName   string `json:"key_name,omitempty"`
	API       string `json:"api,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// AuthorID is the writing user's id.
	AuthorID int64 `json:"-"`
	// SpaceID is the version's space id.
	SpaceID int64 `json:"-"`
	// Created reports whether the version is its memory's first (read only
	// by the memory version queries).
	Created bool `json:"-"`
	// Findings are the poisoning checks' findings on this version's
	// content when it was written (none for a personal space).
	Findings []PoisonFinding `json:"findings,omitempty"`
}

// Redacted reports whether the version's content was erased.
func (v EntryVersion) Redacted() bool { return v.RedactedAt != nil }

// AuditEvent is one line of an org's audit log. Details never hold content
// or secrets: for secret skips only the rule ids.
type AuditEvent struct {
	ID        int64          `json:"id"`
	OrgID     int64          `json:"-"`
	ActorID   int64          `json:"-"`
	Actor     string         `json:"actor"`
	Action    string         `json:"action"`
	Repo      string         `json:"repo,omitempty"`
	Target    string         `json:"target,omitempty"`
	Details   map[string]any `json:"details,omitempty"`
	CreatedAt time.Time      `json:"time"`
}
