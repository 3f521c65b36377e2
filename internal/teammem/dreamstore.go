package teammem

import (
	"context"
	"time"
)

// DreamFilter narrows and pages DreamList: newest first by created_at,
// then id.
type DreamFilter struct {
	// ViewerUserID hides dreams of other users' personal stores: 0 shows
	// every dream of the org, a user id shows the team and API stores'
	// dreams and that user's own, -1 only the team and API stores'.
	ViewerUserID    int64
	IncludeArchived bool
	CreatedGT       *time.Time
	CreatedLT       *time.Time
	CreatedGTE      *time.Time
	CreatedLTE      *time.Time
	Statuses        []DreamStatus // none: any
	ProposalID      int64         // 0: any; else the dream whose held Apply is that proposal
	// After is the page cursor: dreams strictly older than (AfterCreatedAt,
	// AfterID) in the list's order; a zero AfterID starts from the newest.
	AfterCreatedAt time.Time
	AfterID        string
	Limit          int // 1–100, default 20 (DreamListLimit)
}

// DreamListLimit is the page size a DreamFilter asks for.
func DreamListLimit(limit int) int {
	if limit <= 0 || limit > 100 {
		return 20
	}
	return limit
}

// DreamStartParams start a pending dream.
type DreamStartParams struct {
	At time.Time
	// MaxRunning is the most dreams of the org that may run at once
	// (TEAMMEM_DREAM_ORG_CONCURRENCY); 0 means no limit.
	MaxRunning int
	// Base is the input's state at start (entry key → checksum).
	Base map[string]string
	// OutputSpaceID and OutputStoreUID, when set, record the output store.
	OutputSpaceID  int64
	OutputStoreUID string
	// RunSessionID is the session running the dream, when it has one.
	RunSessionID string
}

// DreamProgressParams record a running dream's heartbeat and its usage so
// far (totals, not increments).
type DreamProgressParams struct {
	At    time.Time
	Usage DreamUsage
}

// DreamFinishParams end a running dream.
type DreamFinishParams struct {
	Status       DreamStatus // completed or failed
	At           time.Time
	Usage        DreamUsage
	ErrorType    string // failed only
	ErrorMessage string
}

// DreamOutputParams record a dream's output store.
type DreamOutputParams struct {
	SpaceID  int64
	StoreUID string
}

// DreamProposalParams move a pending review's held Apply proposal from
// From to To (0: none).
type DreamProposalParams struct {
	From int64
	To   int64
}

// DreamReviewParams move a dream's review from From to To.
type DreamReviewParams struct {
	From DreamReviewState
	To   DreamReviewState
	At   time.Time
	By   int64
}

// DreamStore is the part of Store that keeps dreams. Every transition is a
// conditional update: when its condition does not hold it changes nothing
// and returns the dream as stored with the error its comment names, so a
// caller learns where the dream stands. ENotFound when the org has no such
// dream.
type DreamStore interface {
	// DreamCreate stores a pending dream (d.ID, d.OrgID, d.CreatedAt set
	// by the caller; Status, Review and the times the store's). An
	// update_existing dream is refused, atomically with every other
	// create, while another update_existing dream of the same input store
	// is not released: EConflict with DreamHeldMessage naming that dream.
	DreamCreate(ctx context.Context, orgID int64, d Dream) (Dream, error)
	// DreamGet returns one dream of the org.
	DreamGet(ctx context.Context, orgID int64, id string) (Dream, error)
	// DreamList pages an org's dreams as f says.
	DreamList(ctx context.Context, orgID int64, f DreamFilter) ([]Dream, error)
	// DreamStart moves a pending dream to running, setting StartedAt,
	// HeartbeatAt, Base and what else p records. ERateLimited (nothing
	// changed; try again later) when p.MaxRunning dreams of the org run
	// already, checked in the same transaction; EConflict when the dream
	// is not pending.
	DreamStart(ctx context.Context, orgID int64, id string, p DreamStartParams) (Dream, error)
	// DreamProgress records a heartbeat and the usage so far of a dream a
	// worker still runs: running, or canceled and not yet released (usage
	// may still change after a cancel). It returns the dream as stored, so
	// the worker sees a cancel; EConflict when it is neither.
	DreamProgress(ctx context.Context, orgID int64, id string, p DreamProgressParams) (Dream, error)
	// DreamFinish moves a running dream to completed or failed, with its
	// usage and error; a completed create_new dream's review becomes
	// pending. EConflict when the dream is not running; EInvalid for a
	// p.Status other than completed or failed.
	DreamFinish(ctx context.Context, orgID int64, id string, p DreamFinishParams) (Dream, error)
	// DreamCancel moves a pending or running dream to canceled (EndedAt
	// at); a pending one, which no worker runs, is released at once. A
	// canceled dream is returned unchanged; a completed or failed one is
	// EInvalid (the SDKs' 400).
	DreamCancel(ctx context.Context, orgID int64, id string, at time.Time) (Dream, error)
	// DreamRelease records that no worker runs the dream any more. Only a
	// final dream is released (EConflict otherwise); releasing again
	// keeps the first time.
	DreamRelease(ctx context.Context, orgID int64, id string, at time.Time) (Dream, error)
	// DreamArchive archives a final dream; again keeps the first time.
	// EInvalid for a pending or running dream (the SDKs' 400).
	DreamArchive(ctx context.Context, orgID int64, id string, at time.Time) (Dream, error)
	// DreamOutputSet records a dream's output store, once: EConflict when
	// it has another already.
	DreamOutputSet(ctx context.Context, orgID int64, id string, p DreamOutputParams) (Dream, error)
	// DreamReviewSet moves a dream's review from p.From to p.To:
	// EConflict when it is not in p.From.
	DreamReviewSet(ctx context.Context, orgID int64, id string, p DreamReviewParams) (Dream, error)
	// DreamReviewProposal links a pending review to the proposal of its
	// held Apply (p.From 0, p.To the proposal), or unlinks it (p.To 0):
	// EConflict, naming the proposal it waits on, when the review is not
	// pending or is not linked to p.From. Linking again to the same
	// proposal keeps it.
	DreamReviewProposal(ctx context.Context, orgID int64, id string, p DreamProposalParams) (Dream, error)
	// DreamsStale lists, across orgs, up to limit running dreams whose
	// heartbeat is older than cutoff (their replica died), oldest first.
	DreamsStale(ctx context.Context, cutoff time.Time, limit int) ([]Dream, error)
	// DreamsPending lists, across orgs, up to limit pending dreams, oldest
	// first, to enqueue again.
	DreamsPending(ctx context.Context, limit int) ([]Dream, error)
}

