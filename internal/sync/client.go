package memsync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Client speaks the server's /v1 API for one repo.
type Client struct {
	BaseURL string
	Key     string
	Repo    string // owner/name or host/owner/name
	HTTP    *http.Client
	// UserAgent identifies the client in entry authorship.
	UserAgent string
}

// APIError is a failed request: the HTTP status (0 for transport failures)
// and the server's error body.
type APIError struct {
	Status  int
	Type    string
	Message string
	Details map[string]any
	Err     error // transport error, when Status is 0
}

func (e *APIError) Error() string {
	switch {
	case e.Status == 0:
		return fmt.Sprintf("cannot reach the server: %v", e.Err)
	case e.Message != "":
		return fmt.Sprintf("server answered %d %s: %s", e.Status, e.Type, e.Message)
	default:
		return fmt.Sprintf("server answered %d", e.Status)
	}
}

func (e *APIError) Unwrap() error { return e.Err }

// Permanent reports whether retrying without a change cannot help: the
// reference's rule (a 4xx other than 409 and 429).
func (e *APIError) Permanent() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusConflict && e.Status != http.StatusTooManyRequests
}

// IsPermanent reports whether err is a permanent API failure.
func IsPermanent(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Permanent()
}

// StatusOf returns the HTTP status of an API error, 0 otherwise.
func StatusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// spacePath is the /v1 path of a scope of the client's repo. A three-part
// host/owner/name repo sends host%2Fowner as its owner segment.
func (c *Client) spacePath(scope teammem.Scope) string {
	return c.repoPath() + "/" + string(scope)
}

