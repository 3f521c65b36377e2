package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"

	"github.com/teammem/teammem/internal/teammem"
)

// Erasing history. secure_delete is on for every connection, so whatever a
// delete or an update frees, SQLite overwrites with zeros in the pages it
// writes. Those pages go to the WAL first: until they are checkpointed, the
// database file still holds the old bytes, and so do the WAL's older frames.
// Every redaction and purge is therefore followed by a scrub (scrub.go),
// which ends with a TRUNCATE checkpoint that copies every frame into the
// database file and empties the WAL, off the writer's turn.

// versionSQL reads one version, as EntryVersionGet does but without content.
const versionSQL = `SELECT ` + versionColumns + ` FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id
	WHERE v.org_id = ? AND v.space_id = ? AND v.key = ? AND v.version = ?`

// VersionRedact erases one version's content, and the same content from
// the proposals of its space, under the write lock (the writer's IMMEDIATE
// transaction), then scrubs (scrub.go). A version that is redacted already
// (or missing) is answered from the read pool: no writer turn, no scrub.
func (db *DB) VersionRedact(ctx context.Context, orgID, spaceID int64, p teammem.VersionRedactParams) (teammem.EntryVersion, bool, error) {
	v, err := scanVersion(db.queryRow(ctx, versionSQL, orgID, spaceID, p.Key, p.Version))
	if err != nil || v.Redacted() {
		return v, false, err
	}
	v, changed, err := db.redact(ctx, orgID, spaceID, p)
	if err != nil || !changed {
		return v, changed, err
	}
	db.scrubAfterErase(ctx, orgID)
	return v, true, nil
}

func (db *DB) redact(ctx context.Context, orgID, spaceID int64, p teammem.VersionRedactParams) (teammem.EntryVersion, bool, error) {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return teammem.EntryVersion{}, false, err
	}
	defer tx.Rollback()
	get := func() (teammem.EntryVersion, error) {
		return scanVersion(tx.QueryRowContext(ctx, versionSQL, orgID, spaceID, p.Key, p.Version))
	}
	v, err := get()
	if err != nil {
		return v, false, err
	}
	head, err := scanHead(tx.QueryRowContext(ctx, headsSQL+` AND e.key = ?`, orgID, spaceID, p.Key))
	if err != nil && teammem.ErrorCode(err) != teammem.ENotFound {
		return v, false, err
	}
	if ok, err := teammem.PlanRedact(v, head, err == nil); err != nil || !ok {
		return v, false, err
	}
	by := sql.NullInt64{Int64: p.By, Valid: p.By != 0}
	if _, err := tx.ExecContext(ctx, `UPDATE entry_versions SET content = NULL, checksum = '', size = 0, findings = '', redacted_at = ?, redacted_by = ?
		WHERE org_id = ? AND space_id = ? AND key = ? AND version = ?`, micros(p.At), by, orgID, spaceID, p.Key, p.Version); err != nil {
		return v, false, fmt.Errorf("redact version %d of %q: %w", p.Version, p.Key, interpret(err))
	}
	if _, err := proposalsErase(ctx, tx.Tx, orgID, spaceID, teammem.ProposalErasure{Key: p.Key, Checksum: v.Checksum}); err != nil {
		return v, false, err
	}
	if err := scrubRecord(ctx, tx.Tx); err != nil {
		return v, false, err
	}
	if v, err = get(); err != nil {
		return v, false, err
	}
	return v, true, interpret(tx.Commit())
}

// The statements of the retention sweep. A batch is found on the read pool,
// where scanning costs no other writer anything, and deleted by id on the
// writer, one short transaction per batch. The delete checks again that
// each row has a newer one: a version's newest row is its live content or
// its delete marker, and concurrent writes only ever add newer rows.
const (
	// agedVersionsSQL pages, by (created_at, id), through an org's versions
	// older than a cutoff that are not their entry's newest.
	agedVersionsSQL = `SELECT v.id, v.created_at FROM entry_versions v
		WHERE v.org_id = ? AND v.created_at < ? AND (v.created_at, v.id) > (?, ?)
			AND EXISTS (SELECT 1 FROM entry_versions n WHERE n.space_id = v.space_id AND n.key = v.key AND n.version > v.version)
		ORDER BY v.created_at, v.id LIMIT ?`
	// crowdedKeysSQL finds the entries of an org with more than a number of
	// versions. An entry has at most one version per version of its space,
	// so only spaces past that number are read.
	crowdedKeysSQL = `SELECT v.space_id, v.key FROM entry_versions v
		WHERE v.space_id IN (SELECT id FROM spaces WHERE org_id = ? AND version > ?)
		GROUP BY v.space_id, v.key HAVING count(*) > ?`
	// surplusVersionsSQL lists an entry's versions but the newest few.
	surplusVersionsSQL = `SELECT id FROM entry_versions WHERE org_id = ? AND space_id = ? AND key = ?
		ORDER BY version DESC LIMIT -1 OFFSET ?`
	// The unary + keeps SQLite from reading the org's whole age index for
	// the org_id term: the ids (the primary key) are the selective part, and
	// the space id below.
	versionsDeleteSQL = `DELETE FROM entry_versions WHERE +org_id = ? AND id IN (SELECT value FROM json_each(?))
		AND EXISTS (SELECT 1 FROM entry_versions n
			WHERE n.space_id = entry_versions.space_id AND n.key = entry_versions.key AND n.version > entry_versions.version)`
	spaceVersionsDeleteSQL = `DELETE FROM entry_versions WHERE id IN (
		SELECT id FROM entry_versions WHERE +org_id = ? AND space_id = ? LIMIT ?)`
)

