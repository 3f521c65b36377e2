package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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

func scanStore(row pgx.Row) (teammem.MemoryStore, error) {
	var m teammem.MemoryStore
	s := &m.Space
	var scope string
	var name, desc *string
	var meta []byte
	var created, updated *time.Time
	if err := row.Scan(&s.ID, &s.OrgID, &s.RepoID, &scope, &s.UserID, &s.Version, &s.Checksum, &s.EntryCount,
		&s.TotalBytes, &s.PurgedThrough, &s.UpdatedAt, &s.UID, &m.Repo.Slug, &m.Repo.CreatedAt, &m.Repo.Store,
		&name, &desc, &meta, &m.ArchivedAt, &created, &updated, &m.Owner); err != nil {
		return m, interpret(err)
	}
	s.Scope = teammem.Scope(scope)
	m.Repo.ID, m.Repo.OrgID = s.RepoID, s.OrgID
	m.API = name != nil
	if name != nil {
		m.Name, m.Description = *name, *desc
	}
	m.CreatedAt, m.UpdatedAt = teammem.StoreTimes(m.Repo.CreatedAt, created, updated)
	var err error
	m.Metadata, err = teammem.DecodeStoreMetadata(string(meta))
	return m, err
}

// MemoryStoreGet returns the store of the space with uid.
func (db *DB) MemoryStoreGet(ctx context.Context, orgID int64, uid string) (teammem.MemoryStore, error) {
	return scanStore(db.pool.QueryRow(ctx, `SELECT `+storeColumns+storeFrom+` WHERE s.org_id = $1 AND s.uid = $2`, orgID, uid))
}

// MemoryStoreList lists the stores f's user sees, in space id order.
func (db *DB) MemoryStoreList(ctx context.Context, orgID int64, f teammem.MemoryStoreFilter) ([]teammem.MemoryStore, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+storeColumns+storeFrom+`
		WHERE s.org_id = $1 AND (s.scope = 'team' OR s.user_id = $2) AND s.id > $3
			AND ($4 OR m.archived_at IS NULL)
			AND ($5::timestamptz IS NULL OR coalesce(m.created_at, r.created_at) >= $5)
			AND ($6::timestamptz IS NULL OR coalesce(m.created_at, r.created_at) <= $6)
		ORDER BY s.id LIMIT $7`, orgID, f.UserID, f.AfterSpaceID, f.IncludeArchived, f.CreatedGTE, f.CreatedLTE, f.Limit)
	return collect(rows, err, scanStore)
}

// storeMetadata is m as the JSONB column takes it.
func storeMetadata(m map[string]string) ([]byte, error) {
	s, err := teammem.EncodeStoreMetadata(m)
	return []byte(s), err
}

