package httpapi

import (
	"context"

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

// search runs a search over the memory p may read. Bad input (an empty
// or over-long query, an unknown repo, a bad cursor) is EInvalid or
// ENotFound with a clear message.
//
// CONTRACT STUB (issue 25): the search helper replaces this body.
func (s *Server) search(ctx context.Context, p teammem.Principal, q SearchParams) (wire.SearchPage, error) {
	return wire.SearchPage{}, teammem.Errorf(teammem.EUnavailable, "search is not built yet")
}
