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
	return collect(rows, err, scanSpace)
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

// CanAnnounce reports true: a NOTIFY inside the write's transaction is
// delivered at commit, and only then.
func (db *DB) CanAnnounce() bool { return true }

// HeadsCache is the store's cache of entry heads.
func (db *DB) HeadsCache() *teammem.HeadsCache { return db.heads }

// SpaceWrite opens a space's write transaction on a connection of its own.
// Its lock is the space row's, taken with SELECT ... FOR UPDATE: writers to
// one space queue on it across every replica; writers to others never wait.
//
// A write is two round trips when the space's heads are cached: BEGIN and
// the locking SELECT in one pipeline, the writes, audit rows, the
// announcement and COMMIT in another.
func (db *DB) SpaceWrite(ctx context.Context, orgID, spaceID int64, timing *teammem.WriteTiming) (teammem.WriteTx, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, interpret(err)
	}
	return &writeTx{conn: conn, orgID: orgID, spaceID: spaceID, batch: &pgx.Batch{}, timing: timing}, nil
}

// writeTx is the SQL of one Postgres write. Reads go out at once; writes
// are queued in one batch that Commit sends with COMMIT, naming the
// statement that failed.
type writeTx struct {
	conn           *pgxpool.Conn
	orgID, spaceID int64
	open           bool // a transaction is open on conn
	batch          *pgx.Batch
	what           []string // what each queued statement does, for errors
	// timing, when the write has one, is told how long the row lock was
	// waited for and held (from locked).
	timing *teammem.WriteTiming
	locked time.Time
}

func (w *writeTx) queue(what, sql string, args ...any) {
	w.batch.Queue(sql, args...)
	w.what = append(w.what, what)
}

// LockSpace reads whether the space is an archived store in a statement
// of its own after the locking one: under read committed it takes a new
// snapshot once the lock is granted, so it sees an archive committed by the
// lock's previous holder (MemoryStoreUpdate takes the same row lock). One
// SELECT with a subquery would read memory_stores as of before the wait.
func (w *writeTx) LockSpace(ctx context.Context) (teammem.Space, error) {
	asked := time.Now()
	defer func() {
		w.locked = time.Now()
		w.timing.Waited(w.locked.Sub(asked))
	}()
	begin := &pgx.Batch{}
	begin.Queue("BEGIN")
	begin.Queue(`SELECT `+spaceColumns+` FROM spaces WHERE org_id = $1 AND id = $2 FOR UPDATE`, w.orgID, w.spaceID)
	begin.Queue(`SELECT EXISTS (SELECT 1 FROM memory_stores WHERE space_id = $1 AND archived_at IS NOT NULL)`, w.spaceID)
	br := w.conn.SendBatch(ctx, begin)
	var space teammem.Space
	_, err := br.Exec()
	if err == nil {
		w.open = true
		space, err = scanSpace(br.QueryRow())
	}
	if err == nil {
		err = br.QueryRow().Scan(&space.Archived)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return space, interpret(err)
}

// EntryHeads reads under read committed, after the lock was granted, so it
// sees every change the previous holder committed.
func (w *writeTx) EntryHeads(ctx context.Context) (map[string]teammem.Entry, error) {
	return entryHeads(ctx, w.conn, w.orgID, w.spaceID)
}

func (w *writeTx) Content(ctx context.Context, key string) (string, error) {
	var content string
	err := w.conn.QueryRow(ctx, `SELECT content FROM entries WHERE org_id = $1 AND space_id = $2 AND key = $3 AND NOT deleted`,
		w.orgID, w.spaceID, key).Scan(&content)
	return content, interpret(err)
}

func (w *writeTx) PutEntry(_ context.Context, c teammem.EntryChange, h teammem.Entry, next teammem.Space, actor teammem.Actor) error {
	author := nullID(actor.UserID)
	var content *string // NULL for a tombstone
	if c.Op != teammem.OpDelete {
		content = &c.Content
	}
	w.queue("write entry "+strconvQuote(c.Key), `INSERT INTO entries (org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at, memory_id,
				overlap, memory_created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, coalesce((SELECT min(c.memory_created_at) FROM entries c
				WHERE c.space_id = $2 AND c.memory_id = $12 AND c.memory_id <> ''), $11))
			ON CONFLICT (space_id, key) DO UPDATE SET content = excluded.content, checksum = excluded.checksum, size = excluded.size,
				version = excluded.version, deleted = excluded.deleted, author_id = excluded.author_id,
				client_id = excluded.client_id, updated_at = excluded.updated_at, memory_id = excluded.memory_id, overlap = excluded.overlap,
				memory_created_at = excluded.memory_created_at`,
		next.OrgID, next.ID, c.Key, content, h.Checksum, h.Size, next.Version, h.Deleted, author, actor.ClientID, next.UpdatedAt, h.MemoryID, c.Overlap)
	w.queue("record version of "+strconvQuote(c.Key), `INSERT INTO entry_versions (org_id, space_id, key, version, op, checksum, size, content, author_id, client_id, created_at,
				memory_id, api_key_id, api, session_id, findings)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		next.OrgID, next.ID, c.Key, next.Version, string(c.Op), h.Checksum, h.Size, content, author, actor.ClientID, next.UpdatedAt,
		h.MemoryID, actor.KeyID, actor.API, actor.SessionID, teammem.EncodeFindings(c.Findings))
	return nil
}

func (w *writeTx) PutHead(_ context.Context, next teammem.Space) error {
	w.queue("update space head", `UPDATE spaces SET version = $1, checksum = $2, entry_count = $3, total_bytes = $4, updated_at = $5
		WHERE org_id = $6 AND id = $7`, next.Version, next.Checksum, next.EntryCount, next.TotalBytes, next.UpdatedAt, next.OrgID, next.ID)
	return nil
}

func (w *writeTx) PutAudit(_ context.Context, e teammem.AuditEvent) error {
	details, err := auditDetails(e)
	if err != nil {
		return err
	}
	w.queue("record audit event "+e.Action, insertAuditSQL, w.orgID, nullID(e.ActorID), e.Action, e.Repo, e.Target, details, e.CreatedAt)
	return nil
}

// Announce queues a NOTIFY: one round trip fewer than a NOTIFY of its own,
// and no committed write that the other replicas never hear of.
func (w *writeTx) Announce(_ context.Context, a teammem.Announcement) error {
	w.queue("announce the write", `SELECT pg_notify($1, $2)`, a.Channel, a.Payload)
	return nil
}

// Commit sends the queued statements and COMMIT in one pipeline. Should a
// statement fail, Postgres skips the rest, COMMIT included, and the
// transaction stays open, aborted, for Rollback.
func (w *writeTx) Commit(ctx context.Context) error {
	w.queue("commit", "COMMIT")
	br := w.conn.SendBatch(ctx, w.batch)
	for _, what := range w.what {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("%s: %w", what, interpret(err))
		}
	}
	if err := br.Close(); err != nil {
		return interpret(err)
	}
	w.open = false
	w.timing.Held(time.Since(w.locked))
	return nil
}

// Rollback rolls an open transaction back and gives the connection back;
// the pool drops a connection given back inside a transaction, so one
// whose ROLLBACK failed is never reused.
func (w *writeTx) Rollback(ctx context.Context) {
	if w.open {
		_, _ = w.conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		if !w.locked.IsZero() {
			w.timing.Held(time.Since(w.locked))
		}
	}
	w.conn.Release()
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

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
