package sqlite

import (
	"context"
	"database/sql"

	"github.com/teammem/teammem/internal/teammem"
)

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

const headColumns = `e.key, e.checksum, e.size, e.version, e.deleted, coalesce(e.author_id, 0), coalesce(u.handle, ''), e.client_id, e.updated_at, e.memory_id, e.memory_created_at`

func scanHead(row rowScanner, extra ...any) (teammem.Entry, error) {
	var e teammem.Entry
	var updated, created int64
	dest := append([]any{&e.Key, &e.Checksum, &e.Size, &e.Version, &e.Deleted, &e.AuthorID, &e.Author, &e.ClientID, &updated, &e.MemoryID, &created}, extra...)
	if err := row.Scan(dest...); err != nil {
		return e, interpret(err)
	}
	e.UpdatedAt, e.MemoryCreatedAt = fromMicros(updated), fromMicros(created)
	return e, nil
}

// headsSQL reads every entry head of a space.
const headsSQL = `SELECT e.key, e.checksum, e.size, e.version, e.deleted, coalesce(e.author_id, 0), '', e.client_id, e.updated_at, e.memory_id,
		e.memory_created_at
		FROM entries e WHERE e.org_id = ? AND e.space_id = ?`

func entryHeads(ctx context.Context, q querier, orgID, spaceID int64) (map[string]teammem.Entry, error) {
	// The write path never needs the author's handle: no join with users.
	rows, err := q.QueryContext(ctx, headsSQL, orgID, spaceID)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	heads := make(map[string]teammem.Entry)
	for rows.Next() {
		e, err := scanHead(rows)
		if err != nil {
			return nil, err
		}
		heads[e.Key] = e
	}
	return heads, interpret(rows.Err())
}

// EntryHeads returns every entry head of a space, tombstones included.
func (db *DB) EntryHeads(ctx context.Context, orgID, spaceID int64) (map[string]teammem.Entry, error) {
	return entryHeads(ctx, db.reader(ctx), orgID, spaceID)
}

// reader runs queries through statements prepared on the read pool.
func (db *DB) reader(ctx context.Context) stmtQuerier {
	return stmtQuerier{func(query string) (*sql.Stmt, error) { return db.stmt(ctx, db.r, query) }}
}

func collectEntries(rows *sql.Rows, err error, withContent bool) ([]teammem.Entry, error) {
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.Entry
	for rows.Next() {
		var content sql.NullString
		var extra []any
		if withContent {
			extra = append(extra, &content)
		}
		e, err := scanHead(rows, extra...)
		if err != nil {
			return nil, err
		}
		e.Content = content.String
		out = append(out, e)
	}
	return out, interpret(rows.Err())
}

// EntriesList returns the live entries of a space in key order.
func (db *DB) EntriesList(ctx context.Context, orgID, spaceID int64, withContent bool) ([]teammem.Entry, error) {
	cols := headColumns
	if withContent {
		cols += `, e.content`
	}
	rows, err := db.reader(ctx).QueryContext(ctx, `SELECT `+cols+` FROM entries e LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.space_id = ? AND e.deleted = 0 ORDER BY e.key`, orgID, spaceID)
	return collectEntries(rows, err, withContent)
}

// EntryGet returns one live entry with content.
func (db *DB) EntryGet(ctx context.Context, orgID, spaceID int64, key string) (teammem.Entry, error) {
	var content string
	e, err := scanHead(db.queryRow(ctx, `SELECT `+headColumns+`, e.content FROM entries e LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.space_id = ? AND e.key = ? AND e.deleted = 0`, orgID, spaceID, key), &content)
	e.Content = content
	return e, err
}

