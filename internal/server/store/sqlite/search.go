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
	// The ranking reads only the index, the rowid map and the spaces: the
	// entries' content is read for the page alone, not for every match.
	q := `WITH hits AS (SELECT s.space_id, s.key, r.slug, sp.scope, -bm25(entry_fts) AS score
		FROM entry_fts
		JOIN entry_search s ON s.id = entry_fts.rowid
		JOIN spaces sp ON sp.id = s.space_id
		JOIN repos r ON r.id = sp.repo_id
		WHERE entry_fts MATCH ? AND entry_fts.rowid > ? AND entry_fts.rowid < ?
		AND sp.org_id = ? AND r.store = 0 AND (sp.scope = 'team' OR sp.user_id = ?)`
	args := []any{ftsQuery(f.Terms), orgID << 32, (orgID + 1) << 32, orgID, f.UserID}
	if f.RepoID != 0 {
		q += ` AND sp.repo_id = ?`
		args = append(args, f.RepoID)
	}
	if f.Scope != "" {
		q += ` AND sp.scope = ?`
		args = append(args, string(f.Scope))
	}
	q += ` ORDER BY score DESC, s.space_id, s.key LIMIT ? OFFSET ?)
		SELECT h.slug, h.scope, h.key, e.content, h.score, e.updated_at, coalesce(u.handle, '')
		FROM hits h JOIN entries e ON e.space_id = h.space_id AND e.key = h.key
		LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.deleted = 0
		ORDER BY h.score DESC, h.space_id, h.key`
	args = append(args, f.Limit, f.Offset, orgID)
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
