package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// Memory stores: spaces as stores, entries as memories, version rows as
// versions (teammem/memstore.go).

// storeColumns reads a space as a store: the space, its repo, the store's
// own fields when it has them (an API store) and a personal space's owner.
const storeColumns = `s.id, s.org_id, s.repo_id, s.scope, coalesce(s.user_id, 0), s.version, s.checksum, s.entry_count,
	s.total_bytes, s.purged_through, s.updated_at, s.uid, r.slug, r.created_at, r.store,
	m.name, m.description, m.metadata, m.archived_at, m.created_at, m.updated_at, coalesce(u.handle, '')`

const storeFrom = ` FROM spaces s JOIN repos r ON r.id = s.repo_id LEFT JOIN memory_stores m ON m.space_id = s.id
	LEFT JOIN users u ON u.id = s.user_id`

func scanStore(row rowScanner) (teammem.MemoryStore, error) {
	var m teammem.MemoryStore
	s := &m.Space
	var updated, repoCreated int64
	var name, desc, meta sql.NullString
	var archived, created, mupdated sql.NullInt64
	if err := row.Scan(&s.ID, &s.OrgID, &s.RepoID, &s.Scope, &s.UserID, &s.Version, &s.Checksum, &s.EntryCount,
		&s.TotalBytes, &s.PurgedThrough, &updated, &s.UID, &m.Repo.Slug, &repoCreated, &m.Repo.Store,
		&name, &desc, &meta, &archived, &created, &mupdated, &m.Owner); err != nil {
		return m, interpret(err)
	}
	s.UpdatedAt = fromMicros(updated)
	m.Repo.ID, m.Repo.OrgID, m.Repo.CreatedAt = s.RepoID, s.OrgID, fromMicros(repoCreated)
	m.API = name.Valid
	m.Name, m.Description = name.String, desc.String
	m.CreatedAt, m.UpdatedAt = teammem.StoreTimes(m.Repo.CreatedAt, ptrFromMicros(created), ptrFromMicros(mupdated))
	m.ArchivedAt = ptrFromMicros(archived)
	var err error
	m.Metadata, err = teammem.DecodeStoreMetadata(meta.String)
	return m, err
}

// MemoryStoreGet returns the store of the space with uid.
func (db *DB) MemoryStoreGet(ctx context.Context, orgID int64, uid string) (teammem.MemoryStore, error) {
	return scanStore(db.queryRow(ctx, `SELECT `+storeColumns+storeFrom+` WHERE s.org_id = ? AND s.uid = ?`, orgID, uid))
}

// MemoryStoreList lists the stores f's user sees, in space id order.
func (db *DB) MemoryStoreList(ctx context.Context, orgID int64, f teammem.MemoryStoreFilter) ([]teammem.MemoryStore, error) {
	rows, err := db.query(ctx, `SELECT `+storeColumns+storeFrom+`
		WHERE s.org_id = ? AND (s.scope = 'team' OR s.user_id = ?) AND s.id > ?
			AND (? OR m.archived_at IS NULL)
			AND (? IS NULL OR coalesce(m.created_at, r.created_at) >= ?)
			AND (? IS NULL OR coalesce(m.created_at, r.created_at) <= ?)
		ORDER BY s.id LIMIT ?`, orgID, f.UserID, f.AfterSpaceID, f.IncludeArchived,
		nullMicros(f.CreatedGTE), nullMicros(f.CreatedGTE), nullMicros(f.CreatedLTE), nullMicros(f.CreatedLTE), f.Limit)
	return collect(rows, err, scanStore)
}