// ChangesList returns the entries and tombstones changed after since.
func (db *DB) ChangesList(ctx context.Context, orgID, spaceID, since int64) ([]teammem.Entry, error) {
	rows, err := db.query(ctx, `SELECT `+headColumns+`, e.content, e.overlap FROM entries e LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.space_id = ? AND e.version > ? ORDER BY e.version, e.key`, orgID, spaceID, since)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.Entry
	for rows.Next() {
		var content sql.NullString
		var overlap bool
		e, err := scanHead(rows, &content, &overlap)
		if err != nil {
			return nil, err
		}
		e.Content, e.Overlap = content.String, overlap
		out = append(out, e)
	}
	return out, interpret(rows.Err())
}

// versionColumns are a version's columns; the redactor's handle and the
// writing key's name come from subqueries so that the version queries keep a single join.
const versionColumns = `v.key, v.version, v.op, v.checksum, v.size, coalesce(u.handle, ''), v.client_id, v.created_at,
	v.redacted_at, coalesce((SELECT r.handle FROM users r WHERE r.id = v.redacted_by), ''),
	v.id, v.memory_id, v.api_key_id,
	coalesce((SELECT k.name FROM api_keys k WHERE k.id = v.api_key_id AND k.org_id = v.org_id), ''),
	v.api, v.session_id, coalesce(v.author_id, 0), v.space_id, v.findings, coalesce(v.redacted_by, 0)`

func scanVersion(row rowScanner, extra ...any) (teammem.EntryVersion, error) {
	var v teammem.EntryVersion
	var created int64
	var redacted sql.NullInt64
	var findings string
	if err := row.Scan(append([]any{&v.Key, &v.Version, &v.Op, &v.Checksum, &v.Size, &v.Author, &v.ClientID, &created,
		&redacted, &v.RedactedBy,
		&v.ID, &v.MemoryID, &v.KeyID, &v.KeyName, &v.API, &v.SessionID, &v.AuthorID, &v.SpaceID, &findings, &v.RedactedByID}, extra...)...); err != nil {
		return v, interpret(err)
	}
	v.Findings = teammem.DecodeFindings(findings)
	v.CreatedAt = fromMicros(created)
	v.RedactedAt = ptrFromMicros(redacted)
	return v, nil
}

// EntryHistory returns an entry's versions, newest first.
func (db *DB) EntryHistory(ctx context.Context, orgID, spaceID int64, key string) ([]teammem.EntryVersion, error) {
	rows, err := db.query(ctx, `SELECT `+versionColumns+` FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
		WHERE v.org_id = ? AND v.space_id = ? AND v.key = ? ORDER BY v.version DESC`, orgID, spaceID, key)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.EntryVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, interpret(rows.Err())
}

// EntryVersionGet returns one recorded version with its content.
func (db *DB) EntryVersionGet(ctx context.Context, orgID, spaceID int64, key string, version int64) (teammem.EntryVersion, error) {
	var content sql.NullString
	v, err := scanVersion(db.queryRow(ctx, `SELECT `+versionColumns+`, v.content FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
		WHERE v.org_id = ? AND v.space_id = ? AND v.key = ? AND v.version = ?`, orgID, spaceID, key, version), &content)
	v.Content = content.String
	return v, err
}

// SpaceSnapshot reads a space's head and live entries in one read
// transaction: in WAL mode it sees one committed state throughout.
func (db *DB) SpaceSnapshot(ctx context.Context, orgID, spaceID int64, withContent bool) (teammem.Space, []teammem.Entry, error) {
	db.queries.Add(1)
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return teammem.Space{}, nil, interpret(err)
	}
	defer tx.Rollback()
	sp, err := scanSpace(tx.QueryRowContext(ctx, `SELECT `+spaceColumns+` FROM spaces WHERE org_id = ? AND id = ?`, orgID, spaceID))
	if err != nil {
		return sp, nil, err
	}
	cols := headColumns
	if withContent {
		cols += `, e.content`
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM entries e LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.space_id = ? AND e.deleted = 0 ORDER BY e.key`, orgID, spaceID)
	entries, err := collectEntries(rows, err, withContent)
	return sp, entries, err
}

// stmtQuerier runs queries through statements prep prepares (or has).
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
