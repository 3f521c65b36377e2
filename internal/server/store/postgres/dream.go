package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/server/store/dreamsql"
	"github.com/teammem/teammem/internal/teammem"
)

// scanDream scans a row of dreamsql.Columns.
func scanDream(row pgx.Row) (teammem.Dream, error) {
	var d teammem.Dream
	var sessions, base, behavior, status, review string
	u := &d.Usage
	if err := row.Scan(&d.ID, &d.OrgID, &d.InputSpaceID, &d.InputStoreUID, &d.InputOwnerID, &d.OutputSpaceID, &d.OutputStoreUID, &sessions,
		&d.Model, &d.ModelSpeed, &d.Instructions, &behavior, &status, &d.ErrorType, &d.ErrorMessage,
		&u.InputTokens, &u.OutputTokens, &u.CacheCreationInputTokens, &u.CacheReadInputTokens, &d.RunSessionID,
		&d.CreatedAt, &d.StartedAt, &d.EndedAt, &d.ArchivedAt, &d.ReleasedAt, &d.HeartbeatAt, &d.CreatorUserID, &d.CreatorKeyID, &base,
		&review, &d.Review.At, &d.Review.By, &d.Review.ProposalID); err != nil {
		return d, interpret(err)
	}
	d.Behavior, d.Status, d.Review.State = teammem.DreamBehavior(behavior), teammem.DreamStatus(status), teammem.DreamReviewState(review)
	d.CreatedAt = d.CreatedAt.UTC()
	for _, t := range []**time.Time{&d.StartedAt, &d.EndedAt, &d.ArchivedAt, &d.ReleasedAt, &d.HeartbeatAt, &d.Review.At} {
		if *t != nil {
			u := (*t).UTC()
			*t = &u
		}
	}
	return d, teammem.DecodeDreamColumns(&d, sessions, base)
}

// numbered turns the ? placeholders of dreamsql's queries into $1, $2, ….
func numbered(query string) string {
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// DreamCreate stores a pending dream.
func (db *DB) DreamCreate(ctx context.Context, orgID int64, d teammem.Dream) (teammem.Dream, error) {
	q, args, err := dreamsql.Insert(orgID, d)
	if err != nil {
		return d, err
	}
	_, err = db.pool.Exec(ctx, numbered(q), args...)
	if err = interpret(err); teammem.ErrorCode(err) == teammem.EConflict && d.Behavior == teammem.DreamUpdateExisting {
		var other string
		_ = db.pool.QueryRow(ctx, numbered(dreamsql.Holder), orgID, d.InputSpaceID).Scan(&other)
		return d, teammem.Errorf(teammem.EConflict, "%s", teammem.DreamHeldMessage(d.InputStoreID(), other))
	} else if err != nil {
		return d, err
	}
	return db.DreamGet(ctx, orgID, d.ID)
}

// DreamGet returns one dream of the org.
func (db *DB) DreamGet(ctx context.Context, orgID int64, id string) (teammem.Dream, error) {
	return dreamGet(ctx, db.pool, orgID, id, "")
}

// dreamGet reads a dream; lock is "" or " FOR UPDATE".
func dreamGet(ctx context.Context, q queryRower, orgID int64, id, lock string) (teammem.Dream, error) {
	d, err := scanDream(q.QueryRow(ctx, numbered(dreamsql.Get)+lock, orgID, id))
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return d, teammem.Errorf(teammem.ENotFound, "dream %s not found", id)
	}
	return d, err
}

// dreamsQuery runs a dreamsql list query.
func (db *DB) dreamsQuery(ctx context.Context, q string, args []any) ([]teammem.Dream, error) {
	rows, err := db.pool.Query(ctx, numbered(q), args...)
	return collect(rows, err, scanDream)
}

// DreamList pages an org's dreams, newest first.
func (db *DB) DreamList(ctx context.Context, orgID int64, f teammem.DreamFilter) ([]teammem.Dream, error) {
	q, args := dreamsql.List(orgID, f)
	return db.dreamsQuery(ctx, q, args)
}

// DreamsStale lists running dreams whose heartbeat is older than cutoff.
func (db *DB) DreamsStale(ctx context.Context, cutoff time.Time, limit int) ([]teammem.Dream, error) {
	q, args := dreamsql.Stale(cutoff, limit)
	return db.dreamsQuery(ctx, q, args)
}

// DreamsPending lists pending dreams of every org.
func (db *DB) DreamsPending(ctx context.Context, limit int) ([]teammem.Dream, error) {
	q, args := dreamsql.Pending(limit)
	return db.dreamsQuery(ctx, q, args)
}
