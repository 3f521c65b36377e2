package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// EntriesSearch ranks an org's live entries with the GIN index on
// entries.search (migration 0015): the query holds the org's own lexeme,
// so the index yields that org's matches only, and ts_rank with length
// normalisation ranks them.
func (db *DB) EntriesSearch(ctx context.Context, orgID int64, f teammem.SearchFilter) ([]teammem.SearchRow, error) {
	// The ranking reads only the index, the search column and the spaces:
	// the entries' content is read for the page alone.
	q := `WITH hits AS (SELECT e.space_id, e.key, r.slug, sp.scope, ts_rank(e.search, to_tsquery('simple', $1), 1) AS score
		FROM entries e
		JOIN spaces sp ON sp.id = e.space_id
		JOIN repos r ON r.id = sp.repo_id
		WHERE e.search @@ (to_tsquery('simple', $1) && $2::tsquery)
		AND e.org_id = $3 AND NOT r.store AND (sp.scope = 'team' OR sp.user_id = $4)`
	args := []any{tsQuery(f.Terms), "'~org" + strconv.FormatInt(orgID, 10) + "'", orgID, f.UserID}
	if f.RepoID != 0 {
		args = append(args, f.RepoID)
		q += ` AND sp.repo_id = $` + strconv.Itoa(len(args))
	}
	if f.Scope != "" {
		args = append(args, string(f.Scope))
		q += ` AND sp.scope = $` + strconv.Itoa(len(args))
	}
	args = append(args, f.Limit, f.Offset)
	q += ` ORDER BY score DESC, e.space_id, e.key COLLATE "C" LIMIT $` + strconv.Itoa(len(args)-1) + ` OFFSET $` + strconv.Itoa(len(args)) + `)
		SELECT h.slug, h.scope, h.key, e.content, h.score, e.updated_at, coalesce(u.handle, '')
		FROM hits h JOIN entries e ON e.space_id = h.space_id AND e.key = h.key
		LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = $3 AND NOT e.deleted
		ORDER BY h.score DESC, h.space_id, h.key COLLATE "C"`
	rows, err := db.pool.Query(ctx, q, args...)
	return collect(rows, err, func(row pgx.Row) (teammem.SearchRow, error) {
		var r teammem.SearchRow
		var scope string
		var score float32
		err := row.Scan(&r.Repo, &scope, &r.Key, &r.Content, &score, &r.UpdatedAt, &r.UpdatedBy)
		r.Scope, r.Score, r.UpdatedAt = teammem.Scope(scope), float64(score), r.UpdatedAt.UTC()
		return r, err
	})
}

// tsQuery is terms as to_tsquery's text: each word quoted (it holds
// letters and digits only, which the parser keeps as one word), all of
// them required, a prefix word marked :*.
func tsQuery(terms []teammem.SearchTerm) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + strings.ReplaceAll(t.Text, "'", "''") + "'"
		if t.Prefix {
			parts[i] += ":*"
		}
	}
	return strings.Join(parts, " & ")
}
