// Package apiclient is the client side of the server's /v1 API: one Client
// per repo sends the requests whose bodies package wire defines, retries
// what retrying can help, never follows a redirect with the key, bounds
// every answer, and rebuilds the server's error from the body (APIError).
// The sync engine (memsync), the commands and telemetry all talk to the
// server through it.
package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// Client speaks the server's /v1 API for one repo, with the bodies of
// package wire. Every request is retried while retrying can help (see
// call), is never redirected, and reads a bounded answer. A Client must not
// be copied after first use.
type Client struct {
	BaseURL string
	Key     string
	Repo    string // owner/name or host/owner/name
	// HTTP supplies the transport and per-attempt timeout (DefaultTimeout
	// when nil). Its redirect policy is not used: redirects are refused.
	HTTP *http.Client
	// UserAgent identifies the client in entry authorship.
	UserAgent string
	// Attempts bounds the tries of one request; 0 means DefaultAttempts
	// and 1 turns retries off.
	Attempts int
	// Sleep waits between attempts; nil waits on a timer. It returns early
	// with ctx's error when ctx ends. Tests replace it to wait for nothing.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxResponse bounds answers with entry content; 0 means
	// MaxResponseBytes.
	MaxResponse int64

	// SessionID, when set, is the Claude Code session the writes come from
	// (from hook input), sent as X-Claude-Code-Session-Id for provenance.
	SessionID string

	// maxEntryBytes is the entry cap the server announced last (0: none).
	maxEntryBytes atomic.Int64
}

// MaxEntryBytes is the largest entry the client accepts when the server
// announced no lower cap: the server's default entry cap
// (teammem.DefaultServerDefaults.MaxEntryBytes).
const MaxEntryBytes = 250_000

// EntryLimit is the largest entry a pull writes: MaxEntryBytes, or the
// server's announced cap when that is lower.
func (c *Client) EntryLimit() int {
	if n := c.maxEntryBytes.Load(); n > 0 && n < MaxEntryBytes {
		return int(n)
	}
	return MaxEntryBytes
}

// announce remembers the entry cap a snapshot or change list announced.
func (c *Client) announce(maxEntryBytes int) {
	if maxEntryBytes > 0 {
		c.maxEntryBytes.Store(int64(maxEntryBytes))
	}
}

