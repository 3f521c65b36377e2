package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

const headColumns = `e.key, e.checksum, e.size, e.version, e.deleted, coalesce(e.author_id, 0), coalesce(u.handle, ''), e.client_id, e.updated_at, e.memory_id, e.memory_created_at`

// headsFrom reads the entries of a space without their authors.
const headsFrom = ` FROM entries e WHERE e.org_id = $1 AND e.space_id = $2`

// entriesFrom joins entries to their authors; every query adds its filters.
const entriesFrom = ` FROM entries e LEFT JOIN users u ON u.id = e.author_id WHERE e.org_id = $1 AND e.space_id = $2`

func scanHead(row pgx.Row, extra ...any) (teammem.Entry, error) {
	var e teammem.Entry
	dest := append([]any{&e.Key, &e.Checksum, &e.Size, &e.Version, &e.Deleted, &e.AuthorID, &e.Author, &e.ClientID, &e.UpdatedAt, &e.MemoryID, &e.MemoryCreatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return e, interpret(err)
	}
	return e, nil
}

// scanEntry scans a head followed by its content, NULL for tombstones.
func scanEntry(row pgx.Row) (teammem.Entry, error) {
	var content *string
	e, err := scanHead(row, &content)
	if content != nil {
		e.Content = *content
	}
	return e, err
}

func entryHeads(ctx context.Context, q querier, orgID, spaceID int64) (map[string]teammem.Entry, error) {
	// The write path never needs the author's handle: no join with users.
	rows, err := q.Query(ctx, `SELECT e.key, e.checksum, e.size, e.version, e.deleted, coalesce(e.author_id, 0), '', e.client_id, e.updated_at, e.memory_id, e.memory_created_at`+headsFrom, orgID, spaceID)
	list, err := collect(rows, err, func(r pgx.Row) (teammem.Entry, error) { return scanHead(r) })
	if err != nil {
		return nil, err
	}
	heads := make(map[string]teammem.Entry, len(list))
	for _, e := range list {
		heads[e.Key] = e
	}
	return heads, nil
}

// EntryHeads returns every entry head of a space, tombstones included.
func (db *DB) EntryHeads(ctx context.Context, orgID, spaceID int64) (map[string]teammem.Entry, error) {
	return entryHeads(ctx, db.pool, orgID, spaceID)
}

// EntriesList returns the live entries of a space in key byte order, the
// order SpaceChecksum uses, whatever the database's collation.
func (db *DB) EntriesList(ctx context.Context, orgID, spaceID int64, withContent bool) ([]teammem.Entry, error) {
	return entriesList(ctx, db.pool, orgID, spaceID, withContent)
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func entriesList(ctx context.Context, q rowQuerier, orgID, spaceID int64, withContent bool) ([]teammem.Entry, error) {
	if !withContent {
		rows, err := q.Query(ctx, `SELECT `+headColumns+entriesFrom+` AND NOT e.deleted ORDER BY e.key COLLATE "C"`, orgID, spaceID)
		return collect(rows, err, func(r pgx.Row) (teammem.Entry, error) { return scanHead(r) })
	}
	rows, err := q.Query(ctx, `SELECT `+headColumns+`, e.content`+entriesFrom+` AND NOT e.deleted ORDER BY e.key COLLATE "C"`, orgID, spaceID)
	return collect(rows, err, scanEntry)
}

// SpaceSnapshot reads a space's head and live entries in one repeatable-read
// transaction, so they describe the same committed state.
func (db *DB) SpaceSnapshot(ctx context.Context, orgID, spaceID int64, withContent bool) (teammem.Space, []teammem.Entry, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return teammem.Space{}, nil, interpret(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	sp, err := scanSpace(tx.QueryRow(ctx, `SELECT `+spaceColumns+` FROM spaces WHERE org_id = $1 AND id = $2`, orgID, spaceID))
	if err != nil {
		return sp, nil, err
	}
	entries, err := entriesList(ctx, tx, orgID, spaceID, withContent)
	if err != nil {
		return sp, nil, err
	}
	return sp, entries, interpret(tx.Commit(ctx))
}

// EntryGet returns one live entry with content.
func (db *DB) EntryGet(ctx context.Context, orgID, spaceID int64, key string) (teammem.Entry, error) {
	return scanEntry(db.pool.QueryRow(ctx, `SELECT `+headColumns+`, e.content`+entriesFrom+` AND e.key = $3 AND NOT e.deleted`,
		orgID, spaceID, key))
}

// ChangesList returns the entries and tombstones changed after since, in
// version order and key byte order within a version.
func (db *DB) ChangesList(ctx context.Context, orgID, spaceID, since int64) ([]teammem.Entry, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+headColumns+`, e.content, e.overlap`+entriesFrom+` AND e.version > $3
		ORDER BY e.version, e.key COLLATE "C"`, orgID, spaceID, since)
	return collect(rows, err, func(row pgx.Row) (teammem.Entry, error) {
		var content *string
		var overlap bool
		e, err := scanHead(row, &content, &overlap)
		if content != nil {
			e.Content = *content
		}
		e.Overlap = overlap
		return e, err
	})
}

// versionColumns are a version's columns; the redactor's handle and the
// writing key's name come from subqueries so that the version queries keep a single join.
const versionColumns = `v.key, v.version, v.op, v.checksum, v.size, coalesce(u.handle, ''), v.client_id, v.created_at,
	v.redacted_at, coalesce((SELECT r.handle FROM users r WHERE r.id = v.redacted_by), ''),
	v.id, v.memory_id, v.api_key_id,
	coalesce((SELECT k.name FROM api_keys k WHERE k.id = v.api_key_id AND k.org_id = v.org_id), ''),
	v.api, v.session_id, coalesce(v.author_id, 0), v.space_id, v.findings, coalesce(v.redacted_by, 0)`

// versionsFrom joins versions to their authors; every query adds its filters.
const versionsFrom = ` FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
	WHERE v.org_id = $1 AND v.space_id = $2 AND v.key = $3`

func scanVersion(row pgx.Row, extra ...any) (teammem.EntryVersion, error) {
	var v teammem.EntryVersion
	var op, findings string
	if err := row.Scan(append([]any{&v.Key, &v.Version, &op, &v.Checksum, &v.Size, &v.Author, &v.ClientID, &v.CreatedAt,
		&v.RedactedAt, &v.RedactedBy, &v.ID, &v.MemoryID, &v.KeyID, &v.KeyName, &v.API, &v.SessionID, &v.AuthorID, &v.SpaceID, &findings, &v.RedactedByID}, extra...)...); err != nil {
		return v, interpret(err)
	}
	v.Findings = teammem.DecodeFindings(findings)
	v.Op = teammem.Op(op)
	return v, nil
}

// EntryHistory returns an entry's versions, newest first.
func (db *DB) EntryHistory(ctx context.Context, orgID, spaceID int64, key string) ([]teammem.EntryVersion, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+versionColumns+versionsFrom+` ORDER BY v.version DESC`, orgID, spaceID, key)
	return collect(rows, err, func(r pgx.Row) (teammem.EntryVersion, error) { return scanVersion(r) })
}

// EntryVersionGet returns one recorded version with its content.
func (db *DB) EntryVersionGet(ctx context.Context, orgID, spaceID int64, key string, version int64) (teammem.EntryVersion, error) {
	return versionGet(ctx, db.pool, orgID, spaceID, key, version)
}
