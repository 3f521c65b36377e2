package claudeproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// fail answers a request the proxy itself could not complete with 502.
func (p *Proxy) fail(w http.ResponseWriter, r *http.Request, kind, msg string) {
	p.failStatus(w, http.StatusBadGateway, kind, msg)
}

// failStatus answers one of the proxy's own failures in Anthropic's error
// envelope, which Claude Code shows, with x-should-retry: false so that
// Claude Code gives up within seconds instead of retrying silently for
// minutes (2.1.332 does both, with and without it), and tells Warn once
// per kind.
func (p *Proxy) failStatus(w http.ResponseWriter, status int, kind, msg string) {
	msg = "teammem proxy: " + msg
	p.warn(kind, msg)
	w.Header().Set("X-Should-Retry", "false")
	writeError(w, status, "api_error", msg)
}

// warn tells Warn of msg the first time a failure of kind happens.
func (p *Proxy) warn(kind, msg string) {
	if p.cfg.Warn == nil {
		return
	}
	p.warnMu.Lock()
	first := !p.warned[kind]
	p.warned[kind] = true
	p.warnMu.Unlock()
	if first {
		p.cfg.Warn(msg)
	}
}

// cause is the innermost useful part of a transport error, without the
// request URL (which may carry a query).
func cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return oneLine(err.Error())
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// writeError answers in Anthropic's error envelope, which both the CLI and
// the SDKs parse.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`+"\n", typ, msg)
}