// VersionsPurge deletes an org's versions beyond its retention, in batches
// (teammem.PurgeVersions).
func (db *DB) VersionsPurge(ctx context.Context, orgID int64, p teammem.VersionsPurgeParams) (teammem.VersionsPurged, error) {
	at, id := int64(math.MinInt64), int64(0) // the age cursor: the last row of the previous batch
	return teammem.PurgeVersions(p, teammem.VersionPurger{
		NextAged: func(batch int) ([]int64, error) {
			rows, err := db.query(ctx, agedVersionsSQL, orgID, micros(p.Before), at, id, batch)
			if err != nil {
				return nil, interpret(err)
			}
			var ids []int64
			for rows.Next() {
				if err := rows.Scan(&id, &at); err != nil {
					rows.Close()
					return nil, interpret(err)
				}
				ids = append(ids, id)
			}
			if err := rows.Close(); err != nil {
				return nil, interpret(err)
			}
			return ids, interpret(rows.Err())
		},
		Crowded: func(keep int) ([]teammem.EntryRef, error) {
			rows, err := db.query(ctx, crowdedKeysSQL, orgID, keep, keep)
			return collect(rows, err, func(r rowScanner) (teammem.EntryRef, error) {
				var sk teammem.EntryRef
				return sk, interpret(r.Scan(&sk.SpaceID, &sk.Key))
			})
		},
		Surplus: func(e teammem.EntryRef, keep int) ([]int64, error) {
			rows, err := db.query(ctx, surplusVersionsSQL, orgID, e.SpaceID, e.Key, keep)
			return collect(rows, err, func(r rowScanner) (int64, error) {
				var id int64
				return id, interpret(r.Scan(&id))
			})
		},
		Delete: func(ids []int64) (int, error) { return db.versionsDelete(ctx, orgID, ids) },
	})
}

// versionsDelete deletes, in one transaction, those of the versions ids
// that are not their entry's newest.
func (db *DB) versionsDelete(ctx context.Context, orgID int64, ids []int64) (int, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	var n int64
	err = db.writing(ctx, orgID, func() error {
		st, err := db.stmt(ctx, db.w, versionsDeleteSQL)
		if err != nil {
			return err
		}
		res, err := st.ExecContext(ctx, orgID, string(list))
		if err != nil {
			return fmt.Errorf("delete versions: %w", interpret(err))
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}

// SpaceVersionsPurge deletes every version of a space, DefaultPurgeBatch
// rows per transaction, then scrubs.
func (db *DB) SpaceVersionsPurge(ctx context.Context, orgID, spaceID int64) (int, error) {
	total := 0
	for {
		// One turn per batch, so other writers go between batches.
		var n int64
		err := db.writing(ctx, orgID, func() error {
			st, err := db.stmt(ctx, db.w, spaceVersionsDeleteSQL)
			if err != nil {
				return err
			}
			res, err := st.ExecContext(ctx, orgID, spaceID, teammem.DefaultPurgeBatch)
			if err != nil {
				return fmt.Errorf("delete versions of space %d: %w", spaceID, interpret(err))
			}
			n, _ = res.RowsAffected()
			return nil
		})
		total += int(n)
		if err != nil {
			return total, err
		}
		if n < teammem.DefaultPurgeBatch {
			break
		}
	}
	if err := db.spaceContentErase(ctx, orgID, spaceID); err != nil {
		return total, err
	}
	db.scrubAfterErase(ctx, orgID)
	return total, nil
}

// sessionNotesEraseSQL deletes the session notes a purge of a space's
// history erases (teammem.Store.SpaceVersionsPurge): those uploaded for the
// space and, when it is a personal space, every one its owner uploaded.
// ?1 org, ?2 space.
const sessionNotesEraseSQL = `DELETE FROM session_notes WHERE org_id = ?1 AND (space_id = ?2 OR uploader_id =
	(SELECT user_id FROM spaces WHERE org_id = ?1 AND id = ?2 AND scope = 'personal'))`

// spaceContentErase erases the content of every proposal of a space and
// its session notes, in one transaction.
func (db *DB) spaceContentErase(ctx context.Context, orgID, spaceID int64) error {
	tx, err := db.begin(ctx, orgID)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := proposalsErase(ctx, tx.Tx, orgID, spaceID, teammem.ProposalErasure{}); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, sessionNotesEraseSQL, orgID, spaceID); err != nil {
		return fmt.Errorf("erase session notes of space %d: %w", spaceID, interpret(err))
	}
	if err := scrubRecord(ctx, tx.Tx); err != nil {
		return err
	}
	return interpret(tx.Commit())
}
