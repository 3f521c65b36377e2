package apiclient

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// APIError is a server's answer that is not a success. Err is the server's
// error rebuilt from the body, so teammem.ErrorCode and errors.As see the
// same code the server sent; it is nil when the body was not a teammem
// error (an HTML page from a proxy, say), and the status is all we know.
type APIError struct {
	Status int
	Err    *teammem.Error
	// RetryAfter is the wait the server asked for (Retry-After), 0 if none.
	RetryAfter time.Duration
}

// Error describes the answer with the server's own message when it sent one.
func (e *APIError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("the server answered %d %s: %s", e.Status, e.Err.Code, e.Err.Message)
	}
	return fmt.Sprintf("the server answered %d %s (not a teammem error)", e.Status, http.StatusText(e.Status))
}

// Unwrap returns the rebuilt server error.
func (e *APIError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// Code is the server's error code, "" when the body carried none.
func (e *APIError) Code() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Code
}

// Permanent reports whether retrying without a change cannot help: the
// reference's rule, a 4xx other than 409 and 429 (and 408, a timeout).
func (e *APIError) Permanent() bool {
	switch e.Status {
	case http.StatusConflict, http.StatusTooManyRequests, http.StatusRequestTimeout:
		return false
	}
	return e.Status >= 400 && e.Status < 500
}

// forbidden returns the reason details of a 403, if the server sent them.
func (e *APIError) forbidden() (wire.ForbiddenDetails, bool) {
	var d wire.ForbiddenDetails
	if e.Status != http.StatusForbidden || e.Err == nil || e.Err.Details == nil {
		return d, false
	}
	return d, wire.DecodeDetails(e.Err.Details, &d) == nil && d.Reason != ""
}

// UnreachableError is a request that got no answer: the connection was
// refused or reset, the name did not resolve, TLS failed or the server
// did not answer in time.
type UnreachableError struct {
	Server string // the base URL tried
	Err    error  // the transport's error
}

// Error names the server and the cause in a few words.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the server at %s: %s", e.Server, e.cause())
}

// Unwrap returns the transport's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Timeout reports whether the server did not answer in time.
func (e *UnreachableError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout() || errors.Is(e.Err, context.DeadlineExceeded)
}

// permanent reports whether trying again soon cannot help: an unknown host
// name or a certificate the client does not trust.
func (e *UnreachableError) permanent() bool {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	return errors.As(e.Err, &dns) && dns.IsNotFound || errors.As(e.Err, &unknownCA) || errors.As(e.Err, &hostname)
}

func (e *UnreachableError) cause() string {
	var dns *net.DNSError
	switch {
	case e.Timeout():
		return "no answer in time"
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return "connection refused (is the server running, and is --server right?)"
	case errors.Is(e.Err, syscall.ECONNRESET):
		return "the connection was reset"
	case errors.As(e.Err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("unknown host %q", dns.Name)
	}
	return e.Err.Error()
}

// RedirectError is a 3xx answer. The client never follows redirects: a
// request carries the API key, which must reach no other place than the
// configured server, and a teammem server never redirects its API.
type RedirectError struct {
	Status   int
	Location string // as the server sent it; "" when absent
}

// Error says that a redirect came back and what to check.
func (e *RedirectError) Error() string {
	to := e.Location
	if to == "" {
		to = "nowhere"
	}
	return fmt.Sprintf("the server answered a redirect (%d to %s), which teammem does not follow with your key; check --server", e.Status, to)
}

// BadResponseError is an answer the client refuses to use: a body over the
// size limit, one that is not the JSON it should be, or content a teammem
// server would never send. A hostile or broken server ends here.
type BadResponseError struct {
	Status int
	Reason string // what was wrong, for people
}

// Error says what was wrong with the answer.
func (e *BadResponseError) Error() string {
	return fmt.Sprintf("the server's answer (%d) is unusable: %s", e.Status, e.Reason)
}

// ConflictError is a 409 from a batch: the current state of each key whose
// base no longer held. The engine merges and retries; it reaches the user
// only when conflicts keep coming.
type ConflictError struct {
	Conflicts []teammem.Conflict
}

// Error says how many entries changed under the push.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("%d entries changed on the server since they were last synced", len(e.Conflicts))
}

// Unwrap lets teammem.ErrorCode see the conflict code.
func (e *ConflictError) Unwrap() error {
	return teammem.Errorf(teammem.EConflict, "%s", e.Error())
}

// IsPermanent reports whether err is a permanent API failure.
func IsPermanent(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Permanent()
}

// StatusOf returns the HTTP status of an API error, 0 otherwise.
func StatusOf(err error) int {
	var ae *APIError
	var re *RedirectError
	var be *BadResponseError
	switch {
	case errors.As(err, &ae):
		return ae.Status
	case errors.As(err, &re):
		return re.Status
	case errors.As(err, &be):
		return be.Status
	}
	return 0
}

// retryable reports whether a failed attempt is worth another: no answer
// (but not an unknown host or an untrusted certificate), a 5xx, a 429 or a
// 408. Other 4xx, redirects and unusable answers would fail again the same
// way.
func retryable(err error) bool {
	var ue *UnreachableError
	var ae *APIError
	switch {
	case errors.As(err, &ue):
		return !ue.permanent()
	case errors.As(err, &ae):
		return ae.Status >= 500 || ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusRequestTimeout
	}
	return false
}
