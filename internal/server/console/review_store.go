package console

import (
	"context"
	"net/url"
	"path"

	"github.com/teammem/teammem/internal/teammem"
)

// A write held in a store made through the memory stores API belongs to
// the store's hidden repo, whose slug no repo route accepts (by design:
// '@' is never a valid slug). The review queue reads such a store's
// current content by the store's id, through the memory stores routes,
// as the viewer.

// storeOf returns the memory store id of a proposal's repo when it is an
// API store's hidden repo, else "".
func storeOf(repo string) string {
	uid, ok := teammem.StoreRepoUID(repo)
	if !ok {
		return ""
	}
	return teammem.StoreIDPrefix + uid
}

// storeMemory is the part of a memory (or memory_prefix) item of a
// listing the queue reads.
type storeMemory struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// storeMemoryPage is one page of GET /v1/memory_stores/{id}/memories.
type storeMemoryPage struct {
	Data     []storeMemory `json:"data"`
	NextPage *string       `json:"next_page"`
}

// storeContent returns the current content of the memory at key in store
// (a not_found error when there is none). It lists the key's directory one
// level deep, in path order, until it passes the key.
func storeContent(ctx context.Context, a api, store, key string) (string, error) {
	want := teammem.MemoryPath(key)
	q := url.Values{"beta": {"true"}, "view": {"full"}, "depth": {"1"}, "limit": {"20"}}
	if dir := path.Dir(key); dir != "." {
		q.Set("path_prefix", "/"+dir+"/")
	}
	for {
		var pg storeMemoryPage
		if err := a.get(ctx, "/v1/memory_stores/"+url.PathEscape(store)+"/memories?"+q.Encode(), &pg); err != nil {
			return "", err // api.do rebuilt the code from the envelope
		}
		for _, m := range pg.Data {
			switch {
			case m.Type != "memory" || m.Path < want:
			case m.Path == want && m.Content != nil:
				return *m.Content, nil
			default:
				return "", teammem.Errorf(teammem.ENotFound, "no memory at %s", want)
			}
		}
		if pg.NextPage == nil {
			return "", teammem.Errorf(teammem.ENotFound, "no memory at %s", want)
		}
		q.Set("page", *pg.NextPage)
	}
}
