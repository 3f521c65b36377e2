package dreamsql

import (
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Update is one conditional transition of a dream. A driver runs it in
// one transaction: it reads the dream (locking its row where it can);
// when MaxRunning is above 0 and the dream is pending, it counts the
// org's running dreams (Running, ordered against every other start of the
// org) and refuses with teammem.DreamOrgBusy at the limit; it runs SQL
// with Args; when no row changed it returns the dream as read with
// Miss's verdict (nil: an idempotent repeat); else it re-reads the dream
// and commits.
type Update struct {
	set, cond         string
	setArgs, condArgs []any
	// Miss judges the dream as stored when the condition did not hold.
	Miss func(teammem.Dream) error
	// MaxRunning is DreamStartParams.MaxRunning for a start, else 0.
	MaxRunning int
}

// SQL is the update's statement.
func (u Update) SQL() string {
	return `UPDATE dreams SET ` + u.set + ` WHERE org_id = ? AND id = ? AND (` + u.cond + `)`
}

// Args are SQL's arguments for the dream id of an org.
func (u Update) Args(orgID int64, id string) []any {
	return append(append(append([]any{}, u.setArgs...), orgID, id), u.condArgs...)
}

func conflict(what string) func(teammem.Dream) error {
	return func(d teammem.Dream) error { return teammem.DreamTransitionConflict(d, what) }
}

// Start moves a pending dream to running.
func Start(p teammem.DreamStartParams) (Update, error) {
	base, err := teammem.EncodeDreamBase(p.Base)
	if err != nil {
		return Update{}, err
	}
	return Update{
		set: `status = 'running', started_at = ?, heartbeat_at = ?, base = ?, run_session_id = ?,
			output_space_id = CASE WHEN ? <> 0 THEN ? ELSE output_space_id END,
			output_store_uid = CASE WHEN ? <> '' THEN ? ELSE output_store_uid END`,
		setArgs: []any{p.At, p.At, base, p.RunSessionID, p.OutputSpaceID, p.OutputSpaceID, p.OutputStoreUID, p.OutputStoreUID},
		cond:    `status = 'pending'`, Miss: conflict("start it"), MaxRunning: p.MaxRunning,
	}, nil
}

// Progress records a heartbeat and the usage so far of a dream a worker
// runs: running, or canceled and not yet released.
func Progress(p teammem.DreamProgressParams) Update {
	u := p.Usage
	return Update{
		set:     `heartbeat_at = ?, input_tokens = ?, output_tokens = ?, cache_creation_input_tokens = ?, cache_read_input_tokens = ?`,
		setArgs: []any{p.At, u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens},
		cond:    `status = 'running' OR status = 'canceled' AND released_at IS NULL`, Miss: conflict("record progress"),
	}
}

// Finish ends a running dream; a completed create_new dream waits for
// review.
func Finish(p teammem.DreamFinishParams) (Update, error) {
	if err := teammem.DreamFinishCheck(p); err != nil {
		return Update{}, err
	}
	u := p.Usage
	return Update{
		set: `status = ?, ended_at = ?, error_type = ?, error_message = ?,
			input_tokens = ?, output_tokens = ?, cache_creation_input_tokens = ?, cache_read_input_tokens = ?,
			review_state = CASE WHEN ? = 'completed' AND behavior = 'create_new' THEN 'pending' ELSE 'none' END`,
		setArgs: []any{string(p.Status), p.At, p.ErrorType, p.ErrorMessage,
			u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, string(p.Status)},
		cond: `status = 'running'`, Miss: conflict("finish it"),
	}, nil
}

// Cancel cancels a pending or running dream; a pending one, which no
// worker runs, is released with it.
func Cancel(at time.Time) Update {
	return Update{
		set:     `status = 'canceled', ended_at = ?, released_at = CASE WHEN status = 'pending' THEN ? ELSE released_at END`,
		setArgs: []any{at, at}, cond: `status IN ('pending', 'running')`, Miss: teammem.DreamCancelCheck,
	}
}

// Release records that no worker runs a final dream any more.
func Release(at time.Time) Update {
	return Update{set: `released_at = ?`, setArgs: []any{at},
		cond: `status IN ('completed', 'failed', 'canceled') AND released_at IS NULL`, Miss: teammem.DreamReleaseCheck}
}

// Archive archives a final dream.
func Archive(at time.Time) Update {
	return Update{set: `archived_at = ?`, setArgs: []any{at},
		cond: `status IN ('completed', 'failed', 'canceled') AND archived_at IS NULL`, Miss: teammem.DreamArchiveCheck}
}

// OutputSet records a dream's output store, once.
func OutputSet(p teammem.DreamOutputParams) Update {
	return Update{set: `output_space_id = ?, output_store_uid = ?`, setArgs: []any{p.SpaceID, p.StoreUID},
		cond: `output_space_id = 0 OR output_space_id = ?`, condArgs: []any{p.SpaceID}, Miss: conflict("record a second output store")}
}

// ReviewProposal links a pending review to a held Apply's proposal, or
// unlinks it (p.To 0), when it is linked to p.From.
func ReviewProposal(p teammem.DreamProposalParams) Update {
	return Update{set: `review_proposal_id = ?`, setArgs: []any{p.To},
		cond: `review_state = 'pending' AND review_proposal_id = ?`, condArgs: []any{p.From},
		Miss: func(d teammem.Dream) error { return teammem.DreamProposalConflict(d, p) }}
}

// ReviewSet moves a dream's review from p.From to p.To.
func ReviewSet(p teammem.DreamReviewParams) Update {
	return Update{set: `review_state = ?, review_at = ?, review_by = ?`, setArgs: []any{string(p.To), p.At, p.By},
		cond: `review_state = ?`, condArgs: []any{string(p.From)},
		Miss: func(d teammem.Dream) error { return teammem.DreamReviewConflict(d, p) }}
}
