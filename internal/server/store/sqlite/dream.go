package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// dreamColumns are a dream row's columns in scanDream's order.
const dreamColumns = `id, org_id, input_space_id, input_store_uid, input_owner_id, output_space_id, output_store_uid, session_ids,
	model, model_speed, instructions, behavior, status, error_type, error_message,
	input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, run_session_id,
	created_at, started_at, ended_at, archived_at, released_at, heartbeat_at, creator_user_id, creator_key_id, base,
	review_state, review_at, review_by`

func scanDream(row rowScanner) (teammem.Dream, error) {
	var d teammem.Dream
	var sessions, base string
	var created int64
	var started, ended, archived, released, heartbeat, reviewed sql.NullInt64
	u := &d.Usage
	if err := row.Scan(&d.ID, &d.OrgID, &d.InputSpaceID, &d.InputStoreUID, &d.InputOwnerID, &d.OutputSpaceID, &d.OutputStoreUID, &sessions,
		&d.Model, &d.ModelSpeed, &d.Instructions, &d.Behavior, &d.Status, &d.ErrorType, &d.ErrorMessage,
		&u.InputTokens, &u.OutputTokens, &u.CacheCreationInputTokens, &u.CacheReadInputTokens, &d.RunSessionID,
		&created, &started, &ended, &archived, &released, &heartbeat, &d.CreatorUserID, &d.CreatorKeyID, &base,
		&d.Review.State, &reviewed, &d.Review.By); err != nil {
		return d, interpret(err)
	}
	d.CreatedAt, d.StartedAt, d.EndedAt = fromMicros(created), ptrFromMicros(started), ptrFromMicros(ended)
	d.ArchivedAt, d.ReleasedAt, d.HeartbeatAt, d.Review.At = ptrFromMicros(archived), ptrFromMicros(released), ptrFromMicros(heartbeat), ptrFromMicros(reviewed)
	return d, teammem.DecodeDreamColumns(&d, sessions, base)
}

// DreamCreate stores a pending dream; the partial unique index
// dreams_store_held refuses a second update_existing dream of a store.
func (db *DB) DreamCreate(ctx context.Context, orgID int64, d teammem.Dream) (teammem.Dream, error) {
	sessions, base, err := teammem.EncodeDreamColumns(d)
	if err != nil {
		return d, err
	}
	err = db.writing(ctx, orgID, func() error {
		_, err := db.w.ExecContext(ctx, `INSERT INTO dreams (id, org_id, input_space_id, input_store_uid, input_owner_id, session_ids,
			model, model_speed, instructions, behavior, status, created_at, creator_user_id, creator_key_id, base, review_state)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, 'none')`, d.ID, orgID, d.InputSpaceID, d.InputStoreUID, d.InputOwnerID,
			sessions, d.Model, d.ModelSpeed, d.Instructions, string(d.Behavior), micros(d.CreatedAt), d.CreatorUserID, d.CreatorKeyID, base)
		return err
	})
	if err = interpret(err); teammem.ErrorCode(err) == teammem.EConflict && d.Behavior == teammem.DreamUpdateExisting {
		var other string
		_ = db.queryRow(ctx, `SELECT id FROM dreams WHERE org_id = ? AND input_space_id = ? AND behavior = 'update_existing' AND released_at IS NULL`,
			orgID, d.InputSpaceID).Scan(&other)
		return d, teammem.Errorf(teammem.EConflict, "%s", teammem.DreamHeldMessage(d.InputStoreID(), other))
	} else if err != nil {
		return d, err
	}
	return db.DreamGet(ctx, orgID, d.ID)
}

// DreamGet returns one dream of the org.
func (db *DB) DreamGet(ctx context.Context, orgID int64, id string) (teammem.Dream, error) {
	return dreamGet(ctx, db.r, orgID, id)
}

func dreamGet(ctx context.Context, q queryRower, orgID int64, id string) (teammem.Dream, error) {
	d, err := scanDream(q.QueryRowContext(ctx, `SELECT `+dreamColumns+` FROM dreams WHERE org_id = ? AND id = ?`, orgID, id))
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return d, teammem.Errorf(teammem.ENotFound, "dream %s not found", id)
	}
	return d, err
}

// DreamList pages an org's dreams, newest first.
func (db *DB) DreamList(ctx context.Context, orgID int64, f teammem.DreamFilter) ([]teammem.Dream, error) {
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
	for op, t := range map[string]*time.Time{">": f.CreatedGT, "<": f.CreatedLT, ">=": f.CreatedGTE, "<=": f.CreatedLTE} {
		if t != nil {
			add("created_at "+op+" ?", micros(*t))
		}
	}
	if len(f.Statuses) > 0 {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(f.Statuses)), ", ")
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
		where = append(where, "status IN ("+marks+")")
	}
	if f.AfterID != "" {
		c := micros(f.AfterCreatedAt)
		add("(created_at < ? OR created_at = ? AND id < ?)", c, c, f.AfterID)
	}
	args = append(args, teammem.DreamListLimit(f.Limit))
	rows, err := db.r.QueryContext(ctx, `SELECT `+dreamColumns+` FROM dreams WHERE `+strings.Join(where, " AND ")+
		` ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	return collect(rows, err, scanDream)
}

// dreamsAcross lists dreams of every org matching cond, oldest first.
func (db *DB) dreamsAcross(ctx context.Context, cond string, limit int, args ...any) ([]teammem.Dream, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+dreamColumns+` FROM dreams WHERE `+cond+` ORDER BY created_at, id LIMIT ?`,
		append(args, limit)...)
	return collect(rows, err, scanDream)
}

// DreamsStale lists running dreams whose heartbeat is older than cutoff.
func (db *DB) DreamsStale(ctx context.Context, cutoff time.Time, limit int) ([]teammem.Dream, error) {
	return db.dreamsAcross(ctx, `status = 'running' AND heartbeat_at < ?`, limit, micros(cutoff))
}

// DreamsPending lists pending dreams of every org.
func (db *DB) DreamsPending(ctx context.Context, limit int) ([]teammem.Dream, error) {
	return db.dreamsAcross(ctx, `status = 'pending'`, limit)
}
