package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/teammem/teammem/internal/teammem"
)

const spaceColumns = `id, org_id, repo_id, scope, coalesce(user_id, 0), version, checksum, entry_count, total_bytes, purged_through, updated_at, uid`

func scanSpace(row pgx.Row) (teammem.Space, error) {
	var s teammem.Space
	var scope string
	if err := row.Scan(&s.ID, &s.OrgID, &s.RepoID, &scope, &s.UserID, &s.Version, &s.Checksum, &s.EntryCount,
		&s.TotalBytes, &s.PurgedThrough, &s.UpdatedAt, &s.UID); err != nil {
		return s, interpret(err)
	}
	s.Scope = teammem.Scope(scope)
	return s, nil
}

// userArg is the user_id a new space stores: the owner of a personal space,
// NULL for the team space.
func userArg(ref teammem.SpaceRef) *int64 {
	if ref.Scope != teammem.ScopePersonal {
		return nil
	}
	return &ref.UserID
}

// SpaceGet returns a space head.
func (db *DB) SpaceGet(ctx context.Context, orgID int64, ref teammem.SpaceRef) (teammem.Space, error) {
	// The filter matches the spaces_ref index expression.
	return scanSpace(db.pool.QueryRow(ctx, `SELECT `+spaceColumns+` FROM spaces
		WHERE org_id = $1 AND repo_id = $2 AND scope = $3 AND coalesce(user_id, 0) = $4`, orgID, ref.RepoID, string(ref.Scope), ref.UserID))
}

// SpaceList lists every space of every org.
func (db *DB) SpaceList(ctx context.Context) ([]teammem.Space, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+spaceColumns+` FROM spaces ORDER BY id`)
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
// The repo, and the owner of a personal space, must belong to the org
// (ENotFound otherwise).
func (db *DB) SpaceEnsure(ctx context.Context, orgID int64, ref teammem.SpaceRef) (teammem.Space, error) {
	if s, err := db.SpaceGet(ctx, orgID, ref); teammem.ErrorCode(err) != teammem.ENotFound {
		return s, err
	}
	// ON CONFLICT DO NOTHING waits for a concurrent insert of the same space
	// to commit, so the SpaceGet below sees it.
	_, err := db.pool.Exec(ctx, `INSERT INTO spaces (org_id, repo_id, scope, user_id, checksum, updated_at)
		SELECT r.org_id, r.id, $3::text, $4::bigint, $5::text, $6::timestamptz FROM repos r
		WHERE r.org_id = $1 AND r.id = $2
			AND ($4::bigint IS NULL OR EXISTS (SELECT 1 FROM users u WHERE u.org_id = $1 AND u.id = $4::bigint))
		ON CONFLICT DO NOTHING`, orgID, ref.RepoID, string(ref.Scope), userArg(ref), teammem.EmptySpaceChecksum, now())
	if err != nil {
		return teammem.Space{}, interpret(err)
	}
	return db.SpaceGet(ctx, orgID, ref)
}

