package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// provider is one provider's translation of a Request into SDK calls.
type provider interface {
	// prepare converts req once; the returned attempt sends it once. Both
	// SDKs run with their own retries disabled, so the client's policy is the
	// only one.
	prepare(req Request) (attempt, error)
}

// attempt sends a prepared request once. It returns the raw HTTP response
// whenever one arrived, also alongside an error, so that the status and the
// headers drive the retry decision the same way for every provider.
type attempt func(ctx context.Context) (Response, *http.Response, error)

// client is the Model returned by New: validation, per-attempt timeout and
// retries around a provider.
type client struct {
	cfg      Config
	provider provider
	backoff  backoffPolicy
}

// maxRetryAfter caps the wait a server may ask for. A longer Retry-After ends
// the call with the error instead: waiting minutes inside a command helps
// nobody, and retrying early would only be refused again.
const maxRetryAfter = 60 * time.Second

// Name implements Model.
func (c *client) Name() string { return c.cfg.Provider + "/" + c.cfg.Model }

// Complete implements Model.
func (c *client) Complete(ctx context.Context, req Request) (Response, error) {
	if err := req.Validate(); err != nil {
		return Response{}, err
	}
	send, err := c.provider.prepare(req)
	if err != nil {
		return Response{}, err
	}
	for n := 1; ; n++ {
		resp, v := c.try(ctx, send, n)
		if v == nil {
			return resp, nil
		}
		if !v.retry || n > c.cfg.MaxRetries {
			return Response{}, v.err
		}
		wait := c.backoff.delay(n - 1)
		if v.hasAfter {
			if v.after > maxRetryAfter {
				return Response{}, v.err
			}
			wait = v.after
		}
		if c.backoff.waiting != nil {
			c.backoff.waiting(wait)
		}
		if err := sleep(ctx, wait); err != nil {
			e := *v.err // keep the status that caused the wait
			e.Message += "; gave up waiting to retry: " + err.Error()
			e.Err = err
			return Response{}, &e
		}
	}
}

// verdict is the outcome of a failed attempt.
type verdict struct {
	err      *Error
	retry    bool
	after    time.Duration // the server's Retry-After
	hasAfter bool
}

// try sends one attempt bounded by the configured timeout.
func (c *client) try(ctx context.Context, send attempt, n int) (Response, *verdict) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, raw, err := send(actx)
	if err == nil {
		return resp, nil
	}
	v := c.classify(ctx, err, raw)
	v.err.Attempts = n
	return Response{}, v
}

// classify turns a failed attempt into an Error and decides whether to retry:
// yes for 429, 5xx and connection errors; no for other statuses, for a timed
// out attempt, and once the caller's context is done.
func (c *client) classify(ctx context.Context, err error, raw *http.Response) *verdict {
	e := &Error{Provider: c.cfg.Provider}
	v := &verdict{err: e}
	switch {
	case ctx.Err() != nil:
		e.Err = ctx.Err()
		e.Message = "gave up: " + ctx.Err().Error()
	case raw != nil && raw.StatusCode >= 400:
		e.StatusCode = raw.StatusCode
		e.Type, e.Message = describeBody(raw)
		e.Message = redact(e.Message, c.cfg.APIKey)
		e.RequestID = requestID(raw)
		e.Hint = statusHint(c.cfg, raw.StatusCode)
		v.after, v.hasAfter = retryAfter(raw.Header)
		e.RetryAfter = v.after
		v.retry = raw.StatusCode == http.StatusTooManyRequests || raw.StatusCode >= 500
	case errors.Is(err, context.DeadlineExceeded):
		e.Err = context.DeadlineExceeded
		e.Message = fmt.Sprintf("no response within %s (%s)", c.cfg.Timeout, EnvTimeout)
	case transient(err):
		e.Err = err
		e.Message = "connection failed: " + redact(err.Error(), c.cfg.APIKey)
		if c.cfg.BaseURL != "" && errors.Is(err, syscall.ECONNREFUSED) {
			e.Hint = "is the server at " + c.cfg.BaseURL + " running?"
		}
		v.retry = true
	case raw != nil:
		e.Err = err
		e.Message = "invalid response: " + redact(err.Error(), c.cfg.APIKey)
	default:
		e.Err = err
		e.Message = redact(err.Error(), c.cfg.APIKey)
	}
	return v
}

// transient reports whether err is a network failure worth another attempt.
func transient(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED)
}

// retryAfter reads the wait a server asks for: retry-after-ms (Anthropic and
// OpenAI), else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			return max(0, time.Duration(ms*float64(time.Millisecond))), true
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return max(0, time.Duration(s*float64(time.Second))), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

// backoffPolicy is capped exponential backoff with jitter.
type backoffPolicy struct {
	base, max time.Duration
	jitter    func() float64 // in [0, 1)
	// waiting, if set, is told of each wait before it starts; tests use it
	// to act at a known point.
	waiting func(time.Duration)
}

// defaultBackoff waits 0.5 s, 1 s, 2 s, ... up to 8 s, each shortened by up
// to half at random so that clients that failed together do not retry together.
var defaultBackoff = backoffPolicy{base: 500 * time.Millisecond, max: 8 * time.Second, jitter: rand.Float64}

// delay returns the wait before retry number n (0 for the first retry).
func (b backoffPolicy) delay(n int) time.Duration {
	d := b.max
	if n < 30 && b.base<<n < b.max && b.base<<n > 0 {
		d = b.base << n
	}
	return d/2 + time.Duration(b.jitter()*float64(d/2))
}

// sleep waits d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
