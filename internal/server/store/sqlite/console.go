package sqlite

import (
	"context"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// The web console's sessions, login links and overview aggregates
// (teammem.ConsoleStore).

var _ teammem.ConsoleStore = (*DB)(nil)

const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// ConsoleSessionCreate stores a new session.
func (db *DB) ConsoleSessionCreate(ctx context.Context, orgID int64, s teammem.ConsoleSession) error {
	return db.writing(ctx, orgID, func() error {
		_, err := db.w.ExecContext(ctx, `INSERT INTO console_sessions (id_hash, org_id, key_hash, csrf, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?)`, s.IDHash, orgID, s.KeyHash, s.CSRF, micros(s.CreatedAt), micros(s.ExpiresAt))
		return interpret(err)
	})
}

// ConsoleSessionGet returns a live session by the hash of its id.
func (db *DB) ConsoleSessionGet(ctx context.Context, idHash []byte, now time.Time) (teammem.ConsoleSession, error) {
	s := teammem.ConsoleSession{IDHash: idHash}
	var created, expires int64
	err := db.queryRow(ctx, `SELECT org_id, key_hash, csrf, created_at, expires_at FROM console_sessions
		WHERE id_hash = ? AND expires_at > ?`, idHash, micros(now)).Scan(&s.OrgID, &s.KeyHash, &s.CSRF, &created, &expires)
	if err != nil {
		return s, interpret(err)
	}
	s.CreatedAt, s.ExpiresAt = fromMicros(created), fromMicros(expires)
	return s, nil
}

// ConsoleSessionDelete ends a session and sweeps expired ones.
func (db *DB) ConsoleSessionDelete(ctx context.Context, idHash []byte, now time.Time) error {
	// The session's org is not known here: the turn is org 0's.
	return db.writing(ctx, 0, func() error {
		_, err := db.w.ExecContext(ctx, `DELETE FROM console_sessions WHERE id_hash = ? OR expires_at <= ?`, idHash, micros(now))
		return interpret(err)
	})
}

// LoginLinkCreate stores a one-time login link.
func (db *DB) LoginLinkCreate(ctx context.Context, orgID int64, l teammem.LoginLink) error {
	return db.writing(ctx, orgID, func() error {
		_, err := db.w.ExecContext(ctx, `INSERT INTO console_login_links (token_hash, org_id, key_hash, expires_at) VALUES (?, ?, ?, ?)`,
			l.TokenHash, orgID, l.KeyHash, micros(l.ExpiresAt))
		return interpret(err)
	})
}

// LoginLinkRedeem uses up a link in one statement, so that of two
// redemptions only one sees the row it changed.
func (db *DB) LoginLinkRedeem(ctx context.Context, tokenHash []byte, now time.Time) (teammem.LoginLink, error) {
	l := teammem.LoginLink{TokenHash: tokenHash}
	var expires int64
	err := db.writing(ctx, 0, func() error {
		return db.w.QueryRowContext(ctx, `UPDATE console_login_links SET used_at = ?
			WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?
			RETURNING org_id, key_hash, expires_at`, micros(now), tokenHash, micros(now)).Scan(&l.OrgID, &l.KeyHash, &expires)
	})
	if err != nil {
		return l, interpret(err)
	}
	l.ExpiresAt = fromMicros(expires)
	return l, nil
}

// TeamWritesPerDay counts an org's team-space versions per UTC day.
func (db *DB) TeamWritesPerDay(ctx context.Context, orgID int64, since time.Time) ([]teammem.DayCount, error) {
	rows, err := db.query(ctx, `SELECT v.created_at / ? AS day, count(*) FROM entry_versions v
		JOIN spaces s ON s.id = v.space_id AND s.scope = 'team'
		WHERE v.org_id = ? AND v.created_at >= ? GROUP BY day ORDER BY day`, microsPerDay, orgID, micros(since))
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.DayCount
	for rows.Next() {
		var day int64
		var n int
		if err := rows.Scan(&day, &n); err != nil {
			return nil, interpret(err)
		}
		out = append(out, teammem.DayCount{Day: fromMicros(day * microsPerDay), Count: n})
	}
	return out, interpret(rows.Err())
}

// TeamLastWrites returns the newest version of each repo's team space.
func (db *DB) TeamLastWrites(ctx context.Context, orgID int64) (map[string]teammem.LastWrite, error) {
	rows, err := db.query(ctx, `WITH last AS (SELECT space_id, max(id) AS id FROM entry_versions WHERE org_id = ? GROUP BY space_id)
		SELECT r.slug, coalesce(u.handle, ''), v.created_at FROM last
		JOIN entry_versions v ON v.id = last.id
		JOIN spaces s ON s.id = last.space_id AND s.scope = 'team'
		JOIN repos r ON r.id = s.repo_id
		LEFT JOIN users u ON u.id = v.author_id`, orgID)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	out := map[string]teammem.LastWrite{}
	for rows.Next() {
		var slug string
		var w teammem.LastWrite
		var at int64
		if err := rows.Scan(&slug, &w.Author, &at); err != nil {
			return nil, interpret(err)
		}
		w.At = fromMicros(at)
		out[slug] = w
	}
	return out, interpret(rows.Err())
}

// KeysWithPrefix returns up to limit keys of any org with a display prefix.
func (db *DB) KeysWithPrefix(ctx context.Context, prefix string, limit int) ([]teammem.APIKey, error) {
	rows, err := db.query(ctx, `SELECT `+keyColumns+` FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.prefix = ? ORDER BY k.created_at, k.id LIMIT ?`, prefix, limit)
	return scanKeys(rows, err)
}
