package sqlite

import (
	"context"

	"github.com/teammem/teammem/internal/teammem"
)

func scanRepo(row rowScanner) (teammem.Repo, error) {
	var r teammem.Repo
	var created int64
	if err := row.Scan(&r.ID, &r.OrgID, &r.Slug, &created, &r.Store); err != nil {
		return r, interpret(err)
	}
	r.CreatedAt = fromMicros(created)
	return r, nil
}

// RepoGet returns a repo by slug.
func (db *DB) RepoGet(ctx context.Context, orgID int64, slug string) (teammem.Repo, error) {
	return scanRepo(db.queryRow(ctx, `SELECT id, org_id, slug, created_at, store FROM repos WHERE org_id = ? AND slug = ?`, orgID, slug))
}

// RepoEnsure returns a repo by slug, creating it when missing.
func (db *DB) RepoEnsure(ctx context.Context, orgID int64, slug string) (teammem.Repo, error) {
	if r, err := db.RepoGet(ctx, orgID, slug); teammem.ErrorCode(err) != teammem.ENotFound {
		return r, err
	}
	var r teammem.Repo
	err := db.writing(ctx, orgID, func() (err error) {
		r, err = scanRepo(db.w.QueryRowContext(ctx, `INSERT INTO repos (org_id, slug, created_at) VALUES (?, ?, ?)
			ON CONFLICT (org_id, slug) DO UPDATE SET slug = excluded.slug RETURNING id, org_id, slug, created_at, store`, orgID, slug, micros(now())))
		return err
	})
	return r, err
}

// RepoList lists an org's repos with their team space heads.
func (db *DB) RepoList(ctx context.Context, orgID int64) ([]teammem.RepoSummary, error) {
	rows, err := db.query(ctx, `SELECT r.id, r.org_id, r.slug, r.created_at,
			coalesce(s.id, 0), coalesce(s.version, 0), coalesce(s.checksum, ''), coalesce(s.entry_count, 0),
			coalesce(s.total_bytes, 0), coalesce(s.updated_at, r.created_at)
		FROM repos r LEFT JOIN spaces s ON s.org_id = r.org_id AND s.repo_id = r.id AND s.scope = 'team'
		WHERE r.org_id = ? AND r.store = 0 ORDER BY r.slug`, orgID)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.RepoSummary
	for rows.Next() {
		var s teammem.RepoSummary
		var created, updated int64
		if err := rows.Scan(&s.ID, &s.OrgID, &s.Slug, &created, &s.Team.ID, &s.Team.Version, &s.Team.Checksum,
			&s.Team.EntryCount, &s.Team.TotalBytes, &updated); err != nil {
			return nil, interpret(err)
		}
		s.CreatedAt, s.Team.UpdatedAt = fromMicros(created), fromMicros(updated)
		s.CompleteTeam()
		out = append(out, s)
	}
	return out, interpret(rows.Err())
}
