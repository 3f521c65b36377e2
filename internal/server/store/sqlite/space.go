package sqlite

import (
	"context"
	"database/sql"
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
	return collect(rows, err, scanSpace)
}

// SpaceEnsure returns a space head, creating an empty space when missing.
func (db *DB) SpaceEnsure(ctx context.Context, orgID int64, ref teammem.SpaceRef) (teammem.Space, error) {
	if s, err := db.SpaceGet(ctx, orgID, ref); teammem.ErrorCode(err) != teammem.ENotFound {
		return s, err
	}
	var s teammem.Space
	err := db.writing(ctx, orgID, func() error {
		_, err := db.w.ExecContext(ctx, `INSERT INTO spaces (org_id, repo_id, scope, user_id, checksum, updated_at)
			SELECT ?, id, ?, ?, ?, ? FROM repos WHERE org_id = ? AND id = ?
				AND (? IS NULL OR EXISTS (SELECT 1 FROM users WHERE org_id = ? AND id = ?))
			ON CONFLICT DO NOTHING`, orgID, ref.Scope, userArg(ref), teammem.EmptySpaceChecksum, micros(now()), orgID, ref.RepoID,
			userArg(ref), orgID, ref.UserID)
		if err != nil {
			return interpret(err)
		}
		s, err = scanSpace(db.w.QueryRowContext(ctx, `SELECT `+spaceColumns+` FROM spaces
			WHERE org_id = ? AND repo_id = ? AND scope = ? AND coalesce(user_id, 0) = ?`, orgID, ref.RepoID, ref.Scope, ref.UserID))
		return err
	})
	return s, err
}

