package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

const repoColumns = `id, org_id, slug, created_at, store`

func scanRepo(row pgx.Row) (teammem.Repo, error) {
	var r teammem.Repo
	if err := row.Scan(&r.ID, &r.OrgID, &r.Slug, &r.CreatedAt, &r.Store); err != nil {
		return r, interpret(err)
	}
	return r, nil
}

// RepoGet returns a repo by slug.
func (db *DB) RepoGet(ctx context.Context, orgID int64, slug string) (teammem.Repo, error) {
	return scanRepo(db.pool.QueryRow(ctx, `SELECT `+repoColumns+` FROM repos WHERE org_id = $1 AND slug = $2`, orgID, slug))
}

// RepoEnsure returns a repo by slug, creating it when missing (ENotFound
// when the org does not exist).
func (db *DB) RepoEnsure(ctx context.Context, orgID int64, slug string) (teammem.Repo, error) {
	if r, err := db.RepoGet(ctx, orgID, slug); teammem.ErrorCode(err) != teammem.ENotFound {
		return r, err
	}
	// DO UPDATE rather than DO NOTHING so that RETURNING also yields the row
	// a concurrent caller inserted first.
	return scanRepo(db.pool.QueryRow(ctx, `INSERT INTO repos (org_id, slug, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (org_id, slug) DO UPDATE SET slug = excluded.slug RETURNING `+repoColumns, orgID, slug, now()))
}

// RepoList lists an org's repos in slug byte order with their team space
// heads; a repo whose team space was never written gets an empty head.
func (db *DB) RepoList(ctx context.Context, orgID int64) ([]teammem.RepoSummary, error) {
	rows, err := db.pool.Query(ctx, `SELECT r.id, r.org_id, r.slug, r.created_at,
			coalesce(s.id, 0), coalesce(s.version, 0), coalesce(s.checksum, ''), coalesce(s.entry_count, 0),
			coalesce(s.total_bytes, 0), coalesce(s.updated_at, r.created_at)
		FROM repos r LEFT JOIN spaces s ON s.org_id = r.org_id AND s.repo_id = r.id AND s.scope = 'team'
		WHERE r.org_id = $1 AND NOT r.store ORDER BY r.slug COLLATE "C"`, orgID)
	return collect(rows, err, func(row pgx.Row) (teammem.RepoSummary, error) {
		var s teammem.RepoSummary
		if err := row.Scan(&s.ID, &s.OrgID, &s.Slug, &s.CreatedAt, &s.Team.ID, &s.Team.Version, &s.Team.Checksum,
			&s.Team.EntryCount, &s.Team.TotalBytes, &s.Team.UpdatedAt); err != nil {
			return s, interpret(err)
		}
		s.CompleteTeam()
		return s, nil
	})
}
