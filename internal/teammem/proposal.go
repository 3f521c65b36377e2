package teammem

import (
	"context"
	"time"
)

// Review before sharing (issue 15 point 3). Under team_writes: review, or
// poisoning: review with findings, a member's team write does not reach the
// team space: it becomes a Proposal, stored and secret-scanned like any
// write, visible to its author and to admins. An admin's approval applies
// it through the one write path with the base every entry had when it was
// proposed, so a proposal that went stale conflicts instead of overwriting
// what others wrote since; a rejection keeps it, decided, and in the audit
// log.

// ProposalStatus is where a proposal stands.
type ProposalStatus string

// The proposal statuses.
const (
	ProposalPending  ProposalStatus = "pending"
	ProposalApproved ProposalStatus = "approved"
	ProposalRejected ProposalStatus = "rejected"
)

// Valid reports whether s is a known status.
func (s ProposalStatus) Valid() bool {
	return s == ProposalPending || s == ProposalApproved || s == ProposalRejected
}

// Why a write was held, in Proposal.Reason.
const (
	HeldTeamWrites = "team_writes" // the org or repo reviews every member's team write
	HeldPoisoning  = "poisoning"   // poisoning: review, and the checks found something
)

// ScreenedMessage is the refusal message of a write that was held or
// refused by the server's content checks, in the words Claude Code's
// memory-store client maps to a per-file notice (content_screened).
const ScreenedMessage = "content rejected by safety check"

// Proposal is a held team write.
type Proposal struct {
	ID       int64  `json:"id"`
	Repo     string `json:"repo"`
	Scope    Scope  `json:"scope"`
	AuthorID int64  `json:"-"`
	Author   string `json:"author"` // handle
	ClientID string `json:"client_id,omitempty"`
	API      string `json:"api"`
	// KeyID and SessionID are the provenance of the held write (the API
	// key, the Claude Code session), which its approval's versions keep.
	KeyID     string         `json:"key_id,omitempty"`
	SessionID string         `json:"session_id,omitempty"`
	Status    ProposalStatus `json:"status"`
	Reason    string         `json:"reason"`
	// Changes are the entries the write would change, each with its base.
	Changes   []ProposedChange `json:"changes"`
	Findings  []PoisonFinding  `json:"findings"`
	CreatedAt time.Time        `json:"created_at"`
	DecidedAt *time.Time       `json:"decided_at,omitempty"`
	DecidedBy string           `json:"decided_by,omitempty"` // handle
	Note      string           `json:"note,omitempty"`
	// Redacted reports whether the content of any of its changes was
	// erased (see ProposedChange.Redacted); the stores set it on read.
	Redacted bool `json:"redacted,omitempty"`
}

// ProposedChange is one entry of a proposal: its new content (OpWrite) or
// its deletion, and Base, the checksum the entry had when the write was
// proposed ("" when it did not exist).
type ProposedChange struct {
	Key     string `json:"key"`
	Op      Op     `json:"op"`
	Content string `json:"content,omitempty"`
	Base    string `json:"base"`
	// Recreates is the deletion a re-creation names (Upsert.Recreates);
	// 0 for any other change.
	Recreates int64 `json:"recreates,omitempty"`
	// Redacted reports that the change's content was erased, by the
	// redaction of a version that held the same content or by a purge of
	// its space's history: Content is empty for good, and a pending
	// proposal with such a change can only be rejected.
	Redacted bool `json:"redacted,omitempty"`
}

// Request is the write that applies the proposal: every change carries its
// base, so a change made to any of its entries since conflicts.
func (p Proposal) Request() WriteRequest {
	var req WriteRequest
	for _, c := range p.Changes {
		base := c.Base
		if c.Op == OpDelete {
			req.Deletes = append(req.Deletes, Delete{Key: c.Key, Base: &base})
		} else {
			req.Upserts = append(req.Upserts, Upsert{Key: c.Key, Content: c.Content, Base: &base, Recreates: c.Recreates})
		}
	}
	return req
}

// HasRedacted reports whether any of changes had its content erased.
func HasRedacted(changes []ProposedChange) bool {
	for _, c := range changes {
		if c.Redacted {
			return true
		}
	}
	return false
}

// Keys lists the proposal's keys, in its order.
func (p Proposal) Keys() []string {
	keys := make([]string, len(p.Changes))
	for i, c := range p.Changes {
		keys[i] = c.Key
	}
	return keys
}

// sameChanges reports whether two proposals propose exactly the same.
func sameChanges(a, b []ProposedChange) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// HeldError is the refusal a dialect without a notion of proposals (the
// memory stores) returns for a held write: EInvalid with ScreenedMessage
// and ReasonHeldForReview, the proposal's id in the details.
func (p Proposal) HeldError() *Error {
	return &Error{Code: EInvalid, Message: ScreenedMessage, Reason: ReasonHeldForReview,
		Details: map[string]any{"proposal_id": p.ID, "reason": p.Reason}}
}

// ProposalFilter narrows and pages ProposalList.
type ProposalFilter struct {
	Status   ProposalStatus // "": any
	AuthorID int64          // 0: anyone's
	Repo     string         // "": every repo
	BeforeID int64          // page: proposals with a smaller id; 0 = from the newest
	Limit    int            // page size, as ListLimit reads it
}

// ProposalDecideParams records an admin's decision.
type ProposalDecideParams struct {
	Status ProposalStatus // approved or rejected
	By     int64
	At     time.Time
	Note   string
}

// ProposalStore is the part of Store that keeps proposals.
type ProposalStore interface {
	// ProposalCreate stores a pending proposal (ID, Status and CreatedAt
	// are set by the store) and returns it as stored.
	ProposalCreate(ctx context.Context, orgID int64, p Proposal) (Proposal, error)
	// ProposalGet returns one proposal of the org (ENotFound otherwise).
	ProposalGet(ctx context.Context, orgID, id int64) (Proposal, error)
	// ProposalList pages an org's proposals, newest first, without their
	// changes' content.
	ProposalList(ctx context.Context, orgID int64, f ProposalFilter) ([]Proposal, error)
	// ProposalDecide moves a pending proposal to p.Status atomically:
	// EConflict when it was decided already, ENotFound when there is none.
	ProposalDecide(ctx context.Context, orgID, id int64, p ProposalDecideParams) (Proposal, error)
}
