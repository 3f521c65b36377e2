package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// The web console's sessions, login links and overview aggregates
// (teammem.ConsoleStore).

var _ teammem.ConsoleStore = (*DB)(nil)

// ConsoleSessionCreate stores a new session.
func (db *DB) ConsoleSessionCreate(ctx context.Context, orgID int64, s teammem.ConsoleSession) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO console_sessions (id_hash, org_id, key_hash, csrf, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, s.IDHash, orgID, s.KeyHash, s.CSRF, s.CreatedAt, s.ExpiresAt)
	return interpret(err)
}

// ConsoleSessionGet returns a live session by the hash of its id.
func (db *DB) ConsoleSessionGet(ctx context.Context, idHash []byte, now time.Time) (teammem.ConsoleSession, error) {
	s := teammem.ConsoleSession{IDHash: idHash}
	err := db.pool.QueryRow(ctx, `SELECT org_id, key_hash, csrf, created_at, expires_at FROM console_sessions
		WHERE id_hash = $1 AND expires_at > $2`, idHash, now).Scan(&s.OrgID, &s.KeyHash, &s.CSRF, &s.CreatedAt, &s.ExpiresAt)
	s.CreatedAt, s.ExpiresAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	return s, interpret(err)
}

// ConsoleSessionDelete ends a session and sweeps expired ones.
func (db *DB) ConsoleSessionDelete(ctx context.Context, idHash []byte, now time.Time) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM console_sessions WHERE id_hash = $1 OR expires_at <= $2`, idHash, now)
	return interpret(err)
}

// LoginLinkCreate stores a one-time login link.
func (db *DB) LoginLinkCreate(ctx context.Context, orgID int64, l teammem.LoginLink) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO console_login_links (token_hash, org_id, key_hash, expires_at) VALUES ($1, $2, $3, $4)`,
		l.TokenHash, orgID, l.KeyHash, l.ExpiresAt)
	return interpret(err)
}

// LoginLinkRedeem uses up a link in one statement, so that of two
// redemptions only one sees the row it changed.
func (db *DB) LoginLinkRedeem(ctx context.Context, tokenHash []byte, now time.Time) (teammem.LoginLink, error) {
	l := teammem.LoginLink{TokenHash: tokenHash}
	err := db.pool.QueryRow(ctx, `UPDATE console_login_links SET used_at = $2
		WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
		RETURNING org_id, key_hash, expires_at`, tokenHash, now).Scan(&l.OrgID, &l.KeyHash, &l.ExpiresAt)
	l.ExpiresAt = l.ExpiresAt.UTC()
	return l, interpret(err)
}

// TeamWritesPerDay counts an org's team-space versions per UTC day.
func (db *DB) TeamWritesPerDay(ctx context.Context, orgID int64, since time.Time) ([]teammem.DayCount, error) {
	rows, err := db.pool.Query(ctx, `SELECT date_trunc('day', v.created_at AT TIME ZONE 'UTC') AS day, count(*) FROM entry_versions v
		JOIN spaces s ON s.id = v.space_id AND s.scope = 'team'
		WHERE v.org_id = $1 AND v.created_at >= $2 GROUP BY day ORDER BY day`, orgID, since)
	return collect(rows, err, func(row pgx.Row) (teammem.DayCount, error) {
		var d teammem.DayCount
		var day time.Time
		err := row.Scan(&day, &d.Count)
		// A timestamp without zone comes back as UTC wall time.
		d.Day = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
		return d, interpret(err)
	})
}

// TeamLastWrites returns the newest version of each repo's team space.
func (db *DB) TeamLastWrites(ctx context.Context, orgID int64) (map[string]teammem.LastWrite, error) {
	rows, err := db.pool.Query(ctx, `WITH last AS (SELECT space_id, max(id) AS id FROM entry_versions WHERE org_id = $1 GROUP BY space_id)
		SELECT r.slug, coalesce(u.handle, ''), v.created_at FROM last
		JOIN entry_versions v ON v.id = last.id
		JOIN spaces s ON s.id = last.space_id AND s.scope = 'team'
		JOIN repos r ON r.id = s.repo_id
		LEFT JOIN users u ON u.id = v.author_id`, orgID)
	type row struct {
		slug string
		w    teammem.LastWrite
	}
	list, err := collect(rows, err, func(r pgx.Row) (row, error) {
		var x row
		err := r.Scan(&x.slug, &x.w.Author, &x.w.At)
		x.w.At = x.w.At.UTC()
		return x, interpret(err)
	})
	out := make(map[string]teammem.LastWrite, len(list))
	for _, x := range list {
		out[x.slug] = x.w
	}
	return out, err
}

// KeysWithPrefix returns up to limit keys of any org with a display prefix.
func (db *DB) KeysWithPrefix(ctx context.Context, prefix string, limit int) ([]teammem.APIKey, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.prefix = $1 ORDER BY k.created_at, k.id COLLATE "C" LIMIT $2`, prefix, limit)
	return collect(rows, err, func(r pgx.Row) (teammem.APIKey, error) { return scanKey(r) })
}