// MemoryStoreCreate creates an API store in one transaction.
func (db *DB) MemoryStoreCreate(ctx context.Context, orgID int64, p teammem.MemoryStoreCreateParams) (teammem.MemoryStore, error) {
	meta, err := storeMetadata(p.Metadata)
	if err != nil {
		return teammem.MemoryStore{}, err
	}
	uid, at := teammem.NewStoreUID(), now()
	var spaceID int64
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if p.MaxStores > 0 {
			// Lock the org, then count in a statement of its own: under
			// READ COMMITTED only a later statement sees the store of the
			// create that held the lock before.
			if _, err := tx.Exec(ctx, `SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE`, orgID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM memory_stores WHERE org_id = $1`, orgID).Scan(&n); err != nil {
				return err
			}
			if n >= p.MaxStores {
				return teammem.TooManyStores(p.MaxStores)
			}
		}
		var repoID int64
		if err := tx.QueryRow(ctx, `INSERT INTO repos (org_id, slug, created_at, store) VALUES ($1, $2, $3, true) RETURNING id`,
			orgID, teammem.StoreRepoSlug(uid), at).Scan(&repoID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO spaces (org_id, repo_id, scope, checksum, updated_at, uid)
			VALUES ($1, $2, 'team', $3, $4, $5) RETURNING id`, orgID, repoID, teammem.EmptySpaceChecksum, at, uid).Scan(&spaceID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO memory_stores (space_id, org_id, name, description, metadata, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6)`, spaceID, orgID, p.Name, p.Description, meta, at)
		return err
	})
	if err != nil {
		return teammem.MemoryStore{}, interpret(err)
	}
	return scanStore(db.pool.QueryRow(ctx, `SELECT `+storeColumns+storeFrom+` WHERE s.org_id = $1 AND s.id = $2`, orgID, spaceID))
}

// MemoryStoreUpdate changes an API store's fields.
func (db *DB) MemoryStoreUpdate(ctx context.Context, orgID, spaceID int64, p teammem.MemoryStoreUpdateParams) (teammem.MemoryStore, error) {
	var sets []string
	args := []any{orgID, spaceID}
	add := func(set string, v any) {
		args = append(args, v)
		sets = append(sets, strings.ReplaceAll(set, "$?", "$"+strconv.Itoa(len(args))))
	}
	if p.Name != nil {
		add("name = $?", *p.Name)
	}
	if p.Description != nil {
		add("description = $?", *p.Description)
	}
	if p.Metadata != nil {
		meta, err := storeMetadata(p.Metadata)
		if err != nil {
			return teammem.MemoryStore{}, err
		}
		add("metadata = $?", meta)
	}
	if p.ArchivedAt != nil {
		add("archived_at = coalesce(archived_at, $?)", *p.ArchivedAt)
	}
	archiveOnly := len(sets) == 1 && p.ArchivedAt != nil
	add("updated_at = $?", now())
	where := ` WHERE org_id = $1 AND space_id = $2`
	if !archiveOnly {
		where += ` AND archived_at IS NULL` // an archived store's fields are final
	}
	var m teammem.MemoryStore
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// The space's write lock, which every write's LockSpace takes: a
		// write that holds it commits before the archive, one that waits
		// for it reads the archive once granted.
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM spaces WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, spaceID).Scan(&one); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE memory_stores SET `+strings.Join(sets, ", ")+where, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			var archived bool
			err := tx.QueryRow(ctx, `SELECT archived_at IS NOT NULL FROM memory_stores WHERE org_id = $1 AND space_id = $2`,
				orgID, spaceID).Scan(&archived)
			if err == nil && archived {
				return teammem.StoreArchived()
			}
			return teammem.Errorf(teammem.ENotFound, "not found")
		}
		m, err = scanStore(tx.QueryRow(ctx, `SELECT `+storeColumns+storeFrom+` WHERE s.org_id = $1 AND s.id = $2`, orgID, spaceID))
		return err
	})
	return m, interpret(err)
}

