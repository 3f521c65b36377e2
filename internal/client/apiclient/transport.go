package apiclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// Response size limits. A server, hostile or broken, cannot make the
// client read more than these; a larger answer is a BadResponseError and
// nothing of it is used.
const (
	// smallBodyLimit bounds answers without entry content: heads, /v1/me
	// (whose org settings may carry an allowlist of a few hundred
	// patterns) and error bodies other than a batch's 409.
	smallBodyLimit = 1 << 20
	// MaxResponseBytes bounds answers with content: snapshots, change
	// lists, batch results and a batch's 409 (which lists the conflicting
	// entries' content). The server's default caps, 500 entries of at most
	// 250 000 bytes, make at most 125 MB of content in a full snapshot;
	// 150 MiB leaves room for JSON escaping and the per-entry fields.
	MaxResponseBytes = 150 << 20
)

// Retry policy for every request (reference §3.7): up to DefaultAttempts
// tries, waiting 500 ms · 2^(n−1) plus up to 25 % jitter after the nth.
const (
	DefaultAttempts = 4
	retryBase       = 500 * time.Millisecond
	retryCap        = 32 * time.Second // the reference's cap on one wait
	// maxRetryAfter bounds how long a server's Retry-After may hold one
	// request up. Pulls and pushes also run in one-shot commands and in
	// Claude Code's hooks, which must answer within seconds; a server that
	// needs longer gets it from the watcher's own backoff between syncs.
	maxRetryAfter = 30 * time.Second
	// DefaultTimeout bounds one attempt when Client.HTTP sets no timeout
	// of its own (the reference's per-request timeout).
	DefaultTimeout = 30 * time.Second
)

// request is one API call: what to send and how much answer to accept.
type request struct {
	method string
	path   string // below BaseURL, with the query
	body   []byte
	header http.Header
	limit  int64 // the largest successful answer; smallBodyLimit when 0
}

// call sends r and decodes a successful answer into out (when non-nil),
// retrying failures worth retrying. It returns the final status: 304 means
// "not modified" and leaves out untouched.
func (c *Client) call(ctx context.Context, r request, out any) (int, error) {
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	for n := 1; ; n++ {
		status, err := c.attempt(ctx, r, out)
		if err == nil || n >= attempts || !retryable(err) || ctx.Err() != nil {
			return status, err
		}
		var after time.Duration
		if ae := (*APIError)(nil); errors.As(err, &ae) {
			after = ae.RetryAfter
		}
		wait := retryDelay(n, after)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return status, err // the next try could not finish in time: say why now
		}
		if c.sleep(ctx, wait) != nil {
			return status, err
		}
	}
}

// attempt makes one try of r.
func (c *Client) attempt(ctx context.Context, r request, out any) (int, error) {
	resp, err := c.send(ctx, c.apiClient(false), r)
	if err != nil {
		return StatusOf(err), err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return resp.StatusCode, nil
	}
	limit := r.limit
	if limit <= 0 {
		limit = smallBodyLimit
	}
	body, err := c.readBody(resp, limit)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, &BadResponseError{Status: resp.StatusCode, Reason: "not the JSON a teammem server sends (" + jsonProblem(err) + ")"}
		}
	}
	return resp.StatusCode, nil
}

// send makes the HTTP request and returns the open response of a 2xx or
// 304; every other outcome becomes one of the client's error types.
func (c *Client) send(ctx context.Context, hc *http.Client, r request) (*http.Response, error) {
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, strings.TrimRight(c.BaseURL, "/")+r.path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	req.Header.Set("User-Agent", cmp.Or(c.UserAgent, "teammem"))
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{Server: c.BaseURL, Err: err}
	}
	if resp.StatusCode < 300 || resp.StatusCode == http.StatusNotModified {
		return resp, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode < 400 {
		return nil, &RedirectError{Status: resp.StatusCode, Location: resp.Header.Get("Location")}
	}
	limit := int64(smallBodyLimit)
	if resp.StatusCode == http.StatusConflict {
		limit = max(r.limit, limit) // a batch's 409 carries the conflicting entries
	}
	return nil, c.decodeError(resp, limit)
}

// decodeError turns an error answer (4xx or 5xx) into an *APIError: the
// status, the wait Retry-After asks for, and the server's error rebuilt
// from a wire.ErrorBody. A body over limit or not a teammem error leaves
// Err nil; the status is then all the client knows.
func (c *Client) decodeError(resp *http.Response, limit int64) *APIError {
	ae := &APIError{Status: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	if b, err := c.readBody(resp, limit); err == nil {
		ae.Err = errorFromBody(b)
	}
	return ae
}

// errorFromBody rebuilds the server's error from an error body in either
// envelope: teammem's wire.ErrorBody, or Anthropic's (a top-level "type":
// "error"), which the Dreams and memory stores routes answer in. It is nil
// for a body that is neither.
func errorFromBody(b []byte) *teammem.Error {
	var ab wire.AnthropicErrorBody
	if json.Unmarshal(b, &ab) == nil && ab.Type == "error" && ab.Error.Type != "" {
		return ab.Error.Err()
	}
	var eb wire.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Type != "" {
		return eb.Error.Err()
	}
	return nil
}

// readBody reads a whole answer, refusing one over limit without reading
// past it. A connection lost halfway is unreachable (and retried).
func (c *Client) readBody(resp *http.Response, limit int64) ([]byte, error) {
	tooLarge := &BadResponseError{Status: resp.StatusCode, Reason: fmt.Sprintf("the body is larger than the client's limit of %d bytes", limit)}
	if resp.ContentLength > limit {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return nil, &UnreachableError{Server: c.BaseURL, Err: fmt.Errorf("reading the answer: %w", err)}
	case int64(len(b)) > limit:
		return nil, tooLarge
	}
	return b, nil
}

// apiClient is the HTTP client of one request: the configured transport
// and timeout, no cookies, and redirects refused, never followed with the
// key. A stream gets no overall timeout.
func (c *Client) apiClient(stream bool) *http.Client {
	base := c.HTTP
	if base == nil {
		base = &http.Client{Timeout: DefaultTimeout}
	}
	hc := &http.Client{Transport: base.Transport, Timeout: base.Timeout, CheckRedirect: refuseRedirect}
	if stream {
		hc.Timeout = 0
	}
	return hc
}

// refuseRedirect makes http.Client hand back a 3xx instead of following it.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// sleep waits d, or until ctx ends.
func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryDelay is the wait after the nth failed attempt: the backoff with
// jitter, or what the server asked for (capped) when that is longer.
func retryDelay(n int, after time.Duration) time.Duration {
	d := Jitter(min(retryBase<<(n-1), retryCap))
	return max(d, min(after, maxRetryAfter))
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
		return time.Duration(min(secs, maxRetryAfter.Seconds()) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// jsonProblem describes a decoding error without quoting the body.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s has the wrong type", cmp.Or(typ.Field, "a value"))
	}
	return "unreadable"
}

// Jitter adds up to 25 % to d, so that clients that failed together do
// not all try again together. The retries, the event stream's reconnects
// and the watcher's backoff use it.
func Jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/4+1))
}
