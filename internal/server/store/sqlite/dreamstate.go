package sqlite

import (
	"context"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// dreamUpdate is one conditional transition: SET set WHERE the dream is
// the org's and cond holds. When no row changed, miss decides from the
// dream as stored: nil returns it unchanged (an idempotent repeat).
type dreamUpdate struct {
	set     string
	setArgs []any
	cond    string
	condArg []any
	miss    func(teammem.Dream) error
	// before, when set, runs first in the transaction and may refuse.
	before func(tx *turnTx, d teammem.Dream) error
}

// dreamTransition runs u in one write transaction and returns the dream
// as stored afterwards.
func (db *DB) dreamTransition(ctx context.Context, orgID int64, id string, u dreamUpdate) (teammem.Dream, error) {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.Dream{}, err
	}
	defer tx.Rollback()
	d, err := dreamGet(ctx, tx, orgID, id)
	if err != nil {
		return d, err
	}
	if u.before != nil {
		if err := u.before(tx, d); err != nil {
			return d, err
		}
	}
	args := append(append(append([]any{}, u.setArgs...), orgID, id), u.condArg...)
	res, err := tx.ExecContext(ctx, `UPDATE dreams SET `+u.set+` WHERE org_id = ? AND id = ? AND (`+u.cond+`)`, args...)
	if err != nil {
		return d, interpret(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return d, u.miss(d)
	}
	if d, err = dreamGet(ctx, tx, orgID, id); err != nil {
		return d, err
	}
	return d, interpret(tx.Commit())
}

// DreamStart moves a pending dream to running within the org's limit.
func (db *DB) DreamStart(ctx context.Context, orgID int64, id string, p teammem.DreamStartParams) (teammem.Dream, error) {
	base, err := teammem.EncodeDreamBase(p.Base)
	if err != nil {
		return teammem.Dream{}, err
	}
	at := micros(p.At)
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set: `status = 'running', started_at = ?, heartbeat_at = ?, base = ?, run_session_id = ?,
			output_space_id = CASE WHEN ? <> 0 THEN ? ELSE output_space_id END,
			output_store_uid = CASE WHEN ? <> '' THEN ? ELSE output_store_uid END`,
		setArgs: []any{at, at, base, p.RunSessionID, p.OutputSpaceID, p.OutputSpaceID, p.OutputStoreUID, p.OutputStoreUID},
		cond:    `status = 'pending'`,
		miss:    func(d teammem.Dream) error { return teammem.DreamTransitionConflict(d, "start it") },
		before: func(tx *turnTx, d teammem.Dream) error {
			if p.MaxRunning <= 0 || d.Status != teammem.DreamPending {
				return nil
			}
			var running int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM dreams WHERE org_id = ? AND status = 'running'`, orgID).Scan(&running); err != nil {
				return interpret(err)
			}
			if running >= p.MaxRunning {
				return teammem.DreamOrgBusy(p.MaxRunning)
			}
			return nil
		},
	})
}

// DreamProgress records a heartbeat and usage.
func (db *DB) DreamProgress(ctx context.Context, orgID int64, id string, p teammem.DreamProgressParams) (teammem.Dream, error) {
	u := p.Usage
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set:     `heartbeat_at = ?, input_tokens = ?, output_tokens = ?, cache_creation_input_tokens = ?, cache_read_input_tokens = ?`,
		setArgs: []any{micros(p.At), u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens},
		cond:    `status = 'running' OR status = 'canceled' AND released_at IS NULL`,
		miss:    func(d teammem.Dream) error { return teammem.DreamTransitionConflict(d, "record progress") },
	})
}

// DreamFinish ends a running dream.
func (db *DB) DreamFinish(ctx context.Context, orgID int64, id string, p teammem.DreamFinishParams) (teammem.Dream, error) {
	if err := teammem.DreamFinishCheck(p); err != nil {
		return teammem.Dream{}, err
	}
	u := p.Usage
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set: `status = ?, ended_at = ?, error_type = ?, error_message = ?,
			input_tokens = ?, output_tokens = ?, cache_creation_input_tokens = ?, cache_read_input_tokens = ?,
			review_state = CASE WHEN ? = 'completed' AND behavior = 'create_new' THEN 'pending' ELSE 'none' END`,
		setArgs: []any{string(p.Status), micros(p.At), p.ErrorType, p.ErrorMessage,
			u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, string(p.Status)},
		cond: `status = 'running'`,
		miss: func(d teammem.Dream) error { return teammem.DreamTransitionConflict(d, "finish it") },
	})
}

// DreamCancel cancels a pending or running dream.
func (db *DB) DreamCancel(ctx context.Context, orgID int64, id string, at time.Time) (teammem.Dream, error) {
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set:     `status = 'canceled', ended_at = ?, released_at = CASE WHEN status = 'pending' THEN ? ELSE released_at END`,
		setArgs: []any{micros(at), micros(at)},
		cond:    `status IN ('pending', 'running')`,
		miss:    teammem.DreamCancelCheck,
	})
}

// DreamRelease records that no worker runs a final dream any more.
func (db *DB) DreamRelease(ctx context.Context, orgID int64, id string, at time.Time) (teammem.Dream, error) {
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set: `released_at = ?`, setArgs: []any{micros(at)},
		cond: `status IN ('completed', 'failed', 'canceled') AND released_at IS NULL`,
		miss: teammem.DreamReleaseCheck,
	})
}

// DreamArchive archives a final dream.
func (db *DB) DreamArchive(ctx context.Context, orgID int64, id string, at time.Time) (teammem.Dream, error) {
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set: `archived_at = ?`, setArgs: []any{micros(at)},
		cond: `status IN ('completed', 'failed', 'canceled') AND archived_at IS NULL`,
		miss: teammem.DreamArchiveCheck,
	})
}

// DreamOutputSet records a dream's output store once.
func (db *DB) DreamOutputSet(ctx context.Context, orgID int64, id string, p teammem.DreamOutputParams) (teammem.Dream, error) {
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set: `output_space_id = ?, output_store_uid = ?`, setArgs: []any{p.SpaceID, p.StoreUID},
		cond: `output_space_id = 0 OR output_space_id = ?`, condArg: []any{p.SpaceID},
		miss: func(d teammem.Dream) error { return teammem.DreamTransitionConflict(d, "record a second output store") },
	})
}

// DreamReviewSet moves a dream's review state.
func (db *DB) DreamReviewSet(ctx context.Context, orgID int64, id string, p teammem.DreamReviewParams) (teammem.Dream, error) {
	return db.dreamTransition(ctx, orgID, id, dreamUpdate{
		set: `review_state = ?, review_at = ?, review_by = ?`, setArgs: []any{string(p.To), micros(p.At), p.By},
		cond: `review_state = ?`, condArg: []any{string(p.From)},
		miss: func(d teammem.Dream) error { return teammem.DreamReviewConflict(d, p) },
	})
}
