package teammem

import (
	"strings"
	"time"
)

// Dreams (issue 24): a dream is a job that reads a memory store (and,
// optionally, sessions) and writes a reorganised store, as Anthropic's
// Dreams API declares it. The row is the truth: every status change is a
// conditional update in the store (DreamStore), so that a worker, a cancel
// and a reaper on any replica agree on where a dream stands.

// DreamIDPrefix starts every dream id.
const DreamIDPrefix = "drm_"

// NewDreamID returns a fresh random dream id.
func NewDreamID() string { return DreamIDPrefix + randomHex() }

// ValidDreamID reports whether id is shaped like a dream id NewDreamID
// gives out.
func ValidDreamID(id string) bool {
	rest, ok := strings.CutPrefix(id, DreamIDPrefix)
	if !ok || len(rest) != 32 {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// DreamStatus is where a dream is in its lifecycle: pending → running →
// completed | failed | canceled. The last three are final.
type DreamStatus string

// The dream statuses, as the SDKs spell them.
const (
	DreamPending   DreamStatus = "pending"
	DreamRunning   DreamStatus = "running"
	DreamCompleted DreamStatus = "completed"
	DreamFailed    DreamStatus = "failed"
	DreamCanceled  DreamStatus = "canceled"
)

// Valid reports whether s is a known status.
func (s DreamStatus) Valid() bool {
	switch s {
	case DreamPending, DreamRunning, DreamCompleted, DreamFailed, DreamCanceled:
		return true
	}
	return false
}

// Final reports whether s never changes again.
func (s DreamStatus) Final() bool {
	return s == DreamCompleted || s == DreamFailed || s == DreamCanceled
}

// DreamBehavior is where a dream writes its result.
type DreamBehavior string

// The output behaviours.
const (
	// DreamCreateNew writes into a new store that starts as a copy of the
	// input; the input is untouched (the default).
	DreamCreateNew DreamBehavior = "create_new"
	// DreamUpdateExisting writes into the input store itself.
	DreamUpdateExisting DreamBehavior = "update_existing"
)

// DreamReviewState is where a create_new dream's result stands in review
// (a teammem extension of the dream object).
type DreamReviewState string

// The review states.
const (
	ReviewNone      DreamReviewState = "none"      // nothing to review (update_existing, or not completed)
	ReviewPending   DreamReviewState = "pending"   // a completed create_new dream waiting for Apply or Discard
	ReviewApplied   DreamReviewState = "applied"   // its difference was written into the input store
	ReviewDiscarded DreamReviewState = "discarded" // its output store was archived
)

// Valid reports whether s is a known review state.
func (s DreamReviewState) Valid() bool {
	return s == ReviewNone || s == ReviewPending || s == ReviewApplied || s == ReviewDiscarded
}

// The error types a dream fails with (Dream.ErrorType), besides those a
// worker takes from its model provider.
const (
	DreamErrorInternal = "internal_error" // the replica running it died, or a bug
	DreamErrorTimeout  = "timeout"        // TEAMMEM_DREAM_TIMEOUT passed
)

// The model speed the API allows.
const DreamSpeedStandard = "standard"

// DreamModelSpeedValid reports whether speed is one the API allows.
func DreamModelSpeedValid(speed string) bool { return speed == DreamSpeedStandard }

// DreamUsage are the four token counts, summed from the provider's answers.
type DreamUsage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheCreationInputTokens int64
	CacheReadInputTokens     int64
}

// DreamReview is a dream's review state, when it was reached and by whom.
type DreamReview struct {
	State DreamReviewState
	At    *time.Time
	By    int64 // user id; 0 when none
	// ProposalID is the proposal a held Apply (team_writes: review) of a
	// pending review waits on; 0 when none.
	ProposalID int64
}

// Dream is one dream row.
type Dream struct {
	ID    string
	OrgID int64
	// InputSpaceID and InputStoreUID name the memory store the dream reads
	// (and, for update_existing, writes). InputOwnerID is the user of a
	// personal input space (0 for a team or API store): who may see it.
	InputSpaceID  int64
	InputStoreUID string
	InputOwnerID  int64
	// OutputSpaceID and OutputStoreUID name the store holding the result,
	// 0 and "" until the worker records it.
	OutputSpaceID  int64
	OutputStoreUID string
	// SessionIDs are the sessions input, sorted; nil when the request had
	// no sessions entry (the teammem extension).
	SessionIDs   []string
	Model        string
	ModelSpeed   string
	Instructions string // "" when none was given
	Behavior     DreamBehavior
	Status       DreamStatus
	// ErrorType and ErrorMessage say why a failed dream failed.
	ErrorType    string
	ErrorMessage string
	Usage        DreamUsage
	// RunSessionID is the session running the dream (the API's
	// session_id), "" until a worker starts it.
	RunSessionID string
	CreatedAt    time.Time
	StartedAt    *time.Time
	EndedAt      *time.Time // completed, failed or canceled
	ArchivedAt   *time.Time
	// ReleasedAt marks that no worker runs the dream any more: until then
	// an update_existing dream holds its store.
	ReleasedAt  *time.Time
	HeartbeatAt *time.Time
	// CreatorUserID and CreatorKeyID are who asked for it.
	CreatorUserID int64
	CreatorKeyID  string
	// Base is the input's state when the dream started: entry key →
	// checksum, the preconditions of Apply.
	Base   map[string]string
	Review DreamReview
}

// InputStoreID is the API id of the dream's input store.
func (d Dream) InputStoreID() string { return StoreIDPrefix + d.InputStoreUID }

// OutputStoreID is the API id of the dream's output store, "" until the
// worker recorded one.
func (d Dream) OutputStoreID() string {
	if d.OutputStoreUID == "" {
		return ""
	}
	return StoreIDPrefix + d.OutputStoreUID
}

// Holds reports whether the dream holds its input store against another
// update_existing dream: an update_existing dream not yet released.
func (d Dream) Holds() bool { return d.Behavior == DreamUpdateExisting && d.ReleasedAt == nil }

// DreamHeldMessage is the refusal of an update_existing dream whose store
// another one holds.
func DreamHeldMessage(storeID, otherID string) string {
	return "memory store " + storeID + " is the target of another update_existing dream (" + otherID +
		") that has not fully stopped; wait for it to end, or cancel it"
}
