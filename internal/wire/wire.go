// Package wire is the JSON contract of the native /v1 API: the request and
// response bodies exactly as they travel, declared once and imported by
// both the server (internal/server/httpapi) and the client (internal/client/memsync), so the
// two cannot drift apart. api/openapi.yaml describes the same shapes for
// everyone else; the server's spec tests check that they agree.
//
// Only shapes live here, no behaviour beyond encoding: the server fills
// them from domain values, the client reads them back. Fields are never
// renamed or removed; new ones are added (and documented in the spec), and
// both sides ignore fields they do not know. The Claude Code compatible
// endpoint (/api/claude_code/team_memory) speaks Claude Code's dialect and
// keeps its own types in internal/server/httpapi.
package wire

import (
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// SpaceHead is the head of a space: what a client compares to decide
// whether anything changed. It is embedded in every response that reports
// a space's state (snapshots, change lists, write results, repos), so a
// field added here appears in all of them.
type SpaceHead struct {
	Scope teammem.Scope `json:"scope"`
	// SpaceID names this incarnation of the space: random, never reused,
	// absent while the space was never written. A client that last synced
	// another SpaceID is not continuing its history (a new server at the same
	// URL, a re-created database, another org).
	SpaceID string `json:"space_id,omitempty"`
	// Version counts the space's commits; every write that changes
	// something adds one. A space never written is at 0.
	Version int64 `json:"version"`
	// Checksum is teammem.SpaceChecksum over the live entries, the value
	// of the space's ETag.
	Checksum   string    `json:"checksum"`
	EntryCount int       `json:"entry_count"`
	TotalBytes int64     `json:"total_bytes"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Snapshot is the body of GET .../{scope}: the head and, unless the view
// is "head", the live entries in byte order of keys.
type Snapshot struct {
	Repo string `json:"repo"`
	SpaceHead
	// MaxEntryBytes is the largest entry the organization accepts. A client
	// uses it (when lower than its own cap) to refuse oversized entries
	// before writing them; 0 from an older server means "not announced".
	MaxEntryBytes int `json:"max_entry_bytes"`
	// MemoryStoreID is the space's id as a memory store ("memstore_…"),
	// absent while the space does not exist: the store path Claude Code's
	// native sync is given is /v1/memory_stores/<it>.
	MemoryStoreID string `json:"memory_store_id,omitempty"`
	// Entries is nil (absent) for view=head and a list, possibly empty,
	// otherwise.
	Entries *[]Entry `json:"entries,omitempty"`
}

// Entry is one live entry of a snapshot.
type Entry struct {
	Key string `json:"key"`
	// Content is absent with view=hashes; a pointer so that an empty file
	// travels as "" and stays distinguishable from "not sent".
	Content   *string   `json:"content,omitempty"`
	Checksum  string    `json:"checksum"`
	Size      int       `json:"size"`
	Version   int64     `json:"version"`
	Author    string    `json:"author,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// The operations of a Change.
const (
	OpUpsert = "upsert" // the entry is live; Content holds it
	OpDelete = "delete" // the entry was deleted; Checksum is what it deleted
)

// ChangeList is the body of GET .../changes?since=N: the head and the
// current state of every key changed after version N.
type ChangeList struct {
	SpaceHead
	Since int64 `json:"since"`
	// MaxEntryBytes is as in Snapshot.
	MaxEntryBytes int      `json:"max_entry_bytes"`
	Changes       []Change `json:"changes"`
}

// Change is the current state of one key changed after a version.
type Change struct {
	Key string `json:"key"`
	Op  string `json:"op"` // OpUpsert or OpDelete
	// Checksum is the content's checksum; for a deletion, the checksum of
	// the content it deleted. A client recomputes it from Content rather
	// than trusting it.
	Checksum  string    `json:"checksum"`
	Content   *string   `json:"content,omitempty"` // exactly for upserts
	Version   int64     `json:"version"`
	Author    string    `json:"author,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	// Overlap, on an upsert, says the content is a merge of concurrent
	// edits that kept both sides of an overlapping change, as the machine
	// that merged it said (BatchUpsert.Overlap): worth a review.
	Overlap bool `json:"overlap,omitempty"`
}

// Repo is the body of GET /v1/repos/{owner}/{name}.
type Repo struct {
	Repo      string    `json:"repo"`
	CreatedAt time.Time `json:"created_at"`
	Team      SpaceHead `json:"team"`
	// Personal is the caller's personal space; absent for viewers.
	Personal *SpaceHead `json:"personal,omitempty"`
}

// Me is the body of GET /v1/me: the key's organization, user and the key's
// own metadata (never its secret).
type Me struct {
	Org  teammem.Org    `json:"org"`
	User teammem.User   `json:"user"`
	Key  teammem.APIKey `json:"key"`
}
