package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/teammem/teammem/internal/wire"
)

// SearchQuery is one GET /v1/search: Repo "" searches every repo the key
// reads, Scope "" both scopes, Limit 0 the server's default, Page a
// NextPage cursor.
type SearchQuery struct {
	Q     string
	Repo  string
	Scope string
	Limit int
	Page  string
}

// Search runs a search over the memory the key may read.
func (c *Client) Search(ctx context.Context, q SearchQuery) (wire.SearchPage, error) {
	v := url.Values{"q": {q.Q}}
	if q.Repo != "" {
		v.Set("repo", q.Repo)
	}
	if q.Scope != "" {
		v.Set("scope", q.Scope)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Page != "" {
		v.Set("page", q.Page)
	}
	var page wire.SearchPage
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/search?" + v.Encode()}, &page)
	return page, err
}