// The statements of every write, prepared once on the writer connection.
const (
	// lockSpaceSQL reads the head and whether the space is an archived
	// store. The IMMEDIATE transaction already holds the one write lock, so
	// an archive (an update on the same writer) is before or after it.
	lockSpaceSQL = `SELECT ` + spaceColumns + `, EXISTS (SELECT 1 FROM memory_stores m
		WHERE m.space_id = spaces.id AND m.archived_at IS NOT NULL) FROM spaces WHERE org_id = ? AND id = ?`
	currentContentSQL = `SELECT content FROM entries WHERE space_id = ? AND key = ? AND deleted = 0`
	// upsertEntrySQL keeps a memory's creation time while its id lives on,
	// under this key or (a rename) another one: a tombstone keeps its id.
	upsertEntrySQL = `INSERT INTO entries (org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at, memory_id,
			overlap, memory_created_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, coalesce((SELECT min(c.memory_created_at) FROM entries c
			WHERE c.space_id = ?2 AND c.memory_id = ?12 AND c.memory_id <> ''), ?11))
		ON CONFLICT (space_id, key) DO UPDATE SET content = excluded.content, checksum = excluded.checksum, size = excluded.size,
			version = excluded.version, deleted = excluded.deleted, author_id = excluded.author_id,
			client_id = excluded.client_id, updated_at = excluded.updated_at, memory_id = excluded.memory_id, overlap = excluded.overlap,
			memory_created_at = excluded.memory_created_at`
	insertVersionSQL = `INSERT INTO entry_versions (org_id, space_id, key, version, op, checksum, size, content, author_id, client_id, created_at,
			memory_id, api_key_id, api, session_id, findings)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateHeadSQL = `UPDATE spaces SET version = ?, checksum = ?, entry_count = ?, total_bytes = ?, updated_at = ?
		WHERE org_id = ? AND id = ?`
)

const insertAuditSQL = `INSERT INTO audit_events (org_id, actor_id, action, repo, target, details, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`

var writeQueries = []string{lockSpaceSQL, headsSQL, currentContentSQL, upsertEntrySQL, insertVersionSQL, updateHeadSQL, insertAuditSQL}

// CanAnnounce reports false: SQLite serves one process, whose broker
// publishes after the commit.
func (db *DB) CanAnnounce() bool { return false }

// HeadsCache is the store's cache of entry heads.
func (db *DB) HeadsCache() *teammem.HeadsCache { return db.heads }

// SpaceWrite opens a space's write transaction on the writer connection,
// in a writer turn of the org (turns.go): an IMMEDIATE transaction, which
// every write of every org shares. That is why nothing slow (no secret
// scan) may run inside it.
func (db *DB) SpaceWrite(ctx context.Context, orgID, spaceID int64, timing *teammem.WriteTiming) (teammem.WriteTx, error) {
	asked := time.Now()
	behind, err := db.turns.acquireBehind(ctx, orgID)
	if err != nil {
		return nil, interpret(err)
	}
	admitted := time.Now()
	timing.Waited(admitted.Sub(asked))
	timing.WaitedBehindOthers(behind)
	// Prepare before BEGIN: the writer pool has one connection, which the
	// transaction then holds.
	stmts := make(map[string]*sql.Stmt, len(writeQueries))
	for _, q := range writeQueries {
		st, err := db.stmt(ctx, db.w, q)
		if err != nil {
			db.turns.release()
			return nil, err
		}
		stmts[q] = st
	}
	db.queries.Add(1)
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		db.turns.release()
		return nil, interpret(err)
	}
	return &writeTx{tx: &turnTx{Tx: tx, turns: db.turns, ckpt: db.ckpt, timing: timing, admitted: admitted},
		stmts: stmts, orgID: orgID, spaceID: spaceID}, nil
}

// writeTx is the SQL of one SQLite write, through statements prepared once
// on the writer connection.
type writeTx struct {
	tx             *turnTx
	stmts          map[string]*sql.Stmt
	orgID, spaceID int64
}

func (w *writeTx) stmt(ctx context.Context, query string) *sql.Stmt {
	return w.tx.StmtContext(ctx, w.stmts[query])
}

func (w *writeTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return w.stmt(ctx, query).QueryContext(ctx, args...)
}

func (w *writeTx) LockSpace(ctx context.Context) (teammem.Space, error) {
	var archived bool
	sp, err := scanSpace(scanExtra{w.stmt(ctx, lockSpaceSQL).QueryRowContext(ctx, w.orgID, w.spaceID), []any{&archived}})
	sp.Archived = archived
	return sp, err
}

func (w *writeTx) EntryHeads(ctx context.Context) (map[string]teammem.Entry, error) {
	return entryHeads(ctx, w, w.orgID, w.spaceID)
}

func (w *writeTx) Content(ctx context.Context, key string) (string, error) {
	var content string
	err := w.stmt(ctx, currentContentSQL).QueryRowContext(ctx, w.spaceID, key).Scan(&content)
	return content, interpret(err)
}

func (w *writeTx) PutEntry(ctx context.Context, c teammem.EntryChange, h teammem.Entry, head teammem.Space, actor teammem.Actor) error {
	var content sql.NullString
	if c.Op != teammem.OpDelete {
		content = sql.NullString{String: c.Content, Valid: true}
		w.tx.bytes += 2 * int64(len(c.Content)) // the entry and its version
	}
	author := sql.NullInt64{Int64: actor.UserID, Valid: actor.UserID != 0}
	at := micros(head.UpdatedAt)
	if _, err := w.stmt(ctx, upsertEntrySQL).ExecContext(ctx,
		w.orgID, w.spaceID, c.Key, content, h.Checksum, h.Size, head.Version, h.Deleted, author, actor.ClientID, at, h.MemoryID, c.Overlap); err != nil {
		return interpret(err)
	}
	_, err := w.stmt(ctx, insertVersionSQL).ExecContext(ctx,
		w.orgID, w.spaceID, c.Key, head.Version, c.Op, h.Checksum, h.Size, content, author, actor.ClientID, at,
		h.MemoryID, actor.KeyID, actor.API, actor.SessionID, teammem.EncodeFindings(c.Findings))
	return interpret(err)
}

func (w *writeTx) PutHead(ctx context.Context, head teammem.Space) error {
	_, err := w.stmt(ctx, updateHeadSQL).ExecContext(ctx, head.Version, head.Checksum, head.EntryCount, head.TotalBytes,
		micros(head.UpdatedAt), w.orgID, w.spaceID)
	return interpret(err)
}

func (w *writeTx) PutAudit(ctx context.Context, e teammem.AuditEvent) error {
	details, err := auditDetails(e)
	if err != nil {
		return err
	}
	_, err = w.stmt(ctx, insertAuditSQL).ExecContext(ctx, w.orgID, sql.NullInt64{Int64: e.ActorID, Valid: e.ActorID != 0},
		e.Action, e.Repo, e.Target, details, micros(e.CreatedAt))
	return interpret(err)
}

func (w *writeTx) Announce(context.Context, teammem.Announcement) error { return nil }

func (w *writeTx) Commit(context.Context) error { return interpret(w.tx.Commit()) }

func (w *writeTx) Rollback(context.Context) { _ = w.tx.Rollback() }

// TombstonesPurge deletes tombstones last changed before cutoff.
func (db *DB) TombstonesPurge(ctx context.Context, cutoff time.Time) (int, error) {
	// Tombstones of every org at once: the server's own turn.
	tx, err := db.begin(ctx, 0)
	if err != nil {
		return 0, err
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

// WriteSQL is the SQL of one write as the store runs it, in its order:
// lock the space's head (with whether it is an archived store), upsert an
// entry, insert its version, store the new head. The bench's baseline of
// "the raw write that stores the same rows" runs exactly these.
var WriteSQL = struct{ Lock, Upsert, Version, Head string }{lockSpaceSQL, upsertEntrySQL, insertVersionSQL, updateHeadSQL}
