package httpapi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// The search and recent tools: what the memory holds on a subject, and
// what changed lately and by whom.

type searchArgs struct {
	Query string `json:"query" jsonschema:"words to find (all must match); \"quoted phrases\" match as a phrase"`
	Scope string `json:"scope,omitempty" jsonschema:"team or personal; both when absent"`
	Repo  string `json:"repo,omitempty" jsonschema:"the repository (owner/name); every repository the key reads when absent and the session is not bound to one"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many hits, 1 to 100 (20 when absent)"`
}

type recentArgs struct {
	Since string `json:"since,omitempty" jsonschema:"an RFC 3339 time; 24 hours ago when absent"`
	Scope string `json:"scope,omitempty" jsonschema:"team or personal; both when absent"`
	Repo  string `json:"repo,omitempty" jsonschema:"the repository (owner/name); required unless the session was opened at /mcp?repo=owner/name"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many changes, 1 to 100 (20 when absent)"`
}

// recentChange is one change the recent tool lists.
type recentChange struct {
	Path    string    `json:"path"`
	Scope   string    `json:"scope"`
	Deleted bool      `json:"deleted"`
	By      string    `json:"by"`
	Client  string    `json:"client,omitempty"`
	At      time.Time `json:"at"`
	Version int64     `json:"version"`
}

// recentResult is the recent tool's structured content.
type recentResult struct {
	Repo    string         `json:"repo"`
	Since   time.Time      `json:"since"`
	Changes []recentChange `json:"changes"`
}

// scopesOf reads a scope argument: one scope, or both when empty.
func scopesOf(s string) ([]teammem.Scope, error) {
	switch sc := teammem.Scope(strings.TrimSpace(s)); {
	case sc == "":
		return []teammem.Scope{teammem.ScopeTeam, teammem.ScopePersonal}, nil
	case sc.Valid():
		return []teammem.Scope{sc}, nil
	}
	return nil, fmt.Errorf("scope must be team or personal")
}

func (h *mcpHub) addSearchTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: "Search the team's and your memory: ranked hits with their path and a snippet ([[marks]] around the matches)."},
		func(ctx context.Context, req *mcp.CallToolRequest, a searchArgs) (*mcp.CallToolResult, wire.SearchPage, error) {
			c, err := h.callOf(req, a.Repo, false)
			if err != nil {
				return nil, wire.SearchPage{}, err
			}
			scope := teammem.Scope(strings.TrimSpace(a.Scope))
			if scope != "" && !scope.Valid() {
				return nil, wire.SearchPage{}, fmt.Errorf("scope must be team or personal")
			}
			page, err := h.s.search(ctx, c.p, SearchParams{Query: a.Query, Repo: c.repo, Scope: scope, Limit: a.Limit})
			if err != nil {
				return nil, wire.SearchPage{}, h.toolError(ctx, err)
			}
			if page.Data == nil {
				page.Data = []wire.SearchHit{}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: searchText(a.Query, page)}}}, page, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "recent", Description: "What changed in the memory since a time (24 hours by default), newest first, and who changed it."},
		func(ctx context.Context, req *mcp.CallToolRequest, a recentArgs) (*mcp.CallToolResult, recentResult, error) {
			c, err := h.callOf(req, a.Repo, true)
			if err != nil {
				return nil, recentResult{}, err
			}
			out, err := h.recent(ctx, c, a)
			if err != nil {
				return nil, recentResult{}, h.toolError(ctx, err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: recentText(out)}}}, out, nil
		})
}

// searchText is the hits as an agent reads them: one block per hit.
func searchText(q string, page wire.SearchPage) string {
	if len(page.Data) == 0 {
		return fmt.Sprintf("No memory matches %q.", q)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d hits for %q, best first:", len(page.Data), q)
	for _, hit := range page.Data {
		fmt.Fprintf(&b, "\n\n%s (%s)\n%s", memPathOf(teammem.Scope(hit.Scope), hit.Path), hit.Repo, hit.Snippet)
	}
	if page.NextPage != nil {
		b.WriteString("\n\nMore hits exist: raise limit to see them.")
	}
	return b.String()
}

// recent lists the changes of c's repo since the argument's time.
func (h *mcpHub) recent(ctx context.Context, c mcpCall, a recentArgs) (recentResult, error) {
	out := recentResult{Repo: c.repo, Since: h.s.now().Add(-24 * time.Hour), Changes: []recentChange{}}
	if a.Since != "" {
		t, err := time.Parse(time.RFC3339, a.Since)
		if err != nil {
			return out, fmt.Errorf("since must be an RFC 3339 time, such as 2026-01-02T15:04:05Z")
		}
		out.Since = t
	}
	limit := a.Limit
	if limit == 0 {
		limit = 20
	}
	if limit < 1 || limit > 100 {
		return out, fmt.Errorf("limit must be between 1 and 100")
	}
	scopes, err := scopesOf(a.Scope)
	if err != nil {
		return out, err
	}
	for _, sc := range scopes {
		sr, err := h.space(ctx, c, sc, false)
		if err != nil {
			return out, err
		}
		if sr.space.ID == 0 {
			continue
		}
		// Every key's newest state, tombstones included: one row per key.
		es, err := h.s.store.ChangesList(ctx, c.p.Org.ID, sr.space.ID, 0)
		if err != nil {
			return out, err
		}
		for _, e := range es {
			if e.UpdatedAt.Before(out.Since) {
				continue
			}
			out.Changes = append(out.Changes, recentChange{Path: memPathOf(sc, e.Key), Scope: string(sc), Deleted: e.Deleted,
				By: e.Author, Client: e.ClientID, At: e.UpdatedAt, Version: e.Version})
		}
	}
	sort.SliceStable(out.Changes, func(i, j int) bool { return out.Changes[i].At.After(out.Changes[j].At) })
	if len(out.Changes) > limit {
		out.Changes = out.Changes[:limit]
	}
	return out, nil
}

// recentText is the changes as an agent reads them, one line each.
func recentText(r recentResult) string {
	if len(r.Changes) == 0 {
		return fmt.Sprintf("Nothing changed in %s since %s.", r.Repo, r.Since.UTC().Format(time.RFC3339))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d changes in %s since %s, newest first:", len(r.Changes), r.Repo, r.Since.UTC().Format(time.RFC3339))
	for _, ch := range r.Changes {
		verb := "updated"
		if ch.Deleted {
			verb = "deleted"
		}
		by := ch.By
		if by == "" {
			by = "unknown"
		}
		if ch.Client != "" {
			by += " via " + ch.Client
		}
		fmt.Fprintf(&b, "\n%s\t%s %s by %s", ch.At.UTC().Format(time.RFC3339), ch.Path, verb, by)
	}
	return b.String()
}
