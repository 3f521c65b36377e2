package sqlite

import (
	"context"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// EntriesSearch ranks an org's live entries with FTS5 (migration 0015):
// the MATCH reads only the org's range of rowids, and bm25 ranks (lower
// is better, so its negation is the score).
func (db *DB) EntriesSearch(ctx context.Context, orgID int64, f teammem.SearchFilter) ([]teammem.SearchRow, error) {
	q := `SELECT r.slug, sp.scope, e.key, e.content, -bm25(entry_fts) AS score, e.updated_at, coalesce(u.handle, '')
		FROM entry_fts
		JOIN entry_search s ON s.id = entry_fts.rowid
		JOIN entries e ON e.space_id = s.space_id AND e.key = s.key
		JOIN spaces sp ON sp.id = e.space_id
		JOIN repos r ON r.id = sp.repo_id
		LEFT JOIN users u ON u.id = e.author_id
		WHERE entry_fts MATCH ? AND entry_fts.rowid > ? AND entry_fts.rowid < ?
		AND e.org_id = ? AND e.deleted = 0 AND r.store = 0 AND (sp.scope = 'team' OR sp.user_id = ?)`
	args := []any{ftsQuery(f.Terms), orgID << 32, (orgID + 1) << 32, orgID, f.UserID}
	if f.RepoID != 0 {
		q += ` AND sp.repo_id = ?`
		args = append(args, f.RepoID)
	}
	if f.Scope != "" {
		q += ` AND sp.scope = ?`
		args = append(args, string(f.Scope))
	}
	q += ` ORDER BY score DESC, e.space_id, e.key LIMIT ? OFFSET ?`
	args = append(args, f.Limit, f.Offset)
	rows, err := db.query(ctx, q, args...)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.SearchRow
	for rows.Next() {
		var r teammem.SearchRow
		var scope string
		var updated int64
		if err := rows.Scan(&r.Repo, &scope, &r.Key, &r.Content, &r.Score, &updated, &r.UpdatedBy); err != nil {
			return nil, interpret(err)
		}
		r.Scope, r.UpdatedAt = teammem.Scope(scope), fromMicros(updated)
		out = append(out, r)
	}
	return out, interpret(rows.Err())
}

// ftsQuery is terms as an FTS5 query: each word a string, which the
// tokenizer folds as it folded the text, all of them required.
func ftsQuery(terms []teammem.SearchTerm) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`
		if t.Prefix {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, " ")
}
