package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/teammem/teammem/internal/wire"
)

// searchPage is the data of /ui/search.
type searchPage struct {
	Q, Repo, Scope string
	Hits           []searchHit
	Next           string // the next page's console URL, "" on the last
	Asked          bool   // a query was given
}

// searchHit is one hit as the console shows it: its snippet cut into
// plain and matched parts, so the template escapes every part.
type searchHit struct {
	wire.SearchHit
	Parts []snippetPart
	Href  string // the entry's page; "" for personal memory, which the console does not show
}

type snippetPart struct {
	Text  string
	Match bool
}

// search serves /ui/search?q=&repo=&scope=&page=: GET /v1/search for the
// viewer, the box in every page's header.
func (c *Console) search(w http.ResponseWriter, r *http.Request, v *viewer) error {
	q := r.URL.Query()
	pg := searchPage{Q: q.Get("q"), Repo: q.Get("repo"), Scope: q.Get("scope")}
	if strings.TrimSpace(pg.Q) == "" {
		c.render(w, r, v, http.StatusOK, "search", "Search", pg)
		return nil
	}
	pg.Asked = true
	params := url.Values{"q": {pg.Q}}
	for _, p := range []string{"repo", "scope", "page"} {
		if s := q.Get(p); s != "" {
			params.Set(p, s)
		}
	}
	var res wire.SearchPage
	if err := c.api(v).get(r.Context(), "/v1/search?"+params.Encode(), &res); err != nil {
		return err
	}
	for _, h := range res.Data {
		hit := searchHit{SearchHit: h, Parts: snippetParts(h.Snippet)}
		if h.Scope == "team" {
			hit.Href = entryURL(h.Repo, h.Path, "")
		}
		pg.Hits = append(pg.Hits, hit)
	}
	if res.NextPage != nil {
		params.Set("page", *res.NextPage)
		pg.Next = "/ui/search?" + params.Encode()
	}
	c.render(w, r, v, http.StatusOK, "search", "Search", pg)
	return nil
}

// snippetParts cuts a snippet at its match marks.
func snippetParts(s string) []snippetPart {
	var parts []snippetPart
	for s != "" {
		i := strings.Index(s, wire.MarkOpen)
		if i < 0 {
			break
		}
		j := strings.Index(s[i+len(wire.MarkOpen):], wire.MarkClose)
		if j < 0 {
			break
		}
		if i > 0 {
			parts = append(parts, snippetPart{Text: s[:i]})
		}
		parts = append(parts, snippetPart{Text: s[i+len(wire.MarkOpen) : i+len(wire.MarkOpen)+j], Match: true})
		s = s[i+len(wire.MarkOpen)+j+len(wire.MarkClose):]
	}
	if s != "" {
		parts = append(parts, snippetPart{Text: s})
	}
	return parts
}
