package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// Erasing history. A redaction or purge updates or deletes rows, which no
// query can read afterwards; but MVCC keeps the old row versions in the
// table files (and in the TOAST table, for long contents), and even once
// VACUUM prunes them their bytes stay in the pages' free space. So after
// each redaction and purge the driver asks the scrubber (scrub.go) to
// rewrite the tables that held them. The WAL segments not yet recycled,
// replicas' and archived WAL, and backups still hold them for a while
// (README, "Erasing history").

// VersionRedact erases one version's content, and the same content from
// the proposals of its space, under the space's row lock (the lock
// SpaceApply takes), then asks for the rewrite of the tables. A version
// that is redacted already (or missing) is answered without a lock.
func (db *DB) VersionRedact(ctx context.Context, orgID, spaceID int64, p teammem.VersionRedactParams) (teammem.EntryVersion, bool, error) {
	v, err := versionGet(ctx, db.pool, orgID, spaceID, p.Key, p.Version)
	if err != nil || v.Redacted() {
		v.Content = ""
		return v, false, interpret(err)
	}
	changed, proposals, xid := false, 0, uint64(0)
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// The same statement as SpaceApply's: the head read below stays the
		// head until this commits.
		if _, err := scanSpace(tx.QueryRow(ctx, `SELECT `+spaceColumns+` FROM spaces WHERE org_id = $1 AND id = $2 FOR UPDATE`,
			orgID, spaceID)); err != nil {
			return err
		}
		var err error
		if v, err = versionGet(ctx, tx, orgID, spaceID, p.Key, p.Version); err != nil {
			return err
		}
		head, err := scanHead(tx.QueryRow(ctx, `SELECT e.key, e.checksum, e.size, e.version, e.deleted, coalesce(e.author_id, 0), '', e.client_id, e.updated_at, e.memory_id, e.memory_created_at`+
			headsFrom+` AND e.key = $3`, orgID, spaceID, p.Key))
		if err != nil && teammem.ErrorCode(err) != teammem.ENotFound {
			return err
		}
		if ok, err := teammem.PlanRedact(v, head, err == nil); err != nil || !ok {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE entry_versions SET content = NULL, checksum = '', size = 0, findings = '', redacted_at = $5, redacted_by = $6
			WHERE org_id = $1 AND space_id = $2 AND key = $3 AND version = $4`,
			orgID, spaceID, p.Key, p.Version, p.At.UTC().Truncate(time.Microsecond), nullID(p.By)); err != nil {
			return fmt.Errorf("redact version %d of %q: %w", p.Version, p.Key, interpret(err))
		}
		if proposals, err = proposalsErase(ctx, tx, orgID, spaceID, teammem.ProposalErasure{Key: p.Key, Checksum: v.Checksum}); err != nil {
			return err
		}
		if xid, err = erasureRecord(ctx, tx, erasedTables(proposals)...); err != nil {
			return err
		}
		changed = true
		v, err = versionGet(ctx, tx, orgID, spaceID, p.Key, p.Version)
		return err
	})
	if err != nil {
		return v, false, interpret(err)
	}
	if changed {
		db.scrubAfterErase(xid, erasedTables(proposals)...)
	}
	return v, changed, nil
}

// The statements of the retention sweep: a batch is found with one query,
// then deleted by id in a transaction of its own. The delete checks again
// that each row has a newer one (a version's newest row is its live
// content or its delete marker; concurrent writes only add newer rows), and
// locks its rows in id order, skipping those another replica's sweep is
// deleting, so that two sweeps never deadlock.
const (
	// agedVersionsSQL pages, by (created_at, id), through an org's versions
	// older than a cutoff that are not their entry's newest.
	agedVersionsSQL = `SELECT v.id, v.created_at FROM entry_versions v
		WHERE v.org_id = $1 AND v.created_at < $2 AND (v.created_at, v.id) > ($3, $4)
			AND EXISTS (SELECT 1 FROM entry_versions n WHERE n.space_id = v.space_id AND n.key = v.key AND n.version > v.version)
		ORDER BY v.created_at, v.id LIMIT $5`
	// crowdedKeysSQL finds the entries of an org with more than a number of
	// versions, one space at a time through the (space_id, key, version)
	// index. An entry has at most one version per version of its space, so
	// only spaces past that number are read.
	crowdedKeysSQL = `SELECT s.id, c.key FROM spaces s
		CROSS JOIN LATERAL (SELECT v.key FROM entry_versions v WHERE v.space_id = s.id GROUP BY v.key HAVING count(*) > $2) c
		WHERE s.org_id = $1 AND s.version > $2`
	// surplusVersionsSQL lists an entry's versions but the newest few.
	surplusVersionsSQL = `SELECT id FROM entry_versions WHERE org_id = $1 AND space_id = $2 AND key = $3
		ORDER BY version DESC OFFSET $4`
	versionsDeleteSQL = `WITH doomed AS (
			SELECT v.id FROM entry_versions v WHERE v.id = ANY($2) AND v.org_id = $1
				AND EXISTS (SELECT 1 FROM entry_versions n WHERE n.space_id = v.space_id AND n.key = v.key AND n.version > v.version)
			ORDER BY v.id FOR UPDATE SKIP LOCKED)
		DELETE FROM entry_versions WHERE id IN (SELECT id FROM doomed)`
	spaceVersionsDeleteSQL = `DELETE FROM entry_versions WHERE id IN (
		SELECT id FROM entry_versions WHERE org_id = $1 AND space_id = $2 ORDER BY id LIMIT $3 FOR UPDATE)`
)

// VersionsPurge deletes an org's versions beyond its retention, in batches
// (teammem.PurgeVersions).
func (db *DB) VersionsPurge(ctx context.Context, orgID int64, p teammem.VersionsPurgeParams) (teammem.VersionsPurged, error) {
	var at time.Time // the age cursor: the last row of the previous batch
	var id int64
	return teammem.PurgeVersions(p, teammem.VersionPurger{
		NextAged: func(batch int) ([]int64, error) {
			rows, err := db.pool.Query(ctx, agedVersionsSQL, orgID, p.Before, at, id, batch)
			if err != nil {
				return nil, interpret(err)
			}
			var ids []int64
			_, err = pgx.ForEachRow(rows, []any{&id, &at}, func() error {
				ids = append(ids, id)
				return nil
			})
			return ids, interpret(err)
		},
		Crowded: func(keep int) ([]teammem.EntryRef, error) {
			rows, err := db.pool.Query(ctx, crowdedKeysSQL, orgID, keep)
			return collect(rows, err, func(r pgx.Row) (teammem.EntryRef, error) {
				var sk teammem.EntryRef
				return sk, r.Scan(&sk.SpaceID, &sk.Key)
			})
		},
		Surplus: func(e teammem.EntryRef, keep int) ([]int64, error) {
			rows, err := db.pool.Query(ctx, surplusVersionsSQL, orgID, e.SpaceID, e.Key, keep)
			return collect(rows, err, func(r pgx.Row) (int64, error) {
				var v int64
				return v, r.Scan(&v)
			})
		},
		Delete: func(ids []int64) (int, error) {
			tag, err := db.pool.Exec(ctx, versionsDeleteSQL, orgID, ids)
			if err != nil {
				return int(tag.RowsAffected()), fmt.Errorf("delete versions: %w", interpret(err))
			}
			return int(tag.RowsAffected()), nil
		},
	})
}

// SpaceVersionsPurge deletes every version of a space, DefaultPurgeBatch
// rows per transaction, and the content of every proposal of the space
// and its session notes, then asks for the rewrite of the tables.
func (db *DB) SpaceVersionsPurge(ctx context.Context, orgID, spaceID int64) (int, error) {
	total := 0
	for {
		tag, err := db.pool.Exec(ctx, spaceVersionsDeleteSQL, orgID, spaceID, teammem.DefaultPurgeBatch)
		if err != nil {
			return total, fmt.Errorf("delete versions of space %d: %w", spaceID, interpret(err))
		}
		total += int(tag.RowsAffected())
		if tag.RowsAffected() < teammem.DefaultPurgeBatch {
			break
		}
	}
	// The proposals' transaction comes after every batch's: its id is the
	// one the rewrites wait past.
	var tables []string
	xid := uint64(0)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		proposals, err := proposalsErase(ctx, tx, orgID, spaceID, teammem.ProposalErasure{})
		if err != nil {
			return err
		}
		tables = erasedTables(proposals)
		tag, err := tx.Exec(ctx, sessionNotesEraseSQL, orgID, spaceID)
		if err != nil {
			return fmt.Errorf("erase session notes of space %d: %w", spaceID, interpret(err))
		}
		if tag.RowsAffected() > 0 {
			tables = append(tables, tableSessionNotes)
		}
		xid, err = erasureRecord(ctx, tx, tables...)
		return err
	})
	if err != nil {
		return total, interpret(err)
	}
	db.scrubAfterErase(xid, tables...)
	return total, nil
}

// sessionNotesEraseSQL deletes the session notes a purge of a space's
// history erases (teammem.Store.SpaceVersionsPurge): those uploaded for the
// space and, when it is a personal space, every one its owner uploaded.
// $1 org, $2 space.
const sessionNotesEraseSQL = `DELETE FROM session_notes WHERE org_id = $1 AND (space_id = $2 OR uploader_id =
	(SELECT user_id FROM spaces WHERE org_id = $1 AND id = $2 AND scope = 'personal'))`

// versionGet reads one version with its content: EntryVersionGet's
// statement, on a pool or in a transaction.
func versionGet(ctx context.Context, q querier, orgID, spaceID int64, key string, version int64) (teammem.EntryVersion, error) {
	var content *string
	v, err := scanVersion(q.QueryRow(ctx, `SELECT `+versionColumns+`, v.content`+versionsFrom+` AND v.version = $4`,
		orgID, spaceID, key, version), &content)
	if content != nil {
		v.Content = *content
	}
	return v, err
}
