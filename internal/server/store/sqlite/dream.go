package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/teammem/teammem/internal/server/store/dreamsql"
	"github.com/teammem/teammem/internal/teammem"
)

// scanDream scans a row of dreamsql.Columns.
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
		&d.Review.State, &reviewed, &d.Review.By, &d.Review.ProposalID); err != nil {
		return d, interpret(err)
	}
	d.CreatedAt, d.StartedAt, d.EndedAt = fromMicros(created), ptrFromMicros(started), ptrFromMicros(ended)
	d.ArchivedAt, d.ReleasedAt, d.HeartbeatAt, d.Review.At = ptrFromMicros(archived), ptrFromMicros(released), ptrFromMicros(heartbeat), ptrFromMicros(reviewed)
	return d, teammem.DecodeDreamColumns(&d, sessions, base)
}

// dreamArgs converts dreamsql's time arguments to the microseconds SQLite
// stores.
func dreamArgs(args []any) []any {
	for i, a := range args {
		if t, ok := a.(time.Time); ok {
			args[i] = micros(t)
		}
	}
	return args
}

// DreamCreate stores a pending dream.
func (db *DB) DreamCreate(ctx context.Context, orgID int64, d teammem.Dream) (teammem.Dream, error) {
	q, args, err := dreamsql.Insert(orgID, d)
	if err != nil {
		return d, err
	}
	err = interpret(db.writing(ctx, orgID, func() error {
		_, err := db.w.ExecContext(ctx, q, dreamArgs(args)...)
		return err
	}))
	if teammem.ErrorCode(err) == teammem.EConflict && d.Behavior == teammem.DreamUpdateExisting {
		var other string
		_ = db.queryRow(ctx, dreamsql.Holder, orgID, d.InputSpaceID).Scan(&other)
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
	d, err := scanDream(q.QueryRowContext(ctx, dreamsql.Get, orgID, id))
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return d, teammem.Errorf(teammem.ENotFound, "dream %s not found", id)
	}
	return d, err
}

// DreamList pages an org's dreams, newest first.
func (db *DB) DreamList(ctx context.Context, orgID int64, f teammem.DreamFilter) ([]teammem.Dream, error) {
	q, args := dreamsql.List(orgID, f)
	rows, err := db.r.QueryContext(ctx, q, dreamArgs(args)...)
	return collect(rows, err, scanDream)
}

// DreamsStale lists running dreams whose heartbeat is older than cutoff.
func (db *DB) DreamsStale(ctx context.Context, cutoff time.Time, limit int) ([]teammem.Dream, error) {
	q, args := dreamsql.Stale(cutoff, limit)
	rows, err := db.r.QueryContext(ctx, q, dreamArgs(args)...)
	return collect(rows, err, scanDream)
}

// DreamsPending lists pending dreams of every org.
func (db *DB) DreamsPending(ctx context.Context, limit int) ([]teammem.Dream, error) {
	q, args := dreamsql.Pending(limit)
	rows, err := db.r.QueryContext(ctx, q, args...)
	return collect(rows, err, scanDream)
}