// DreamCancelCheck is the rule of DreamCancel for a dream as stored: nil
// when it may be canceled (or already is); EInvalid when it ended first.
func DreamCancelCheck(d Dream) error {
	if d.Status == DreamCompleted || d.Status == DreamFailed {
		return Errorf(EInvalid, "dream %s is %s: only a pending or running dream can be canceled", d.ID, d.Status)
	}
	return nil
}

// DreamArchiveCheck is the rule of DreamArchive for a dream as stored.
func DreamArchiveCheck(d Dream) error {
	if !d.Status.Final() {
		return Errorf(EInvalid, "dream %s is %s: cancel it before archiving it; only a completed, failed or canceled dream can be archived", d.ID, d.Status)
	}
	return nil
}

// DreamTransitionConflict is the EConflict of a transition whose condition
// did not hold.
func DreamTransitionConflict(d Dream, what string) error {
	return Errorf(EConflict, "dream %s is %s: cannot %s", d.ID, d.Status, what)
}

// DreamFinishCheck validates p.
func DreamFinishCheck(p DreamFinishParams) error {
	if p.Status != DreamCompleted && p.Status != DreamFailed {
		return Errorf(EInvalid, "a dream finishes completed or failed, not %q", p.Status)
	}
	return nil
}

// DreamReleaseCheck is the rule of DreamRelease for a dream as stored: nil
// when it was released already; EConflict while it is not final.
func DreamReleaseCheck(d Dream) error {
	if !d.Status.Final() {
		return DreamTransitionConflict(d, "release it before it ends")
	}
	return nil
}

// DreamReviewConflict is the EConflict of a review move whose dream is
// not in p.From.
func DreamReviewConflict(d Dream, p DreamReviewParams) error {
	return Errorf(EConflict, "dream %s is under review state %s, not %s", d.ID, d.Review.State, p.From)
}

// DreamOrgBusy is DreamStart's refusal when the org runs max dreams
// already: ERateLimited, to try again later.
func DreamOrgBusy(max int) error {
	return Errorf(ERateLimited, "the org runs %d dreams already (TEAMMEM_DREAM_ORG_CONCURRENCY)", max)
}

// DreamProposalConflict is the EConflict of a DreamReviewProposal whose
// dream's review is not pending or not linked to p.From; nil when it is
// linked to p.To already (a repeat).
func DreamProposalConflict(d Dream, p DreamProposalParams) error {
	switch {
	case d.Review.State == ReviewPending && d.Review.ProposalID == p.To:
		return nil
	case d.Review.State != ReviewPending:
		return Errorf(EConflict, "dream %s is under review state %s, not pending", d.ID, d.Review.State)
	}
	return DreamApplyHeld(d)
}

// DreamApplyHeld is Apply's refusal while an earlier Apply of d is held
// for review: EConflict naming the proposal (details "proposal_id"), to
// approve or reject first.
func DreamApplyHeld(d Dream) *Error {
	return Errorf(EConflict, "the apply of dream %s is held for review as proposal %d; approve or reject that proposal first",
		d.ID, d.Review.ProposalID).WithDetails(map[string]any{"proposal_id": d.Review.ProposalID})
}