// SpaceApply runs fn under the space's write lock and commits its changes.
// The lock is the space row's, taken with SELECT ... FOR UPDATE: writers to
// one space queue on it across every replica, writers to others never wait.
//
// A write is three round trips when the space's heads are cached: BEGIN
// and the locking SELECT in one pipeline, the writes and the announcement in
// another, then COMMIT; any failure rolls the transaction back.
func (db *DB) SpaceApply(ctx context.Context, orgID, spaceID int64, actor teammem.Actor, fn teammem.ApplyFunc) (space teammem.Space, err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return space, interpret(err)
	}
	// The pool drops a connection given back inside a transaction, so one
	// whose ROLLBACK failed is never reused.
	defer conn.Release()
	open := false // a transaction is open on conn
	defer func() {
		if open {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	begin := &pgx.Batch{}
	begin.Queue("BEGIN")
	begin.Queue(`SELECT `+spaceColumns+` FROM spaces WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, spaceID)
	br := conn.SendBatch(ctx, begin)
	if _, err = br.Exec(); err == nil {
		open = true
		space, err = scanSpace(br.QueryRow())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return space, interpret(err)
	}
	// Read committed: this statement starts after the lock was granted, so
	// it sees every change the previous holder committed.
	heads, cached := db.heads.Get(space)
	if !cached {
		if heads, err = entryHeads(ctx, conn, orgID, spaceID); err != nil {
			return space, err
		}
	}
	current := func(key string) (string, error) {
		var content string
		err := conn.QueryRow(ctx, `SELECT content FROM entries WHERE org_id = $1 AND space_id = $2 AND key = $3 AND NOT deleted`,
			orgID, spaceID, key).Scan(&content)
		return content, interpret(err)
	}
	changes, err := fn(space, heads, current)
	if err != nil || len(changes) == 0 {
		if err == nil && !cached {
			db.heads.Put(space, heads)
		}
		return space, err
	}
	at := now()
	next := space
	next.Version, next.UpdatedAt = space.Version+1, at
	newHeads := teammem.ApplyChanges(heads, changes, next.Version, actor, at)
	next.Checksum, next.EntryCount, next.TotalBytes = teammem.Summarize(newHeads)
	b := writeBatch(next, actor, changes, newHeads)
	announced := false
	if announce := teammem.AnnouncerFrom(ctx); announce != nil {
		// NOTIFY inside the transaction is delivered at commit, and only
		// then: one round trip fewer than a NOTIFY of its own, and no
		// committed write that the other replicas never hear of.
		if a, ok := announce(next); ok {
			b.Queue(`SELECT pg_notify($1, $2)`, a.Channel, a.Payload)
			announced = true
		}
	}
	if err := sendWrites(ctx, conn, b, changes, announced); err != nil {
		return space, err
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		// The commit may or may not have happened: forget the space.
		db.heads.Drop(spaceID)
		return space, interpret(err)
	}
	open = false
	db.heads.Put(next, newHeads)
	return next, nil
}

// writeBatch queues, for each change, the entry upsert and its history row,
// then the new head: one round trip whatever the number of changes.
func writeBatch(next teammem.Space, actor teammem.Actor, changes []teammem.EntryChange, heads map[string]teammem.Entry) *pgx.Batch {
	b := &pgx.Batch{}
	author := nullID(actor.UserID)
	for _, c := range changes {
		h := heads[c.Key]
		var content *string // NULL for a tombstone
		if c.Op != teammem.OpDelete {
			content = &c.Content
		}
		b.Queue(`INSERT INTO entries (org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (space_id, key) DO UPDATE SET content = excluded.content, checksum = excluded.checksum, size = excluded.size,
				version = excluded.version, deleted = excluded.deleted, author_id = excluded.author_id,
				client_id = excluded.client_id, updated_at = excluded.updated_at`,
			next.OrgID, next.ID, c.Key, content, h.Checksum, h.Size, next.Version, h.Deleted, author, actor.ClientID, next.UpdatedAt)
		b.Queue(`INSERT INTO entry_versions (org_id, space_id, key, version, op, checksum, size, content, author_id, client_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			next.OrgID, next.ID, c.Key, next.Version, string(c.Op), h.Checksum, h.Size, content, author, actor.ClientID, next.UpdatedAt)
	}
	b.Queue(`UPDATE spaces SET version = $1, checksum = $2, entry_count = $3, total_bytes = $4, updated_at = $5
		WHERE org_id = $6 AND id = $7`, next.Version, next.Checksum, next.EntryCount, next.TotalBytes, next.UpdatedAt, next.OrgID, next.ID)
	return b
}

// sendWrites sends the batch writeBatch built, plus the announcement when
// announced, and reads its results in order, naming the entry whose
// statement failed.
func sendWrites(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch, changes []teammem.EntryChange, announced bool) error {
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	for _, c := range changes {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("write entry %q: %w", c.Key, interpret(err))
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("record version of %q: %w", c.Key, interpret(err))
		}
	}
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("update space head: %w", interpret(err))
	}
	if announced {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("announce the write: %w", interpret(err))
		}
	}
	return interpret(br.Close())
}

// TombstonesPurge deletes tombstones last changed before cutoff and advances
// each touched space's PurgedThrough. It first locks the spaces concerned, in
// id order, as SpaceApply does one at a time, so it cannot deadlock with a
// writer overwriting one of those tombstones.
func (db *DB) TombstonesPurge(ctx context.Context, cutoff time.Time) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM spaces
			WHERE id IN (SELECT space_id FROM entries WHERE deleted AND updated_at < $1) ORDER BY id FOR UPDATE`, cutoff)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || len(ids) == 0 {
			return err
		}
		return tx.QueryRow(ctx, `WITH purged AS (
				DELETE FROM entries WHERE space_id = ANY($2) AND deleted AND updated_at < $1 RETURNING space_id, version),
			moved AS (
				UPDATE spaces s SET purged_through = greatest(s.purged_through, p.version)
				FROM (SELECT space_id, max(version) AS version FROM purged GROUP BY space_id) p WHERE s.id = p.space_id)
			SELECT count(*) FROM purged`, cutoff, ids).Scan(&n)
	})
	// Purging moves each touched space's purge mark, which misses the heads
	// cache of every replica; this one also forgets its own copies.
	db.heads.Reset()
	return n, interpret(err)
}
