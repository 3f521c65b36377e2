package wire

import (
	"encoding/json"

	"github.com/teammem/teammem/internal/teammem"
)

// BatchRequest is the body of POST .../batch: upserts and deletes applied
// atomically, each key named at most once.
type BatchRequest struct {
	Upserts []BatchUpsert `json:"upserts"`
	Deletes []BatchDelete `json:"deletes"`
	// IfMatch is a space-level precondition: the batch applies only while
	// the space has this checksum ("*": was ever written). Empty: none.
	IfMatch string `json:"if_match,omitempty"`
}

// BatchUpsert creates or replaces one entry.
//
// Base is the per-entry precondition: nil (or JSON null) means none, ""
// means the entry must not exist, a checksum means the live entry must
// have it. Because every upsert the client sends carries a base, a batch
// is safe to send again after a lost answer: if the first copy committed,
// the second answers 409 with exactly the content it carried.
type BatchUpsert struct {
	Key     string  `json:"key"`
	Content string  `json:"content"`
	Base    *string `json:"base"`
	// Recreates, when not 0, names the deletion the writer knows of: the
	// version at which the key was deleted. It goes with Base "" on a key
	// the writer saw deleted and writes again on purpose: while the key's
	// tombstone is that deletion, content equal to what it deleted is a
	// new write, where without it the server takes it for a stale copy
	// and lists it in SkippedTombstoned. A server that predates the field
	// ignores it (and skips the upsert as a stale copy).
	Recreates int64 `json:"recreates,omitempty"`
	// Overlap says the content is the writer's merge of concurrent edits
	// that kept both sides of an overlapping change (both sides' lines, no
	// markers): the server keeps the flag with the entry and every change
	// list carries it (Change.Overlap), so each machine that pulls the merge
	// can ask for a review too. Any later write clears it.
	Overlap bool `json:"overlap,omitempty"`

	// missingContent records that a decoded upsert had no content (or a
	// null one), which the server refuses; an upsert built in code always
	// has content.
	missingContent bool
}

// MissingContent reports whether the decoded upsert named no content.
func (u BatchUpsert) MissingContent() bool { return u.missingContent }

// UnmarshalJSON decodes an upsert, remembering whether content was given.
func (u *BatchUpsert) UnmarshalJSON(b []byte) error {
	var raw struct {
		Key       string  `json:"key"`
		Content   *string `json:"content"`
		Base      *string `json:"base"`
		Recreates int64   `json:"recreates"`
		Overlap   bool    `json:"overlap"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*u = BatchUpsert{Key: raw.Key, Base: raw.Base, Recreates: raw.Recreates, Overlap: raw.Overlap, missingContent: raw.Content == nil}
	if raw.Content != nil {
		u.Content = *raw.Content
	}
	return nil
}

// BatchDelete deletes one entry; Base is as in BatchUpsert. Deleting a key
// that is not live is a no-op unless its base fails.
type BatchDelete struct {
	Key  string  `json:"key"`
	Base *string `json:"base"`
}

// WriteResult reports a committed write (a batch, a space delete): the
// space's head after it and what happened to each key.
type WriteResult struct {
	SpaceHead
	Written []string `json:"written"` // keys created or changed, sorted
	Deleted []string `json:"deleted"` // keys deleted (they were live), sorted
	// SkippedSecrets lists upserts the server's scanner left out under the
	// skip policy: rule, label and line, never the secret.
	SkippedSecrets []teammem.SkippedSecret `json:"skippedSecrets"`
	// SkippedTombstoned lists upserts left out as stale copies of content
	// deleted recently by a deletion the upsert did not name (Recreates):
	// the writer never saw that deletion. The teammem client keeps such a
	// file and reports it; it never deletes a file on a push.
	SkippedTombstoned []string `json:"skippedTombstoned"`
	// Findings are the poisoning checks' findings on what was written
	// (stored with the versions; the org's poisoning policy is flag).
	Findings []teammem.PoisonFinding `json:"findings"`
}

// HeldWrite is the 202 body of a /v1 write held for review: nothing was
// written; the proposal waits for an admin (GET /v1/proposals/{id}). A
// client keeps its local copy and does not send it again.
type HeldWrite struct {
	Status   string           `json:"status"` // always "held_for_review"
	Proposal teammem.Proposal `json:"proposal"`
	// SkippedSecrets and SkippedTombstoned are as in WriteResult: the
	// upserts the proposal left out.
	SkippedSecrets    []teammem.SkippedSecret `json:"skippedSecrets"`
	SkippedTombstoned []string                `json:"skippedTombstoned"`
}

// HeldStatus is HeldWrite.Status.
const HeldStatus = "held_for_review"

// ProposalList is the body of GET /v1/proposals.
type ProposalList struct {
	Proposals []teammem.Proposal `json:"proposals"`
}

// ProposalDecision is the body of POST /v1/proposals/{id}/reject (and,
// optionally, approve): a note for the author and the audit log.
type ProposalDecision struct {
	Note string `json:"note"`
}

// ProposalApproved is the 200 body of an approval: the proposal as decided
// and the write that applied it.
type ProposalApproved struct {
	Proposal teammem.Proposal `json:"proposal"`
	Write    WriteResult      `json:"write"`
}

// EntryWriteResult reports a single-entry write or restore: the WriteResult
// plus the entry's key and, when its content was stored, its checksum.
type EntryWriteResult struct {
	WriteResult
	Key           string `json:"key"`
	EntryChecksum string `json:"entry_checksum,omitempty"`
}

// History is the body of GET .../entries/{key}/history, newest first.
type History struct {
	Key      string                 `json:"key"`
	Versions []teammem.EntryVersion `json:"versions"`
}

// RestoreRequest is the body of POST .../entries/{key}/restore.
type RestoreRequest struct {
	Version int64 `json:"version"`
}

// IndexLint is the body of GET .../MEMORY.md?lint=1.
type IndexLint struct {
	// Content is MEMORY.md as Claude Code loads it (truncated, with the
	// warning), or the index rendered from the topic files when the space
	// stores none (Rendered).
	Content   string `json:"content"`
	Rendered  bool   `json:"rendered"`
	Truncated bool   `json:"truncated"`
	// Problems are the index lint's (dangling links, unindexed topics,
	// long lines, bad frontmatter, duplicate names, over the limit).
	Problems []teammem.LintProblem `json:"problems"`
	// Findings are the poisoning checks' findings on the live entries.
	Findings []teammem.PoisonFinding `json:"findings"`
}
