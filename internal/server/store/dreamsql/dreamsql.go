// Package dreamsql is the SQL of the dreams table, written once for both
// drivers: the columns, the insert, the list query a DreamFilter builds
// and every status transition as a conditional UPDATE. Queries use ?
// placeholders and time.Time arguments; each driver numbers the
// placeholders or converts the times as its database wants, runs them in
// its own transaction and scans the rows.
package dreamsql

import (
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Columns are a dream row's columns, in the order the drivers scan them.
const Columns = `id, org_id, input_space_id, input_store_uid, input_owner_id, output_space_id, output_store_uid, session_ids,
	model, model_speed, instructions, behavior, status, error_type, error_message,
	input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, run_session_id,
	created_at, started_at, ended_at, archived_at, released_at, heartbeat_at, creator_user_id, creator_key_id, base,
	review_state, review_at, review_by, review_proposal_id`

// Get reads one dream of an org (args: org id, dream id).
const Get = `SELECT ` + Columns + ` FROM dreams WHERE org_id = ? AND id = ?`

// Holder finds the update_existing dream holding a store (args: org id,
// space id).
const Holder = `SELECT id FROM dreams WHERE org_id = ? AND input_space_id = ? AND behavior = 'update_existing' AND released_at IS NULL`

// Running counts an org's running dreams (args: org id).
const Running = `SELECT count(*) FROM dreams WHERE org_id = ? AND status = 'running'`

// Insert stores a pending dream; the partial unique index
// dreams_store_held refuses a second update_existing dream of a store.
func Insert(orgID int64, d teammem.Dream) (string, []any, error) {
	sessions, base, err := teammem.EncodeDreamColumns(d)
	if err != nil {
		return "", nil, err
	}
	return `INSERT INTO dreams (id, org_id, input_space_id, input_store_uid, input_owner_id, session_ids,
		model, model_speed, instructions, behavior, status, created_at, creator_user_id, creator_key_id, base, review_state)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, 'none')`,
		[]any{d.ID, orgID, d.InputSpaceID, d.InputStoreUID, d.InputOwnerID, sessions, d.Model, d.ModelSpeed, d.Instructions,
			string(d.Behavior), d.CreatedAt, d.CreatorUserID, d.CreatorKeyID, base}, nil
}

// List is the query of DreamList: an org's dreams as f narrows them,
// newest first.
func List(orgID int64, f teammem.DreamFilter) (string, []any) {
	where := []string{"org_id = ?"}
	args := []any{orgID}
	add := func(cond string, a ...any) { where, args = append(where, cond), append(args, a...) }
	switch {
	case f.ViewerUserID > 0:
		add("(input_owner_id = 0 OR input_owner_id = ?)", f.ViewerUserID)
	case f.ViewerUserID < 0:
		add("input_owner_id = 0")
	}
	if !f.IncludeArchived {
		add("archived_at IS NULL")
	}
	for _, c := range []struct {
		op string
		t  *time.Time
	}{{">", f.CreatedGT}, {"<", f.CreatedLT}, {">=", f.CreatedGTE}, {"<=", f.CreatedLTE}} {
		if c.t != nil {
			add("created_at "+c.op+" ?", *c.t)
		}
	}
	if f.ProposalID != 0 {
		add("review_proposal_id = ?", f.ProposalID)
	}
	if len(f.Statuses) > 0 {
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
		where = append(where, "status IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.Statuses)), ", ")+")")
	}
	if f.AfterID != "" {
		add("(created_at < ? OR created_at = ? AND id < ?)", f.AfterCreatedAt, f.AfterCreatedAt, f.AfterID)
	}
	return `SELECT ` + Columns + ` FROM dreams WHERE ` + strings.Join(where, " AND ") + ` ORDER BY created_at DESC, id DESC LIMIT ?`,
		append(args, teammem.DreamListLimit(f.Limit))
}

// Stale is the query of DreamsStale: running dreams of every org whose
// heartbeat is older than cutoff, oldest first.
func Stale(cutoff time.Time, limit int) (string, []any) {
	return across(`status = 'running' AND heartbeat_at < ?`, cutoff, limit)
}

// Pending is the query of DreamsPending: pending dreams of every org,
// oldest first.
func Pending(limit int) (string, []any) { return across(`status = 'pending'`, limit) }

func across(cond string, args ...any) (string, []any) {
	return `SELECT ` + Columns + ` FROM dreams WHERE ` + cond + ` ORDER BY created_at, id LIMIT ?`, args
}
