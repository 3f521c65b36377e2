package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

func (e *v1Env) search(t *testing.T, key string, params ...string) wire.SearchPage {
	t.Helper()
	v := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		v.Set(params[i], params[i+1])
	}
	var page wire.SearchPage
	if err := json.Unmarshal(e.do("GET", "/v1/search?"+v.Encode(), key, nil).want(t, 200).Body, &page); err != nil {
		t.Fatal(err)
	}
	return page
}

func paths(page wire.SearchPage) string {
	var out []string
	for _, h := range page.Data {
		out = append(out, h.Repo+":"+h.Scope+":"+h.Path)
	}
	return strings.Join(out, " ")
}

// TestSearch searches what a key may read over GET /v1/search and the MCP
// search tool, on both drivers: ranked hits with snippets, filters, pages,
// every refusal of bad input, and a write seen at once.
func TestSearch(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		member, viewer, owner := e.keys[teammem.RoleMember], e.keys[teammem.RoleViewer], e.keys[teammem.RoleOwner]
		put := func(key, path, content string) {
			t.Helper()
			e.do("PUT", path, key, content).want(t, 200)
		}
		put(member, "/v1/repos/acme/widgets/team/entries/deploy.md", "# Deploy\n\nWe deploy to staging first, then to production on Fridays.\n")
		put(member, "/v1/repos/acme/widgets/team/entries/notes/go.md", "Prefer table-driven tests.\n")
		put(member, "/v1/repos/acme/gadgets/team/entries/release.md", "Gadgets deploy weekly.\n")
		put(member, "/v1/repos/acme/widgets/personal/entries/mine.md", "My deploy checklist.\n")
		put(owner, "/v1/repos/acme/widgets/personal/entries/owners.md", "The owner's deploy notes.\n")

		page := e.search(t, member, "q", "deploy")
		if got := paths(page); len(page.Data) != 3 || strings.Contains(got, "owners.md") || !strings.Contains(got, "acme/widgets:personal:mine.md") {
			t.Fatalf("member's deploy = %s", got)
		}
		if page.NextPage != nil {
			t.Fatalf("one page only, next_page = %v", *page.NextPage)
		}
		var hit wire.SearchHit
		for _, h := range page.Data {
			if h.Path == "deploy.md" {
				hit = h
			}
		}
		if hit.Snippet != "# [[Deploy]] We [[deploy]] to staging first, then to production on Fridays." || hit.UpdatedBy != "member" || hit.Score <= 0 || hit.UpdatedAt.IsZero() {
			t.Fatalf("hit = %+v", hit)
		}
		// A viewer reads team memory only.
		if got := paths(e.search(t, viewer, "q", "deploy")); strings.Contains(got, "personal") || !strings.Contains(got, "deploy.md") {
			t.Fatalf("viewer's deploy = %s", got)
		}
		e.do("GET", "/v1/search?q=deploy&scope=personal", viewer, nil).want(t, 403)
		// Filters, the key's words, prefixes.
		if got := paths(e.search(t, member, "q", "deploy", "repo", "acme/gadgets")); got != "acme/gadgets:team:release.md" {
			t.Fatalf("gadgets = %s", got)
		}
		if got := paths(e.search(t, member, "q", "deploy", "scope", "personal")); got != "acme/widgets:personal:mine.md" {
			t.Fatalf("personal = %s", got)
		}
		if got := paths(e.search(t, member, "q", "go table")); got != "acme/widgets:team:notes/go.md" {
			t.Fatalf("go table = %s", got)
		}
		if got := paths(e.search(t, member, "q", "fri* STAGING")); got != "acme/widgets:team:deploy.md" {
			t.Fatalf("prefix = %s", got)
		}
		// Pages.
		first := e.search(t, member, "q", "deploy", "limit", "2")
		if len(first.Data) != 2 || first.NextPage == nil {
			t.Fatalf("first page = %+v", first)
		}
		second := e.search(t, member, "q", "deploy", "limit", "2", "page", *first.NextPage)
		if len(second.Data) != 1 || second.NextPage != nil || paths(first)+" "+paths(second) != paths(page) {
			t.Fatalf("pages %s | %s, want %s", paths(first), paths(second), paths(page))
		}
		// Bad input: a clear 400 or 404.
		for q, want := range map[string]string{
			"":                                     "q is required",
			"?q=":                                  "empty",
			"?q=%21%21":                            "no word",
			"?q=" + strings.Repeat("a", 300):       "at most 256",
			"?q=x&scope=both":                      "scope must be team or personal",
			"?q=x&limit=0":                         "limit must be between 1 and 100",
			"?q=x&limit=101":                       "limit must be between 1 and 100",
			"?q=x&limit=ten":                       "limit must be between 1 and 100",
			"?q=x&page=nonsense":                   "not a cursor",
			"?q=x&repo=not-a-slug":                 "",
			"?q=x&page=" + searchPageAt(t, 20_000): "pages stop after 500 hits",
		} {
			r := e.do("GET", "/v1/search"+q, member, nil).want(t, 400)
			if !strings.Contains(string(r.Body), want) {
				t.Errorf("%s: %s, want %q", q, r.Body, want)
			}
		}
		e.do("GET", "/v1/search?q=x&repo=acme/nothing", member, nil).want(t, 404)
		e.do("GET", "/v1/search?q=x", "", nil).want(t, 401)
		// Kept current by every write.
		put(member, "/v1/repos/acme/widgets/team/entries/deploy.md", "Releases go out on Mondays.\n")
		if got := paths(e.search(t, member, "q", "production")); got != "" {
			t.Fatalf("production after the overwrite = %s", got)
		}
		e.do("DELETE", "/v1/repos/acme/widgets/team/entries/notes/go.md", member, nil).want(t, 204)
		if got := paths(e.search(t, member, "q", "table")); got != "" {
			t.Fatalf("table after the delete = %s", got)
		}
		// The MCP search tool is the same search.
		cs := mcpConnect(t, e, "/mcp", member)
		text, isErr := callText(t, cs, "search", map[string]any{"query": "mondays"})
		if isErr || !strings.Contains(text, "deploy.md") || !strings.Contains(text, "[[Mondays]]") {
			t.Fatalf("MCP search = %q (error %v)", text, isErr)
		}
		if text, isErr := callText(t, cs, "search", map[string]any{"query": "  "}); !isErr || !strings.Contains(text, "empty") {
			t.Fatalf("MCP empty search = %q (error %v)", text, isErr)
		}
	})
}

// searchPageAt is a cursor of the form GET /v1/search gives, for offset.
func searchPageAt(t *testing.T, offset int) string {
	t.Helper()
	return url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte("search:" + strconv.Itoa(offset))))
}
