package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

const spaceColumns = `id, org_id, repo_id, scope, coalesce(user_id, 0), version, checksum, entry_count, total_bytes, purged_through, updated_at, uid`

func scanSpace(row rowScanner) (teammem.Space, error) {
	var s teammem.Space
	var updated int64
	if err := row.Scan(&s.ID, &s.OrgID, &s.RepoID, &s.Scope, &s.UserID, &s.Version, &s.Checksum, &s.EntryCount,
		&s.TotalBytes, &s.PurgedThrough, &updated, &s.UID); err != nil {
		return s, interpret(err)
	}
	s.UpdatedAt = fromMicros(updated)
	return s, nil
}

func userArg(ref teammem.SpaceRef) sql.NullInt64 {
	return sql.NullInt64{Int64: ref.UserID, Valid: ref.Scope == teammem.ScopePersonal}
}

// SpaceGet returns a space head.
func (db *DB) SpaceGet(ctx context.Context, orgID int64, ref teammem.SpaceRef) (teammem.Space, error) {
	return scanSpace(db.queryRow(ctx, `SELECT `+spaceColumns+` FROM spaces
		WHERE org_id = ? AND repo_id = ? AND scope = ? AND coalesce(user_id, 0) = ?`, orgID, ref.RepoID, ref.Scope, ref.UserID))
}

