package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// SearchParams is one search, as GET /v1/search and the MCP search tool
// ask for it. Repo ("" = every repo the key reads) and Scope ("" = both)
// narrow it; Limit is 1..100 (0 = 20); Page is a NextPage cursor.
type SearchParams struct {
	Query string
	Repo  string
	Scope teammem.Scope
	Limit int
	Page  string
}

// Search pages.
const (
	searchLimit    = 20
	searchMaxLimit = 100
	// searchMaxOffset bounds how deep pages go: a search ranks at most
	// SearchCandidates entries.
	searchMaxOffset = teammem.SearchCandidates
	searchCursor    = "search:"
)

// search runs a search over the memory p may read: the team spaces of the
// org's repos and p's own personal spaces, as far as p's role reads them.
// Bad input (an empty or over-long query, a bad scope, limit or cursor, an
// unknown repo) is EInvalid or ENotFound with a clear message.
func (s *Server) search(ctx context.Context, p teammem.Principal, q SearchParams) (wire.SearchPage, error) {
	terms, err := teammem.ParseSearchQuery(q.Query)
	if err != nil {
		return wire.SearchPage{}, err
	}
	f := teammem.SearchFilter{Terms: terms, UserID: p.User.ID, Scope: q.Scope}
	if f.Scope != "" && !f.Scope.Valid() {
		return wire.SearchPage{}, teammem.Errorf(teammem.EInvalid, "scope must be team or personal")
	}
	limit := q.Limit
	switch {
	case limit == 0:
		limit = searchLimit
	case limit < 1 || limit > searchMaxLimit:
		return wire.SearchPage{}, teammem.Errorf(teammem.EInvalid, "limit must be between 1 and %d", searchMaxLimit)
	}
	offset, err := searchOffset(q.Page)
	if err != nil {
		return wire.SearchPage{}, err
	}
	// What the role reads: a scope it may not read is refused when asked
	// for, and left out otherwise.
	team := teammem.Authorize(p, teammem.ActTeamRead, false)
	personal := teammem.Authorize(p, teammem.ActPersonalRead, false)
	switch {
	case f.Scope == teammem.ScopeTeam && team != nil:
		return wire.SearchPage{}, team
	case f.Scope == teammem.ScopePersonal && personal != nil:
		return wire.SearchPage{}, personal
	case f.Scope == "" && team != nil && personal != nil:
		return wire.SearchPage{}, team
	case f.Scope == "" && team != nil:
		f.Scope = teammem.ScopePersonal
	case f.Scope == "" && personal != nil:
		f.Scope = teammem.ScopeTeam
	}
	if slug := strings.TrimSpace(q.Repo); slug != "" {
		if err := teammem.ValidateRepoSlug(slug); err != nil {
			return wire.SearchPage{}, s.slugError(p.Org, slug, err)
		}
		repo, err := s.store.RepoGet(ctx, p.Org.ID, slug)
		if teammem.ErrorCode(err) == teammem.ENotFound {
			return wire.SearchPage{}, teammem.Errorf(teammem.ENotFound, "repo %q not found", slug)
		} else if err != nil {
			return wire.SearchPage{}, err
		}
		f.RepoID = repo.ID
	}
	rows, err := s.store.EntriesSearch(ctx, p.Org.ID, f)
	if err != nil {
		return wire.SearchPage{}, err
	}
	teammem.RankSearch(rows, terms)
	rows = rows[min(offset, len(rows)):]
	page := wire.SearchPage{Data: make([]wire.SearchHit, 0, min(len(rows), limit))}
	if len(rows) > limit {
		next := searchCursorOf(offset + limit)
		page.NextPage = &next
		rows = rows[:limit]
	}
	for _, r := range rows {
		page.Data = append(page.Data, wire.SearchHit{Repo: r.Repo, Scope: string(r.Scope), Path: r.Key,
			Snippet: teammem.Snippet(r.Text, terms, wire.SnippetMaxRunes, wire.MarkOpen, wire.MarkClose),
			Score:   r.Score, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy})
	}
	return page, nil
}

// searchCursorOf is the page cursor of the hits from offset on.
func searchCursorOf(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(searchCursor + strconv.Itoa(offset)))
}

// searchOffset reads a page cursor ("" is the first page).
func searchOffset(page string) (int, error) {
	if page == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(page)
	rest, ok := strings.CutPrefix(string(b), searchCursor)
	n, nerr := strconv.Atoi(rest)
	if err != nil || !ok || nerr != nil || n < 0 {
		return 0, teammem.Errorf(teammem.EInvalid, "page is not a cursor this search returned (next_page)")
	}
	if n > searchMaxOffset {
		return 0, teammem.Errorf(teammem.EInvalid, "search pages stop after %d hits: another word, a repo or a scope narrows the search", searchMaxOffset)
	}
	return n, nil
}

// getSearch is GET /v1/search.
func (s *Server) getSearch(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	q := SearchParams{Query: v.Get("q"), Repo: v.Get("repo"), Scope: teammem.Scope(v.Get("scope")), Page: v.Get("page")}
	if !v.Has("q") {
		return teammem.Errorf(teammem.EInvalid, "q is required: the words to search for")
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return teammem.Errorf(teammem.EInvalid, "limit must be between 1 and %d", searchMaxLimit)
		}
		q.Limit = n
	}
	page, err := s.search(r.Context(), principal(r), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