// MemoryStoreDelete deletes an API store: its hidden repo row, which
// cascades to the space, its entries and versions; then vacuums.
func (db *DB) MemoryStoreDelete(ctx context.Context, orgID, spaceID int64) error {
	proposals, xid := 0, uint64(0)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) (err error) {
		// The proposals name the store's repo, which goes: erase them first.
		if proposals, err = proposalsErase(ctx, tx, orgID, spaceID, teammem.ProposalErasure{}); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM repos WHERE org_id = $1 AND store
			AND id = (SELECT repo_id FROM spaces WHERE org_id = $1 AND id = $2)`, orgID, spaceID)
		if err != nil {
			return interpret(err)
		}
		if tag.RowsAffected() == 0 {
			return teammem.Errorf(teammem.ENotFound, "not found")
		}
		xid, err = erasureRecord(ctx, tx, erasedTables(proposals)...)
		return err
	})
	if err != nil {
		return interpret(err)
	}
	db.heads.Drop(spaceID)
	db.scrubAfterErase(xid, erasedTables(proposals)...)
	return nil
}

// versionRowSQL reads the id of the version row of an entry's current state.
const versionRowSQL = `coalesce((SELECT v.id FROM entry_versions v WHERE v.space_id = e.space_id AND v.key = e.key AND v.version = e.version), 0)`

// MemoriesList returns a page of live entries in key byte order.
func (db *DB) MemoriesList(ctx context.Context, orgID, spaceID int64, f teammem.MemoryFilter) ([]teammem.Entry, error) {
	cols := headColumns + `, ` + versionRowSQL
	if f.WithContent {
		cols += `, e.content`
	}
	lo, hi := "", ""
	if f.Prefix != "" {
		lo, hi = f.Prefix, f.Prefix[:len(f.Prefix)-1]+"0" // the prefix ends with '/', which '0' follows
	}
	rows, err := db.pool.Query(ctx, `SELECT `+cols+entriesFrom+` AND NOT e.deleted
			AND e.key COLLATE "C" >= $3 AND e.key COLLATE "C" > $4 AND ($5 = '' OR e.key COLLATE "C" < $5)
		ORDER BY e.key COLLATE "C" LIMIT $6`, orgID, spaceID, lo, f.AfterKey, hi, f.Limit)
	return collect(rows, err, func(r pgx.Row) (teammem.Entry, error) {
		var content *string
		var row int64
		extra := []any{&row}
		if f.WithContent {
			extra = append(extra, &content)
		}
		e, err := scanHead(r, extra...)
		e.VersionRowID = row
		if content != nil {
			e.Content = *content
		}
		return e, err
	})
}

// MemoriesEach streams a space's live entries from one repeatable-read
// transaction.
func (db *DB) MemoriesEach(ctx context.Context, orgID, spaceID int64, withContent bool, fn func(teammem.Space, teammem.Entry) error) (teammem.Space, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return teammem.Space{}, interpret(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	sp, err := scanSpace(tx.QueryRow(ctx, `SELECT `+spaceColumns+` FROM spaces WHERE org_id = $1 AND id = $2`, orgID, spaceID))
	if err != nil {
		return sp, err
	}
	cols := headColumns
	if withContent {
		cols += `, e.content`
	}
	rows, err := tx.Query(ctx, `SELECT `+cols+entriesFrom+` AND NOT e.deleted ORDER BY e.key COLLATE "C"`, orgID, spaceID)
	if err != nil {
		return sp, interpret(err)
	}
	defer rows.Close()
	var content *string
	var extra []any
	if withContent {
		extra = []any{&content}
	}
	for rows.Next() {
		e, err := scanHead(rows, extra...)
		if err != nil {
			return sp, err
		}
		if content != nil {
			e.Content = *content
		}
		if err := fn(sp, e); err != nil {
			return sp, err
		}
	}
	return sp, interpret(rows.Err())
}

// MemoryGet returns the live entry with a memory id.
func (db *DB) MemoryGet(ctx context.Context, orgID, spaceID int64, memoryID string) (teammem.Entry, error) {
	var content *string
	var row int64
	e, err := scanHead(db.pool.QueryRow(ctx, `SELECT `+headColumns+`, `+versionRowSQL+`, e.content`+entriesFrom+` AND e.memory_id = $3 AND NOT e.deleted`,
		orgID, spaceID, memoryID), &row, &content)
	e.VersionRowID = row
	if content != nil {
		e.Content = *content
	}
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
	rows, err := db.pool.Query(ctx, `SELECT `+cols+` FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
		WHERE v.org_id = $1 AND v.space_id = $2 AND ($3 = '' OR v.memory_id = $3) AND ($4 = '' OR v.session_id = $4)
			AND ($5 = '' OR v.api_key_id = $5) AND ($6 = 0 OR v.id < $6)
			AND ($7::timestamptz IS NULL OR v.created_at >= $7) AND ($8::timestamptz IS NULL OR v.created_at <= $8)`+opSQL+`
		ORDER BY v.id DESC LIMIT $9`, orgID, spaceID, f.MemoryID, f.SessionID, f.KeyID, f.BeforeID, f.CreatedGTE, f.CreatedLTE, f.Limit)
	return collect(rows, err, func(r pgx.Row) (teammem.EntryVersion, error) {
		var content *string
		var first bool
		extra := []any{&first}
		if f.WithContent {
			extra = append(extra, &content)
		}
		v, err := scanVersion(r, extra...)
		v.Created = first
		if content != nil {
			v.Content = *content
		}
		return v, err
	})
}

// MemoryVersionGet returns one version row of a space, with content.
func (db *DB) MemoryVersionGet(ctx context.Context, orgID, spaceID, rowID int64) (teammem.EntryVersion, error) {
	var content *string
	var first bool
	v, err := scanVersion(db.pool.QueryRow(ctx, `SELECT `+versionColumns+`, `+firstVersionSQL+`, v.content
		FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
		WHERE v.org_id = $1 AND v.space_id = $2 AND v.id = $3`, orgID, spaceID, rowID), &first, &content)
	v.Created = first
	if content != nil {
		v.Content = *content
	}
	return v, err
}