func (c *Client) contentLimit() int64 {
	if c.MaxResponse > 0 {
		return c.MaxResponse
	}
	return MaxResponseBytes
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

// notFound reports whether err is a 404: a repo the server does not know
// yet, which reads as an empty space at version 0.
func notFound(err error) bool { return StatusOf(err) == http.StatusNotFound }

// HeadIfChanged returns the head of a scope, or changed=false when it still
// has checksum known.
func (c *Client) HeadIfChanged(ctx context.Context, scope teammem.Scope, known string) (head wire.SpaceHead, changed bool, err error) {
	h := http.Header{}
	if known != "" {
		h.Set("If-None-Match", `"`+known+`"`)
	}
	var body wire.Snapshot
	status, err := c.call(ctx, request{method: http.MethodGet, path: c.spacePath(scope) + "?view=head", header: h}, &body)
	switch {
	case notFound(err):
		// The server has no such space: changed, so the pull can tell a
		// mirror that synced one before (see discontinuity).
		return wire.SpaceHead{Checksum: teammem.EmptySpaceChecksum}, true, nil
	case err != nil || status == http.StatusNotModified:
		return wire.SpaceHead{}, false, err
	}
	c.announce(body.MaxEntryBytes)
	return body.SpaceHead, true, nil
}

// Changes returns what changed after version since; gone reports a 410 (the
// server forgot deletions that old: do a full snapshot instead).
func (c *Client) Changes(ctx context.Context, scope teammem.Scope, since int64) (head wire.SpaceHead, changes []wire.Change, gone bool, err error) {
	var body wire.ChangeList
	path := c.spacePath(scope) + "/changes?since=" + strconv.FormatInt(since, 10)
	_, err = c.call(ctx, request{method: http.MethodGet, path: path, limit: c.contentLimit()}, &body)
	switch {
	case StatusOf(err) == http.StatusGone:
		return wire.SpaceHead{}, nil, true, nil
	case notFound(err):
		return wire.SpaceHead{Checksum: teammem.EmptySpaceChecksum}, nil, false, nil
	case err != nil:
		return wire.SpaceHead{}, nil, false, err
	}
	c.announce(body.MaxEntryBytes)
	return body.SpaceHead, body.Changes, false, nil
}

// Snapshot returns every live entry of a scope with content, as upserts.
func (c *Client) Snapshot(ctx context.Context, scope teammem.Scope) (wire.SpaceHead, []wire.Change, error) {
	var body wire.Snapshot
	_, err := c.call(ctx, request{method: http.MethodGet, path: c.spacePath(scope), limit: c.contentLimit()}, &body)
	switch {
	case notFound(err):
		return wire.SpaceHead{Checksum: teammem.EmptySpaceChecksum}, nil, nil
	case err != nil:
		return wire.SpaceHead{}, nil, err
	}
	c.announce(body.MaxEntryBytes)
	var entries []wire.Change
	if body.Entries != nil {
		for _, e := range *body.Entries {
			entries = append(entries, wire.Change{Key: e.Key, Op: wire.OpUpsert, Checksum: e.Checksum, Content: e.Content,
				Version: e.Version, Author: e.Author, UpdatedAt: e.UpdatedAt})
		}
	}
	return body.SpaceHead, entries, nil
}

// Batch applies upserts and deletes atomically. A 409 comes back as a
// *ConflictError listing every conflicting key's current state.
//
// Retrying a batch is safe because every operation the engine sends
// carries a base: when an attempt committed but its answer was lost, the
// next answers 409 with exactly our content, which the engine's merge
// takes as done.
func (c *Client) Batch(ctx context.Context, scope teammem.Scope, upserts []wire.BatchUpsert, deletes []wire.BatchDelete) (wire.WriteResult, error) {
	body, err := json.Marshal(wire.BatchRequest{Upserts: nonNil(upserts), Deletes: nonNil(deletes)})
	if err != nil {
		return wire.WriteResult{}, err
	}
	// One body type for both answers: a 200 WriteResult, or a 202
	// HeldWrite whose proposal says what waits for review.
	var res struct {
		wire.WriteResult
		Status   string            `json:"status"`
		Proposal *teammem.Proposal `json:"proposal"`
	}
	header := http.Header{"Content-Type": {"application/json"}}
	if c.SessionID != "" {
		header.Set(SessionHeader, c.SessionID)
	}
	status, err := c.call(ctx, request{method: http.MethodPost, path: c.spacePath(scope) + "/batch", body: body,
		header: header, limit: c.contentLimit()}, &res)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		return wire.WriteResult{}, c.conflictError(ae)
	}
	if err == nil && status == http.StatusAccepted {
		if res.Status != wire.HeldStatus || res.Proposal == nil {
			return wire.WriteResult{}, &BadResponseError{Status: status, Reason: "a 202 without the proposal it held"}
		}
		return res.WriteResult, &HeldError{Proposal: *res.Proposal}
	}
	return res.WriteResult, err
}

// SessionHeader names the header that carries the Claude Code session id.
const SessionHeader = "X-Claude-Code-Session-Id"

// HeldError is a batch the server held for review (202): nothing was
// written; the proposal waits for an admin. It is not a failure: the
// engine keeps the files local and does not send them again.
type HeldError struct {
	Proposal teammem.Proposal
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("held for review as proposal %d (%s)", e.Proposal.ID, e.Proposal.Reason)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// conflictError turns a batch's 409 into a *ConflictError. Conflicting
// content over the entry cap is refused: the engine would write it.
func (c *Client) conflictError(ae *APIError) error {
	var d wire.ConflictDetails
	if ae.Err == nil || wire.DecodeDetails(ae.Err.Details, &d) != nil || len(d.Conflicts) == 0 {
		return ae
	}
	for _, cf := range d.Conflicts {
		if len(cf.Content) > c.EntryLimit() {
			return &BadResponseError{Status: ae.Status, Reason: fmt.Sprintf("the conflicting entry %q is larger than %d bytes", cf.Key, c.EntryLimit())}
		}
	}
	return &ConflictError{Conflicts: d.Conflicts}
}

// WhoAmI returns the key's org and user.
func (c *Client) WhoAmI(ctx context.Context) (wire.Me, error) {
	var me wire.Me
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/me"}, &me)
	return me, err
}

// SendTelemetry posts one batch of client events, once: telemetry is
// never worth a retry or a redirect.
func (c *Client) SendTelemetry(ctx context.Context, body []byte) error {
	_, err := c.retryless().call(ctx, request{method: http.MethodPost, path: "/v1/telemetry/events", body: body,
		header: http.Header{"Content-Type": {"application/json"}}}, nil)
	return err
}

// retryless is a client like c that tries each request once.
func (c *Client) retryless() *Client {
	return &Client{BaseURL: c.BaseURL, Key: c.Key, Repo: c.Repo, HTTP: c.HTTP, UserAgent: c.UserAgent, Attempts: 1}
}
