package wire

import (
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// The Dreams API on the wire: the BetaDream object field for field as the
// official SDKs (Go v2.15.0 betadream.go, TypeScript 1.15.0 dreams.d.ts)
// decode it, the create request, Anthropic's error envelope, and teammem's
// extensions (review state, diff, apply, discard). The server's handlers
// and the client's apiclient share these structs.

// DreamsBeta is the anthropic-beta header value every Dreams API request
// carries.
const DreamsBeta = "dreaming-2026-04-21"

// Dream statuses: pending → running → completed | failed | canceled. The
// last three are final and never change.
const (
	DreamPending   = "pending"
	DreamRunning   = "running"
	DreamCompleted = "completed"
	DreamFailed    = "failed"
	DreamCanceled  = "canceled"
)

// DreamFinal reports whether status is one a dream never leaves.
func DreamFinal(status string) bool {
	return status == DreamCompleted || status == DreamFailed || status == DreamCanceled
}

// Input and output types of a dream, and its output behaviours.
const (
	DreamInputMemoryStore  = "memory_store"
	DreamInputSessions     = "sessions"
	BehaviorCreateNew      = "create_new"
	BehaviorUpdateExisting = "update_existing"
)

// Review states of a dream (teammem extension): a completed create_new
// dream is "pending" until applied or discarded; update_existing dreams
// are "none".
const (
	ReviewPending   = "pending"
	ReviewApplied   = "applied"
	ReviewDiscarded = "discarded"
	ReviewNone      = "none"
)

// Dream is the BetaDream object plus teammem's review extension. Nullable
// fields are pointers: the SDKs decode null and absent alike, and the
// server sends null.
type Dream struct {
	ID             string              `json:"id"`   // drm_…
	Type           string              `json:"type"` // always "dream"
	Status         string              `json:"status"`
	Inputs         []DreamInput        `json:"inputs"`
	Outputs        []DreamOutput       `json:"outputs"` // [] until the output store exists
	Model          DreamModel          `json:"model"`
	Instructions   *string             `json:"instructions"`
	OutputBehavior DreamOutputBehavior `json:"output_behavior"`
	Usage          DreamUsage          `json:"usage"`
	Error          *DreamError         `json:"error"`
	// SessionID is the session that runs the dream, once there is one.
	SessionID  *string     `json:"session_id"`
	CreatedAt  time.Time   `json:"created_at"`
	EndedAt    *time.Time  `json:"ended_at"`
	ArchivedAt *time.Time  `json:"archived_at"`
	Review     DreamReview `json:"review"` // teammem extension
}

// DreamInput is one input: a memory store (MemoryStoreID) or sessions
// (SessionIDs, sorted).
type DreamInput struct {
	Type          string   `json:"type"`
	MemoryStoreID string   `json:"memory_store_id,omitempty"`
	SessionIDs    []string `json:"session_ids,omitempty"`
}

// DreamOutput is a store the dream writes.
type DreamOutput struct {
	Type          string `json:"type"` // "memory_store"
	MemoryStoreID string `json:"memory_store_id"`
}

// DreamModel names the model that runs the dream.
type DreamModel struct {
	ID    string `json:"id"`
	Speed string `json:"speed,omitempty"` // "standard"
}

// DreamOutputBehavior says where the dream writes: a new store
// (create_new) or the input store itself (update_existing, MemoryStoreID).
type DreamOutputBehavior struct {
	Type          string `json:"type"`
	MemoryStoreID string `json:"memory_store_id,omitempty"`
}

// DreamUsage sums the provider's token counts over the dream's turns so
// far; final once the dream completed or failed.
type DreamUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Total is every token counted.
func (u DreamUsage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// DreamError is why a dream failed or was canceled: Type such as timeout
// or internal_error, Message for people.
type DreamError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// DreamReview is teammem's review extension: State is a Review constant,
// At when it was applied or discarded.
type DreamReview struct {
	State string     `json:"state"`
	At    *time.Time `json:"at"`
}

// DreamPage is a page of GET /v1/dreams, newest first: NextPage is the
// cursor of the next page (the page query parameter), null on the last.
type DreamPage struct {
	Data     []Dream `json:"data"`
	NextPage *string `json:"next_page"`
}

// DreamCreateRequest is the body of POST /v1/dreams. A request with only
// a memory_store input is a teammem extension.
type DreamCreateRequest struct {
	Inputs         []DreamInput         `json:"inputs"`
	Model          DreamModel           `json:"model"`
	Instructions   *string              `json:"instructions,omitempty"`
	OutputBehavior *DreamOutputBehavior `json:"output_behavior,omitempty"`
}

// Change kinds of a DreamChange.
const (
	ChangeAdded     = "added"
	ChangeRewritten = "rewritten"
	ChangeMerged    = "merged"
	ChangeDeleted   = "deleted"
)

// DreamDiff is GET /v1/dreams/{id}/diff (teammem extension): the output
// store against the input, unchanged memories left out.
type DreamDiff struct {
	DreamID       string        `json:"dream_id"`
	InputStoreID  string        `json:"input_store_id"`
	OutputStoreID string        `json:"output_store_id"`
	Changes       []DreamChange `json:"changes"`
}

// DreamChange is one memory's change: Before is nil for an added memory,
// After nil for a deleted one; MergedFrom names the memories a merged one
// absorbed.
type DreamChange struct {
	Path       string   `json:"path"`
	Change     string   `json:"change"`
	MemoryID   *string  `json:"memory_id"`
	Before     *string  `json:"before"`
	After      *string  `json:"after"`
	MergedFrom []string `json:"merged_from"`
}

// AnthropicErrorBody is Anthropic's error envelope, which the Dreams and
// memory stores routes answer in: {"type":"error","error":{...}}.
type AnthropicErrorBody struct {
	Type  string         `json:"type"` // always "error"
	Error AnthropicError `json:"error"`
}

// AnthropicError is the envelope's error. ChangedPaths is set on the 409
// conflict_error of a dream's apply: the memories of the input store that
// changed since the dream started. ProposalID is set on the 409 of a
// dream's apply while an earlier apply of it is held for review: that
// proposal.
type AnthropicError struct {
	Type         string   `json:"type"`
	Message      string   `json:"message"`
	ChangedPaths []string `json:"changed_paths,omitempty"`
	ProposalID   int64    `json:"proposal_id,omitempty"`
}

// anthropicCodes maps the envelope's error types to teammem's codes.
var anthropicCodes = map[string]string{
	"invalid_request_error":            teammem.EInvalid,
	"authentication_error":             teammem.EUnauthorized,
	"permission_error":                 teammem.EForbidden,
	"not_found_error":                  teammem.ENotFound,
	"conflict_error":                   teammem.EConflict,
	"memory_path_conflict_error":       teammem.EConflict,
	"memory_precondition_failed_error": teammem.EPreconditionFailed,
	"request_too_large":                teammem.ETooLarge,
	"rate_limit_error":                 teammem.ERateLimited,
	"overloaded_error":                 teammem.EUnavailable,
	"api_error":                        teammem.EInternal,
}

// Err rebuilds the domain error the envelope describes: its code one of
// teammem's (internal for a type not in the table), the envelope's own
// type in details "anthropic_type" and, when sent, "changed_paths".
func (e AnthropicError) Err() *teammem.Error {
	code, ok := anthropicCodes[e.Type]
	if !ok {
		code = teammem.EInternal
	}
	d := map[string]any{"anthropic_type": e.Type}
	if e.ChangedPaths != nil {
		d["changed_paths"] = e.ChangedPaths
	}
	return &teammem.Error{Code: code, Message: e.Message, Details: d}
}