func (c *Client) repoPath() string {
	i := strings.LastIndex(c.Repo, "/")
	owner, name := c.Repo[:i], c.Repo[i+1:]
	return "/v1/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name)
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// do sends a request and returns the response for 2xx and 304; any other
// status becomes an *APIError.
func (c *Client) do(ctx context.Context, method, path string, body []byte, header http.Header) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	ua := c.UserAgent
	if ua == "" {
		ua = "teammem"
	}
	req.Header.Set("User-Agent", ua)
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &APIError{Err: err}
	}
	if resp.StatusCode < 300 || resp.StatusCode == http.StatusNotModified {
		return resp, nil
	}
	defer resp.Body.Close()
	ae := &APIError{Status: resp.StatusCode}
	var eb struct {
		Error struct {
			Type    string         `json:"type"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20)); json.Unmarshal(b, &eb) == nil {
		ae.Type, ae.Message, ae.Details = eb.Error.Type, eb.Error.Message, eb.Error.Details
	}
	return nil, ae
}

func (c *Client) getJSON(ctx context.Context, path string, header http.Header, v any) (notModified bool, err error) {
	resp, err := c.do(ctx, http.MethodGet, path, nil, header)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return true, nil
	}
	return false, decodeBody(resp.Body, v)
}

func decodeBody(r io.Reader, v any) error {
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return &APIError{Status: 0, Err: fmt.Errorf("unreadable response: %w", err)}
	}
	return nil
}

// Head is a space head as the server reports it.
type Head struct {
	// SpaceID names the space's incarnation ("" when the server has none).
	SpaceID    string    `json:"space_id"`
	Version    int64     `json:"version"`
	Checksum   string    `json:"checksum"`
	EntryCount int       `json:"entry_count"`
	TotalBytes int64     `json:"total_bytes"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// RemoteEntry is an entry in a snapshot or change list.
type RemoteEntry struct {
	Key      string  `json:"key"`
	Op       string  `json:"op"` // changes only: upsert or delete
	Checksum string  `json:"checksum"`
	Content  *string `json:"content"`
	Version  int64   `json:"version"`
}

// HeadIfChanged returns the head of a scope, or changed=false when it still
// has checksum known. A repo the server does not know yet reads as an empty
// space at version 0.
func (c *Client) HeadIfChanged(ctx context.Context, scope teammem.Scope, known string) (head Head, changed bool, err error) {
	h := http.Header{}
	if known != "" {
		h.Set("If-None-Match", `"`+known+`"`)
	}
	notModified, err := c.getJSON(ctx, c.spacePath(scope)+"?view=head", h, &head)
	if StatusOf(err) == http.StatusNotFound {
		return Head{Checksum: teammem.EmptySpaceChecksum}, true, nil
	}
	if err != nil || notModified {
		return head, false, err
	}
	return head, true, nil
}

// Changes returns what changed after version since; gone reports a 410 (the
// server forgot deletions that old: do a full snapshot instead).
func (c *Client) Changes(ctx context.Context, scope teammem.Scope, since int64) (head Head, changes []RemoteEntry, gone bool, err error) {
	var body struct {
		Head
		Changes []RemoteEntry `json:"changes"`
	}
	_, err = c.getJSON(ctx, c.spacePath(scope)+"/changes?since="+strconv.FormatInt(since, 10), nil, &body)
	switch StatusOf(err) {
	case http.StatusGone:
		return Head{}, nil, true, nil
	case http.StatusNotFound:
		return Head{Checksum: teammem.EmptySpaceChecksum}, nil, false, nil
	}
	return body.Head, body.Changes, false, err
}

// Snapshot returns every live entry of a scope with content.
func (c *Client) Snapshot(ctx context.Context, scope teammem.Scope) (Head, []RemoteEntry, error) {
	var body struct {
		Head
		Entries []RemoteEntry `json:"entries"`
	}
	_, err := c.getJSON(ctx, c.spacePath(scope), nil, &body)
	if StatusOf(err) == http.StatusNotFound {
		return Head{Checksum: teammem.EmptySpaceChecksum}, nil, nil
	}
	return body.Head, body.Entries, err
}

// BatchUpsert is one upsert of a batch; Base nil means no precondition, ""
// means create-only.
type BatchUpsert struct {
	Key     string  `json:"key"`
	Content string  `json:"content"`
	Base    *string `json:"base"`
}

// BatchDelete is one delete of a batch.
type BatchDelete struct {
	Key  string  `json:"key"`
	Base *string `json:"base"`
}

// BatchResult is the server's report of a committed batch.
type BatchResult struct {
	Head
	Written           []string                `json:"written"`
	Deleted           []string                `json:"deleted"`
	SkippedSecrets    []teammem.SkippedSecret `json:"skippedSecrets"`
	SkippedTombstoned []string                `json:"skippedTombstoned"`
}

// Batch applies upserts and deletes atomically. A 409 comes back as a
// *ConflictError listing every conflicting key's current state.
func (c *Client) Batch(ctx context.Context, scope teammem.Scope, upserts []BatchUpsert, deletes []BatchDelete) (BatchResult, error) {
	body, err := json.Marshal(map[string]any{"upserts": nonNil(upserts), "deletes": nonNil(deletes)})
	if err != nil {
		return BatchResult{}, err
	}
	resp, err := c.do(ctx, http.MethodPost, c.spacePath(scope)+"/batch", body, http.Header{"Content-Type": {"application/json"}})
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		return BatchResult{}, conflictError(ae)
	}
	if err != nil {
		return BatchResult{}, err
	}
	defer resp.Body.Close()
	var res BatchResult
	return res, decodeBody(resp.Body, &res)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ConflictError is a 409 from a batch: the current state of each key whose
// base no longer held.
type ConflictError struct {
	Conflicts []teammem.Conflict
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d entries changed on the server since they were last synced", len(e.Conflicts))
}

func conflictError(ae *APIError) error {
	raw, _ := json.Marshal(ae.Details["conflicts"])
	ce := &ConflictError{}
	if err := json.Unmarshal(raw, &ce.Conflicts); err != nil || len(ce.Conflicts) == 0 {
		return ae
	}
	return ce
}

// Me is who the key belongs to.
type Me struct {
	Org  struct{ Slug, Name string } `json:"org"`
	User struct {
		Handle string `json:"handle"`
		Role   string `json:"role"`
	} `json:"user"`
}

// WhoAmI returns the key's org and user.
func (c *Client) WhoAmI(ctx context.Context) (Me, error) {
	var me Me
	_, err := c.getJSON(ctx, "/v1/me", nil, &me)
	return me, err
}

// isNetwork reports whether err is a transport failure (server down,
// network lost), as opposed to an answer.
func isNetwork(err error) bool {
	var ae *APIError
	var ne net.Error
	return (errors.As(err, &ae) && ae.Status == 0) || errors.As(err, &ne)
}
