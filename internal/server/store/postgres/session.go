package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// sessionsSQL returns, for the page of sessions a filter selects, one row
// per session and visible space (see the SQLite driver's twin). $1 org,
// $2 session id or empty, $3 user id of visible personal spaces, $4 cursor
// session id or empty, $5 cursor time, $6 limit.
const sessionsSQL = `WITH act AS (
		SELECT v.session_id AS sid, v.space_id, min(v.created_at) AS first_at, max(v.created_at) AS last_at,
			count(*) AS writes, 0::bigint AS notes
		FROM entry_versions v
		WHERE v.org_id = $1 AND v.session_id <> '' AND length(v.session_id) = 36 AND ($2 = '' OR v.session_id = $2)
		GROUP BY v.session_id, v.space_id
		UNION ALL
		SELECT n.session_id, n.space_id, n.created_at, n.updated_at, 0, n.size FROM session_notes n
		WHERE n.org_id = $1 AND ($2 = '' OR n.session_id = $2)
	), vis AS (
		SELECT a.*, s.scope, coalesce(s.user_id, 0) AS owner, r.slug, r.store, s.uid
		FROM act a JOIN spaces s ON s.id = a.space_id JOIN repos r ON r.id = s.repo_id
		WHERE s.org_id = $1 AND (s.scope = 'team' OR s.user_id = $3)
	), page AS (
		SELECT sid, min(first_at) AS first_at FROM vis GROUP BY sid
		HAVING $4 = '' OR min(first_at) < $5 OR (min(first_at) = $5 AND sid < $4)
		ORDER BY first_at DESC, sid DESC LIMIT $6
	)
	SELECT vis.sid, vis.space_id, vis.slug, vis.store, vis.scope, vis.owner, vis.uid,
		min(vis.first_at), max(vis.last_at), sum(vis.writes)::bigint, sum(vis.notes)::bigint
	FROM vis JOIN page ON page.sid = vis.sid
	GROUP BY vis.sid, vis.space_id, vis.slug, vis.store, vis.scope, vis.owner, vis.uid`

// SessionsList returns the sessions f selects (teammem.SessionStore).
func (db *DB) SessionsList(ctx context.Context, orgID int64, f teammem.SessionFilter) ([]teammem.Session, error) {
	before := f.Before.FirstSeen
	if before.IsZero() {
		before = time.Unix(0, 0)
	}
	rows, err := db.pool.Query(ctx, sessionsSQL, orgID, f.ClaudeCodeSessionID, f.UserID, f.Before.ClaudeCodeSessionID,
		before, teammem.ListLimit(f.Limit))
	list, err := collect(rows, err, func(row pgx.Row) (teammem.SessionSpaceRow, error) {
		var r teammem.SessionSpaceRow
		var scope string
		var writes int64
		err := row.Scan(&r.ClaudeCodeSessionID, &r.Space.SpaceID, &r.Space.Repo, &r.Space.Store, &scope, &r.Space.UserID,
			&r.SpaceUID, &r.FirstSeen, &r.LastSeen, &writes, &r.Space.NotesSize)
		r.Space.Scope, r.Space.Writes = teammem.Scope(scope), int(writes)
		r.FirstSeen, r.LastSeen = r.FirstSeen.UTC(), r.LastSeen.UTC()
		return r, interpret(err)
	})
	if err != nil {
		return nil, err
	}
	return teammem.GroupSessions(orgID, list), nil
}

// SessionNotesPut stores a session's notes for a space, replacing earlier
// ones (teammem.SessionStore).
func (db *DB) SessionNotesPut(ctx context.Context, orgID int64, p teammem.SessionNotesPutParams) (teammem.SessionNotes, error) {
	n, err := scanNotes(db.pool.QueryRow(ctx, `INSERT INTO session_notes
		(org_id, session_id, space_id, uploader_id, key_id, content, size, checksum, created_at, updated_at)
		SELECT $1, $2, s.id, $4, $5, $6, $7, $8, $9, $9 FROM spaces s WHERE s.id = $3 AND s.org_id = $1
		ON CONFLICT (org_id, session_id, space_id) DO UPDATE SET uploader_id = excluded.uploader_id,
			key_id = excluded.key_id, content = excluded.content, size = excluded.size,
			checksum = excluded.checksum, updated_at = excluded.updated_at
		RETURNING `+notesColumns, orgID, p.ClaudeCodeSessionID, p.SpaceID, nullID(p.UploaderID),
		p.KeyID, p.Content, len(p.Content), teammem.EntryChecksum(p.Content), now()))
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return n, teammem.Errorf(teammem.EInvalid, "space %d is not the org's", p.SpaceID)
	}
	return n, err
}

const notesColumns = `org_id, session_id, space_id, coalesce(uploader_id, 0), key_id, content, size, checksum, created_at, updated_at`

func scanNotes(row pgx.Row) (teammem.SessionNotes, error) {
	var n teammem.SessionNotes
	err := row.Scan(&n.OrgID, &n.ClaudeCodeSessionID, &n.SpaceID, &n.UploaderID, &n.KeyID, &n.Content, &n.Size, &n.Checksum, &n.CreatedAt, &n.UpdatedAt)
	n.CreatedAt, n.UpdatedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC()
	return n, interpret(err)
}

// SessionNotesList returns a session's notes (teammem.SessionStore).
func (db *DB) SessionNotesList(ctx context.Context, orgID int64, ccSessionID string) ([]teammem.SessionNotes, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+notesColumns+` FROM session_notes WHERE org_id = $1 AND session_id = $2 ORDER BY space_id`,
		orgID, ccSessionID)
	return collect(rows, err, scanNotes)
}

// SessionVersionsList returns the versions a session wrote
// (teammem.SessionStore).
func (db *DB) SessionVersionsList(ctx context.Context, orgID int64, ccSessionID string, f teammem.SessionVersionsFilter) ([]teammem.EntryVersion, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+versionColumns+`, coalesce(v.content, '') FROM entry_versions v
		LEFT JOIN users u ON u.id = v.author_id JOIN spaces s ON s.id = v.space_id
		WHERE v.org_id = $1 AND v.session_id <> '' AND v.session_id = $2 AND (NOT $3 OR s.scope = 'team') AND v.id > $5
		ORDER BY v.id LIMIT $4`, orgID, ccSessionID, f.TeamOnly, teammem.ListLimit(f.Limit), f.AfterID)
	return collect(rows, err, func(row pgx.Row) (teammem.EntryVersion, error) {
		var content string
		v, err := scanVersion(row, &content)
		v.Content = content
		return v, err
	})
}
