package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// dreamID is what a dream id the client sends in a path or accepts back
// looks like.
var dreamID = regexp.MustCompile(`^drm_[A-Za-z0-9_-]{1,120}$`)

// ValidDreamID reports whether id looks like a dream id (drm_…), so a
// command can refuse a mistyped one before asking the server.
func ValidDreamID(id string) bool { return dreamID.MatchString(id) }

// DreamParams is what DreamCreate asks for. The input is the repo's team
// store, which DreamCreate resolves itself.
type DreamParams struct {
	Model        string // a model id the server allows (TEAMMEM_DREAM_MODELS)
	Instructions string // "" for none
	// UpdateExisting writes into the team store itself instead of a new
	// store to review.
	UpdateExisting bool
}

// DreamCreate asks the server to dream the client repo's team store: it
// ensures the store exists (MemoryStore), then POST /v1/dreams with that
// store as the only input. The create is sent once, never retried: a
// retry after a lost answer would start a second dream.
func (c *Client) DreamCreate(ctx context.Context, p DreamParams) (wire.Dream, error) {
	store, err := c.MemoryStore(ctx, teammem.ScopeTeam)
	if err != nil {
		return wire.Dream{}, fmt.Errorf("resolve the team memory store: %w", err)
	}
	req := wire.DreamCreateRequest{
		Inputs: []wire.DreamInput{{Type: wire.DreamInputMemoryStore, MemoryStoreID: store.ID}},
		Model:  wire.DreamModel{ID: p.Model},
	}
	if p.Instructions != "" {
		req.Instructions = &p.Instructions
	}
	if p.UpdateExisting {
		req.OutputBehavior = &wire.DreamOutputBehavior{Type: wire.BehaviorUpdateExisting, MemoryStoreID: store.ID}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return wire.Dream{}, err
	}
	return c.retryless().dreamCall(ctx, http.MethodPost, "/v1/dreams", body)
}

// DreamGet returns the dream id (GET /v1/dreams/{id}).
func (c *Client) DreamGet(ctx context.Context, id string) (wire.Dream, error) {
	return c.dreamCall(ctx, http.MethodGet, dreamPath(id), nil)
}

// DreamCancel cancels the dream id (POST /v1/dreams/{id}/cancel) and
// returns it; cancelling a canceled dream is no error, a finished one is
// a 400.
func (c *Client) DreamCancel(ctx context.Context, id string) (wire.Dream, error) {
	return c.dreamCall(ctx, http.MethodPost, dreamPath(id)+"/cancel", []byte("{}"))
}

// DreamApply writes a completed create_new dream's changes into its input
// store (POST /v1/dreams/{id}/apply) and returns the dream. When the input
// store changed since the dream started, nothing is applied and the error
// is a *DreamConflictError naming the memories that changed. Sent once: a
// retry after a lost answer would be refused as already applied.
func (c *Client) DreamApply(ctx context.Context, id string) (wire.Dream, error) {
	d, err := c.retryless().dreamCall(ctx, http.MethodPost, dreamPath(id)+"/apply", []byte("{}"))
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict && ae.Err != nil {
		if paths, ok := ae.Err.Details["changed_paths"].([]string); ok {
			return wire.Dream{}, &DreamConflictError{ChangedPaths: paths, Err: ae}
		}
	}
	return d, err
}

// DreamDiscard discards a create_new dream's output (POST
// /v1/dreams/{id}/discard): its output store is archived. Sent once.
func (c *Client) DreamDiscard(ctx context.Context, id string) (wire.Dream, error) {
	return c.retryless().dreamCall(ctx, http.MethodPost, dreamPath(id)+"/discard", []byte("{}"))
}

// DreamDiff returns the per-memory changes of a dream's output against its
// input (GET /v1/dreams/{id}/diff). Its answer carries memory content, so
// it is bounded like a snapshot.
func (c *Client) DreamDiff(ctx context.Context, id string) (wire.DreamDiff, error) {
	if !ValidDreamID(id) {
		return wire.DreamDiff{}, teammem.Errorf(teammem.EInvalid, "%q is not a dream id (drm_…)", id)
	}
	var diff wire.DreamDiff
	_, err := c.call(ctx, request{method: http.MethodGet, path: dreamPath(id) + "/diff", header: dreamHeader(false),
		limit: c.contentLimit()}, &diff)
	return diff, err
}

// DreamConflictError is an apply refused with 409: the input store changed
// since the dream started, and nothing was applied.
type DreamConflictError struct {
	ChangedPaths []string // the memories that changed, as the server names them
	Err          *APIError
}

// Error names the memories that changed.
func (e *DreamConflictError) Error() string {
	return fmt.Sprintf("the team store changed since the dream started (%s); nothing was applied", strings.Join(e.ChangedPaths, ", "))
}

// Unwrap returns the server's answer.
func (e *DreamConflictError) Unwrap() error { return e.Err }

// dreamCall sends one Dreams API request and decodes the dream answered,
// refusing an answer without a dream id.
func (c *Client) dreamCall(ctx context.Context, method, path string, body []byte) (wire.Dream, error) {
	if id := strings.TrimPrefix(path, "/v1/dreams/"); id != path && !ValidDreamID(strings.SplitN(id, "/", 2)[0]) {
		return wire.Dream{}, teammem.Errorf(teammem.EInvalid, "%q is not a dream id (drm_…)", strings.SplitN(id, "/", 2)[0])
	}
	var d wire.Dream
	status, err := c.call(ctx, request{method: method, path: path, body: body, header: dreamHeader(body != nil)}, &d)
	if err != nil {
		return wire.Dream{}, err
	}
	if !ValidDreamID(d.ID) {
		return wire.Dream{}, &BadResponseError{Status: status, Reason: fmt.Sprintf("the dream answer has id %q, want drm_…", d.ID)}
	}
	return d, nil
}

// dreamHeader is the headers of a Dreams API request: the beta it is part
// of and, with a body, its type.
func dreamHeader(body bool) http.Header {
	h := http.Header{"Anthropic-Beta": {wire.DreamsBeta}}
	if body {
		h.Set("Content-Type", "application/json")
	}
	return h
}

func dreamPath(id string) string { return "/v1/dreams/" + url.PathEscape(id) }