// SpaceList lists every space of every org.
func (db *DB) SpaceList(ctx context.Context) ([]teammem.Space, error) {
	rows, err := db.query(ctx, `SELECT `+spaceColumns+` FROM spaces ORDER BY id`)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.Space
	for rows.Next() {
		sp, err := scanSpace(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, interpret(rows.Err())
}

// SpaceEnsure returns a space head, creating an empty space when missing.
func (db *DB) SpaceEnsure(ctx context.Context, orgID int64, ref teammem.SpaceRef) (teammem.Space, error) {
	if s, err := db.SpaceGet(ctx, orgID, ref); teammem.ErrorCode(err) != teammem.ENotFound {
		return s, err
	}
	_, err := db.w.ExecContext(ctx, `INSERT INTO spaces (org_id, repo_id, scope, user_id, checksum, updated_at)
		SELECT ?, id, ?, ?, ?, ? FROM repos WHERE org_id = ? AND id = ?
			AND (? IS NULL OR EXISTS (SELECT 1 FROM users WHERE org_id = ? AND id = ?))
		ON CONFLICT DO NOTHING`, orgID, ref.Scope, userArg(ref), teammem.EmptySpaceChecksum, micros(now()), orgID, ref.RepoID,
		userArg(ref), orgID, ref.UserID)
	if err != nil {
		return teammem.Space{}, interpret(err)
	}
	return scanSpace(db.w.QueryRowContext(ctx, `SELECT `+spaceColumns+` FROM spaces
		WHERE org_id = ? AND repo_id = ? AND scope = ? AND coalesce(user_id, 0) = ?`, orgID, ref.RepoID, ref.Scope, ref.UserID))
}

// The statements of every write, prepared once on the writer connection.
const (
	selectSpaceSQL    = `SELECT ` + spaceColumns + ` FROM spaces WHERE org_id = ? AND id = ?`
	currentContentSQL = `SELECT content FROM entries WHERE space_id = ? AND key = ? AND deleted = 0`
	upsertEntrySQL    = `INSERT INTO entries (org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (space_id, key) DO UPDATE SET content = excluded.content, checksum = excluded.checksum, size = excluded.size,
			version = excluded.version, deleted = excluded.deleted, author_id = excluded.author_id,
			client_id = excluded.client_id, updated_at = excluded.updated_at`
	insertVersionSQL = `INSERT INTO entry_versions (org_id, space_id, key, version, op, checksum, size, content, author_id, client_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateHeadSQL = `UPDATE spaces SET version = ?, checksum = ?, entry_count = ?, total_bytes = ?, updated_at = ?
		WHERE org_id = ? AND id = ?`
)

var writeQueries = []string{selectSpaceSQL, headsSQL, currentContentSQL, upsertEntrySQL, insertVersionSQL, updateHeadSQL}

// stmtQuerier runs queries through prepared statements of a transaction.
type stmtQuerier struct {
	prep func(query string) (*sql.Stmt, error)
}

func (q stmtQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.prep(query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// SpaceApply runs fn under the space's write lock and commits its changes.
// The writer connection's IMMEDIATE transaction is the lock.
func (db *DB) SpaceApply(ctx context.Context, orgID, spaceID int64, actor teammem.Actor, fn teammem.ApplyFunc) (teammem.Space, error) {
	// Prepare before BEGIN: the writer pool has one connection, which the
	// transaction then holds.
	stmts := map[string]*sql.Stmt{}
	for _, q := range writeQueries {
		st, err := db.stmt(ctx, db.w, q)
		if err != nil {
			return teammem.Space{}, err
		}
		stmts[q] = st
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return teammem.Space{}, interpret(err)
	}
	defer tx.Rollback()
	prep := func(query string) (*sql.Stmt, error) {
		st, ok := stmts[query]
		if !ok {
			return nil, fmt.Errorf("statement not prepared: %s", query)
		}
		return tx.StmtContext(ctx, st), nil
	}
	st, _ := prep(selectSpaceSQL)
	space, err := scanSpace(st.QueryRowContext(ctx, orgID, spaceID))
	if err != nil {
		return space, err
	}
	heads, cached := db.heads.Get(space)
	if !cached {
		if heads, err = entryHeads(ctx, stmtQuerier{prep}, orgID, spaceID); err != nil {
			return space, err
		}
	}
	current := func(key string) (string, error) {
		st, _ := prep(currentContentSQL)
		var content string
		err := st.QueryRowContext(ctx, spaceID, key).Scan(&content)
		return content, interpret(err)
	}
	upsert, _ := prep(upsertEntrySQL)
	record, _ := prep(insertVersionSQL)
	head, _ := prep(updateHeadSQL)
	changes, err := fn(space, heads, current)
	if err != nil || len(changes) == 0 {
		if err == nil && !cached {
			db.heads.Put(space, heads)
		}
		return space, err
	}
	at := now()
	version := space.Version + 1
	newHeads := teammem.ApplyChanges(heads, changes, version, actor, at)
	author := sql.NullInt64{Int64: actor.UserID, Valid: actor.UserID != 0}
	for _, c := range changes {
		h := newHeads[c.Key]
		var content sql.NullString
		if c.Op != teammem.OpDelete {
			content = sql.NullString{String: c.Content, Valid: true}
		}
		if _, err := upsert.ExecContext(ctx,
			orgID, spaceID, c.Key, content, h.Checksum, h.Size, version, h.Deleted, author, actor.ClientID, micros(at)); err != nil {
			return space, fmt.Errorf("write entry %q: %w", c.Key, interpret(err))
		}
		if _, err := record.ExecContext(ctx,
			orgID, spaceID, c.Key, version, c.Op, h.Checksum, h.Size, content, author, actor.ClientID, micros(at)); err != nil {
			return space, fmt.Errorf("record version of %q: %w", c.Key, interpret(err))
		}
	}
	space.Version = version
	space.Checksum, space.EntryCount, space.TotalBytes = teammem.Summarize(newHeads)
	space.UpdatedAt = at
	if _, err := head.ExecContext(ctx, space.Version, space.Checksum, space.EntryCount, space.TotalBytes, micros(at), orgID, spaceID); err != nil {
		return space, interpret(err)
	}
	if err := tx.Commit(); err != nil {
		// The commit may or may not have happened: forget the space.
		db.heads.Drop(spaceID)
		return space, interpret(err)
	}
	db.heads.Put(space, newHeads)
	return space, nil
}

// TombstonesPurge deletes tombstones last changed before cutoff.
func (db *DB) TombstonesPurge(ctx context.Context, cutoff time.Time) (int, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, interpret(err)
	}
	defer tx.Rollback()
	// The writer transaction holds the write lock, so no SpaceApply can store
	// heads until this commits; whatever is cached now may name tombstones
	// about to go.
	defer db.heads.Reset()
	if _, err := tx.ExecContext(ctx, `UPDATE spaces SET purged_through = max(purged_through, (
			SELECT max(e.version) FROM entries e WHERE e.space_id = spaces.id AND e.deleted = 1 AND e.updated_at < ?))
		WHERE id IN (SELECT space_id FROM entries WHERE deleted = 1 AND updated_at < ?)`, micros(cutoff), micros(cutoff)); err != nil {
		return 0, interpret(err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM entries WHERE deleted = 1 AND updated_at < ?`, micros(cutoff))
	if err != nil {
		return 0, interpret(err)
	}
	n, _ := res.RowsAffected()
	return int(n), interpret(tx.Commit())
}