// MemoryStoreCreate creates an API store in one transaction.
func (db *DB) MemoryStoreCreate(ctx context.Context, orgID int64, p teammem.MemoryStoreCreateParams) (teammem.MemoryStore, error) {
	meta, err := teammem.EncodeStoreMetadata(p.Metadata)
	if err != nil {
		return teammem.MemoryStore{}, err
	}
	uid, at := teammem.NewStoreUID(), micros(now())
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.MemoryStore{}, err
	}
	defer tx.Rollback()
	if p.MaxStores > 0 {
		// The immediate transaction holds the one writer: no other create
		// counts or inserts in between.
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memory_stores WHERE org_id = ?`, orgID).Scan(&n); err != nil {
			return teammem.MemoryStore{}, interpret(err)
		}
		if n >= p.MaxStores {
			return teammem.MemoryStore{}, teammem.TooManyStores(p.MaxStores)
		}
	}
	var repoID, spaceID int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO repos (org_id, slug, created_at, store) VALUES (?, ?, ?, 1) RETURNING id`,
		orgID, teammem.StoreRepoSlug(uid), at).Scan(&repoID); err != nil {
		return teammem.MemoryStore{}, interpret(err)
	}
	if err := tx.QueryRowContext(ctx, `INSERT INTO spaces (org_id, repo_id, scope, checksum, updated_at, uid)
		VALUES (?, ?, 'team', ?, ?, ?) RETURNING id`, orgID, repoID, teammem.EmptySpaceChecksum, at, uid).Scan(&spaceID); err != nil {
		return teammem.MemoryStore{}, interpret(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO memory_stores (space_id, org_id, name, description, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, spaceID, orgID, p.Name, p.Description, meta, at, at); err != nil {
		return teammem.MemoryStore{}, interpret(err)
	}
	if err := tx.Commit(); err != nil {
		return teammem.MemoryStore{}, interpret(err)
	}
	return scanStore(db.r.QueryRowContext(ctx, `SELECT `+storeColumns+storeFrom+` WHERE s.org_id = ? AND s.id = ?`, orgID, spaceID))
}

// MemoryStoreUpdate changes an API store's fields.
func (db *DB) MemoryStoreUpdate(ctx context.Context, orgID, spaceID int64, p teammem.MemoryStoreUpdateParams) (teammem.MemoryStore, error) {
	var sets []string
	var args []any
	if p.Name != nil {
		sets, args = append(sets, "name = ?"), append(args, *p.Name)
	}
	if p.Description != nil {
		sets, args = append(sets, "description = ?"), append(args, *p.Description)
	}
	if p.Metadata != nil {
		meta, err := teammem.EncodeStoreMetadata(p.Metadata)
		if err != nil {
			return teammem.MemoryStore{}, err
		}
		sets, args = append(sets, "metadata = ?"), append(args, meta)
	}
	if p.ArchivedAt != nil {
		sets, args = append(sets, "archived_at = coalesce(archived_at, ?)"), append(args, micros(*p.ArchivedAt))
	}
	archiveOnly := len(sets) == 1 && p.ArchivedAt != nil
	sets, args = append(sets, "updated_at = ?"), append(args, micros(now()), orgID, spaceID)
	where := ` WHERE org_id = ? AND space_id = ?`
	if !archiveOnly {
		where += ` AND archived_at IS NULL` // an archived store's fields are final
	}
	// The writer's IMMEDIATE transaction is the write lock of every space:
	// a write's LockSpace sees the archive or comes before it.
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.MemoryStore{}, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE memory_stores SET `+strings.Join(sets, ", ")+where, args...)
	if err != nil {
		return teammem.MemoryStore{}, interpret(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var archived bool
		err := tx.QueryRowContext(ctx, `SELECT archived_at IS NOT NULL FROM memory_stores WHERE org_id = ? AND space_id = ?`,
			orgID, spaceID).Scan(&archived)
		if err == nil && archived {
			return teammem.MemoryStore{}, teammem.StoreArchived()
		}
		return teammem.MemoryStore{}, teammem.Errorf(teammem.ENotFound, "not found")
	}
	m, err := scanStore(tx.QueryRowContext(ctx, `SELECT `+storeColumns+storeFrom+` WHERE s.org_id = ? AND s.id = ?`, orgID, spaceID))
	if err != nil {
		return m, err
	}
	return m, interpret(tx.Commit())
}

// MemoryStoreDelete deletes an API store: its hidden repo row, which
// cascades to the space, its entries and versions; then scrubs.
func (db *DB) MemoryStoreDelete(ctx context.Context, orgID, spaceID int64) error {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The proposals name the store's repo, which goes: erase them first.
	if _, err := proposalsErase(ctx, tx.Tx, orgID, spaceID, teammem.ProposalErasure{}); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM repos WHERE org_id = ? AND store = 1
		AND id = (SELECT repo_id FROM spaces WHERE org_id = ? AND id = ?)`, orgID, orgID, spaceID)
	if err != nil {
		return interpret(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return teammem.Errorf(teammem.ENotFound, "not found")
	}
	if err := scrubRecord(ctx, tx.Tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return interpret(err)
	}
	db.heads.Drop(spaceID)
	db.scrubAfterErase(ctx, orgID)
	return nil
}

// prefixBounds is the key range [lo, hi) of keys starting with prefix,
// which is "" or ends with '/'; hi is "" for no bound.
func prefixBounds(prefix string) (lo, hi string) {
	if prefix == "" {
		return "", ""
	}
	return prefix, prefix[:len(prefix)-1] + "0" // '0' follows '/'
}

// versionRowSQL reads the id of the version row of an entry's current state.
const versionRowSQL = `coalesce((SELECT v.id FROM entry_versions v WHERE v.space_id = e.space_id AND v.key = e.key AND v.version = e.version), 0)`

// MemoriesList returns a page of live entries in key byte order.
func (db *DB) MemoriesList(ctx context.Context, orgID, spaceID int64, f teammem.MemoryFilter) ([]teammem.Entry, error) {
	cols := headColumns + `, ` + versionRowSQL
	if f.WithContent {
		cols += `, e.content`
	}
	lo, hi := prefixBounds(f.Prefix)
	rows, err := db.query(ctx, `SELECT `+cols+` FROM entries e LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.space_id = ? AND e.deleted = 0 AND e.key >= ? AND e.key > ? AND (? = '' OR e.key < ?)
		ORDER BY e.key LIMIT ?`, orgID, spaceID, lo, f.AfterKey, hi, hi, f.Limit)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.Entry
	for rows.Next() {
		var content sql.NullString
		var row int64
		extra := []any{&row}
		if f.WithContent {
			extra = append(extra, &content)
		}
		e, err := scanHead(rows, extra...)
		if err != nil {
			return nil, err
		}
		e.Content, e.VersionRowID = content.String, row
		out = append(out, e)
	}
	return out, interpret(rows.Err())
}

// MemoriesEach streams a space's live entries from one read transaction.
func (db *DB) MemoriesEach(ctx context.Context, orgID, spaceID int64, withContent bool, fn func(teammem.Space, teammem.Entry) error) (teammem.Space, error) {
	db.queries.Add(1)
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return teammem.Space{}, interpret(err)
	}
	defer tx.Rollback()
	sp, err := scanSpace(tx.QueryRowContext(ctx, `SELECT `+spaceColumns+` FROM spaces WHERE org_id = ? AND id = ?`, orgID, spaceID))
	if err != nil {
		return sp, err
	}
	cols := headColumns
	if withContent {
		cols += `, e.content`
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM entries e LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.space_id = ? AND e.deleted = 0 ORDER BY e.key`, orgID, spaceID)
	if err != nil {
		return sp, interpret(err)
	}
	defer rows.Close()
	var content sql.NullString
	var extra []any
	if withContent {
		extra = []any{&content}
	}
	for rows.Next() {
		e, err := scanHead(rows, extra...)
		if err != nil {
			return sp, err
		}
		e.Content = content.String
		if err := fn(sp, e); err != nil {
			return sp, err
		}
	}
	return sp, interpret(rows.Err())
}

// MemoryGet returns the live entry with a memory id.
func (db *DB) MemoryGet(ctx context.Context, orgID, spaceID int64, memoryID string) (teammem.Entry, error) {
	var content string
	var row int64
	e, err := scanHead(db.queryRow(ctx, `SELECT `+headColumns+`, `+versionRowSQL+`, e.content FROM entries e LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.space_id = ? AND e.memory_id = ? AND e.deleted = 0`, orgID, spaceID, memoryID), &row, &content)
	e.Content, e.VersionRowID = content, row
	return e, err
}

// firstVersionSQL says whether a version row is its memory's first.
const firstVersionSQL = `NOT EXISTS (SELECT 1 FROM entry_versions p WHERE p.space_id = v.space_id AND p.memory_id = v.memory_id AND p.id < v.id)`

// MemoryVersionsList pages a space's versions, newest first.
func (db *DB) MemoryVersionsList(ctx context.Context, orgID, spaceID int64, f teammem.MemoryVersionFilter) ([]teammem.EntryVersion, error) {
	cols := versionColumns + `, ` + firstVersionSQL
	if f.WithContent {
		cols += `, v.content`
	}
	opSQL := ""
	switch f.Operation {
	case "deleted":
		opSQL = ` AND v.op = 'delete'`
	case "created":
		opSQL = ` AND v.op <> 'delete' AND ` + firstVersionSQL
	case "modified":
		opSQL = ` AND v.op <> 'delete' AND NOT ` + firstVersionSQL
	}
	rows, err := db.query(ctx, `SELECT `+cols+` FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
		WHERE v.org_id = ? AND v.space_id = ? AND (? = '' OR v.memory_id = ?) AND (? = '' OR v.session_id = ?)
			AND (? = '' OR v.api_key_id = ?) AND (? = 0 OR v.id < ?)
			AND (? IS NULL OR v.created_at >= ?) AND (? IS NULL OR v.created_at <= ?)`+opSQL+`
		ORDER BY v.id DESC LIMIT ?`, orgID, spaceID, f.MemoryID, f.MemoryID, f.SessionID, f.SessionID, f.KeyID, f.KeyID,
		f.BeforeID, f.BeforeID, nullMicros(f.CreatedGTE), nullMicros(f.CreatedGTE), nullMicros(f.CreatedLTE), nullMicros(f.CreatedLTE), f.Limit)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.EntryVersion
	for rows.Next() {
		var content sql.NullString
		extra := []any{}
		var first bool
		extra = append(extra, &first)
		if f.WithContent {
			extra = append(extra, &content)
		}
		v, err := scanVersion(rows, extra...)
		if err != nil {
			return nil, err
		}
		v.Created, v.Content = first, content.String
		out = append(out, v)
	}
	return out, interpret(rows.Err())
}

// MemoryVersionGet returns one version row of a space, with content.
func (db *DB) MemoryVersionGet(ctx context.Context, orgID, spaceID, rowID int64) (teammem.EntryVersion, error) {
	var content sql.NullString
	var first bool
	v, err := scanVersion(db.queryRow(ctx, `SELECT `+versionColumns+`, `+firstVersionSQL+`, v.content
		FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
		WHERE v.org_id = ? AND v.space_id = ? AND v.id = ?`, orgID, spaceID, rowID), &first, &content)
	v.Created, v.Content = first, content.String
	return v, err
}
