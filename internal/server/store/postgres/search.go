package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// EntriesSearch finds an org's live entries with the GIN index on
// entries.search (migration 0015): the query holds the org's lexeme (and
// a repo's spaces' lexemes), so the index yields that org's matches only.
// Of the matches the caller may read, the SearchCandidates most recently
// written are returned, their content read for those only, and
// teammem.RankSearch ranks them as it ranks SQLite's.
func (db *DB) EntriesSearch(ctx context.Context, orgID int64, f teammem.SearchFilter) ([]teammem.SearchRow, error) {
	scope, err := db.searchScope(ctx, orgID, f)
	if err != nil || scope == "" {
		return nil, err
	}
	// The candidates are sorted by their row ids alone and read back by
	// them (a TID scan), within the one statement: sorting with the
	// content would spill past work_mem, and reading back by key costs an
	// index search per candidate. The statement is planned for its words
	// each time (QueryExecModeExec, not a cached prepared statement): a
	// generic plan cannot tell a rare word from one every entry holds, and
	// chose an index search per space of the org (330 ms instead of 27 on
	// the scale database).
	rows, err := db.pool.Query(ctx, `WITH cand AS (SELECT e.ctid AS tid
			FROM entries e JOIN spaces sp ON sp.id = e.space_id
			WHERE e.search @@ (to_tsquery('simple', $1) && $2::tsquery) AND e.org_id = $3
			AND (sp.scope = 'team' OR sp.user_id = $4) AND ($5 = '' OR sp.scope = $5)
			AND sp.repo_id NOT IN (SELECT id FROM repos WHERE org_id = $3 AND store)
			ORDER BY e.updated_at DESC, e.space_id, e.key COLLATE "C" LIMIT $6)
		SELECT r.slug, sp.scope, e.key, left(e.content, $7), e.updated_at, coalesce(u.handle, '')
		FROM entries e
		JOIN spaces sp ON sp.id = e.space_id
		JOIN repos r ON r.id = sp.repo_id
		LEFT JOIN users u ON u.id = e.author_id
		WHERE e.ctid = ANY (ARRAY(SELECT tid FROM cand)) AND e.org_id = $3 AND NOT e.deleted`, pgx.QueryExecModeExec,
		tsQuery(f.Terms), scope, orgID, f.UserID, string(f.Scope), teammem.SearchCandidates, teammem.SearchTextMax)
	return collect(rows, err, func(row pgx.Row) (teammem.SearchRow, error) {
		var r teammem.SearchRow
		var scope string
		err := row.Scan(&r.Repo, &scope, &r.Key, &r.Text, &r.UpdatedAt, &r.UpdatedBy)
		r.Scope, r.UpdatedAt = teammem.Scope(scope), r.UpdatedAt.UTC()
		return r, err
	})
}

// searchScope is the lexemes a search of f intersects with its words: the
// org's, and for a repo those of its spaces the caller reads ("" when
// there is none, so nothing can be found).
func (db *DB) searchScope(ctx context.Context, orgID int64, f teammem.SearchFilter) (string, error) {
	org := "'~org" + strconv.FormatInt(orgID, 10) + "'"
	if f.RepoID == 0 {
		return org, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id FROM spaces WHERE org_id = $1 AND repo_id = $2 AND (scope = 'team' OR user_id = $3)`,
		orgID, f.RepoID, f.UserID)
	ids, err := collect(rows, err, func(row pgx.Row) (int64, error) {
		var id int64
		return id, row.Scan(&id)
	})
	if err != nil || len(ids) == 0 {
		return "", err
	}
	spaces := make([]string, len(ids))
	for i, id := range ids {
		spaces[i] = "'~s" + strconv.FormatInt(id, 10) + "'"
	}
	return org + " & (" + strings.Join(spaces, " | ") + ")", nil
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
