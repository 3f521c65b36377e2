package apiclient

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// MemoryStore is how the server names a space as a memory store: what
// Claude Code's own sync (`teammem claude`) is configured with.
type MemoryStore struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Name  string `json:"name"`
	Repo  string `json:"repo"`
	Scope string `json:"scope"`
	// Path is the store path prefix Claude Code sends its memory calls
	// under: /v1/memory_stores/<ID>.
	Path string `json:"path"`
}

var storeID = regexp.MustCompile(`^memstore_[A-Za-z0-9_-]{1,120}$`)

// MemoryStore ensures the repo's space of scope exists and returns it as a
// memory store (POST /v1/repos/{owner}/{name}/{scope}/memory_store). An
// answer whose id or path is not what Claude Code accepts is a
// BadResponseError: it would otherwise end up in CLAUDE_MEMORY_STORES.
func (c *Client) MemoryStore(ctx context.Context, scope teammem.Scope) (MemoryStore, error) {
	var ms MemoryStore
	_, err := c.call(ctx, request{method: http.MethodPost, path: c.spacePath(scope) + "/memory_store", body: []byte("{}"),
		header: http.Header{"Content-Type": {"application/json"}}}, &ms)
	if err != nil {
		return MemoryStore{}, err
	}
	if !storeID.MatchString(ms.ID) || ms.Path != "/v1/memory_stores/"+ms.ID || strings.ContainsAny(ms.Path, "?#%") {
		return MemoryStore{}, &BadResponseError{Status: http.StatusOK, Reason: fmt.Sprintf("memory store answer has id %q and path %q, want memstore_… and /v1/memory_stores/<id>", ms.ID, ms.Path)}
	}
	return ms, nil
}
