package sqlite

import (
	"context"
	"strconv"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// EntriesSearch finds an org's live entries with FTS5 (migration 0015).
// The index alone picks them: the org's range of rowids, the words, and
// the tags of the spaces the caller may read, newest rowid (latest write)
// first, at most SearchCandidates. FTS5's own bm25 is not used: it counts
// each phrase's rows in the whole index, every org's, on every query, and
// the tags are phrases every entry holds; teammem.RankSearch ranks the
// candidates instead. Entries are read for the candidates only.
func (db *DB) EntriesSearch(ctx context.Context, orgID int64, f teammem.SearchFilter) ([]teammem.SearchRow, error) {
	match, err := db.searchMatch(ctx, orgID, f)
	if err != nil || match == "" {
		return nil, err
	}
	rows, err := db.query(ctx, `WITH cand AS (SELECT rowid AS id FROM entry_fts
			WHERE entry_fts MATCH ? AND rowid > ? AND rowid < ? ORDER BY rowid DESC LIMIT ?)
		SELECT r.slug, sp.scope, e.key, substr(e.content, 1, ?), e.updated_at, coalesce(u.handle, '')
		FROM cand c
		JOIN entry_search s ON s.id = c.id
		JOIN entries e ON e.space_id = s.space_id AND e.key = s.key
		JOIN spaces sp ON sp.id = e.space_id
		JOIN repos r ON r.id = sp.repo_id
		LEFT JOIN users u ON u.id = e.author_id
		WHERE e.org_id = ? AND e.deleted = 0`,
		match, orgID<<32, (orgID+1)<<32, teammem.SearchCandidates, teammem.SearchTextMax, orgID)
	if err != nil {
		return nil, interpret(err)
	}
	defer rows.Close()
	var out []teammem.SearchRow
	for rows.Next() {
		var r teammem.SearchRow
		var scope string
		var updated int64
		if err := rows.Scan(&r.Repo, &scope, &r.Key, &r.Text, &updated, &r.UpdatedBy); err != nil {
			return nil, interpret(err)
		}
		r.Scope, r.UpdatedAt = teammem.Scope(scope), fromMicros(updated)
		out = append(out, r)
	}
	return out, interpret(rows.Err())
}

// searchMatch is f as an FTS5 query: every word in the body column (a
// string each, which the tokenizer folds as it folded the text), and the
// tags of what f may read: the team spaces or the caller's own ("team",
// "u<id>"), or a repo's spaces the caller reads ("s<id>"). "" when f can
// find nothing (the repo has no such space).
func (db *DB) searchMatch(ctx context.Context, orgID int64, f teammem.SearchFilter) (string, error) {
	words := make([]string, len(f.Terms))
	for i, t := range f.Terms {
		words[i] = `"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`
		if t.Prefix {
			words[i] += "*"
		}
	}
	match := "body : (" + strings.Join(words, " ") + ") AND tags : "
	if f.RepoID == 0 {
		user := "u" + strconv.FormatInt(f.UserID, 10)
		switch f.Scope {
		case teammem.ScopeTeam:
			return match + "team", nil
		case teammem.ScopePersonal:
			return match + user, nil
		}
		return match + "(team OR " + user + ")", nil
	}
	rows, err := db.query(ctx, `SELECT id FROM spaces WHERE org_id = ? AND repo_id = ? AND (scope = 'team' OR user_id = ?)
		AND (? = '' OR scope = ?)`, orgID, f.RepoID, f.UserID, string(f.Scope), string(f.Scope))
	if err != nil {
		return "", interpret(err)
	}
	defer rows.Close()
	var spaces []string
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return "", interpret(err)
		}
		spaces = append(spaces, "s"+strconv.FormatInt(id, 10))
	}
	if err := rows.Err(); err != nil || len(spaces) == 0 {
		return "", interpret(err)
	}
	return match + "(" + strings.Join(spaces, " OR ") + ")", nil
}
