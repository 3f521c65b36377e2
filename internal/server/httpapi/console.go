package httpapi

import (
	"bytes"
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/server/console"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// consoleBackend is the console's way into the API (console.Backend): the
// console's pages are requests of the /v1 API, made in process as the
// signed-in key, so that they meet exactly the API's policy, validation,
// write path and audit.
type consoleBackend struct{ s *Server }

// newConsole returns the console on the server's store, or nil when the
// store keeps no console state.
func (s *Server) newConsole() *console.Console {
	cs, ok := s.store.(teammem.ConsoleStore)
	if !ok {
		return nil
	}
	return console.New(console.Config{Backend: consoleBackend{s}, Store: s.store, Sessions: cs, Clock: s.cfg.Clock, Log: s.log,
		PublicURL: s.cfg.PublicURL, TrustedProxies: console.Proxies(s.cfg.TrustedProxies), SignInLimit: s.cfg.SignInLimit})
}

// Principal resolves a key hash afresh (never from the cache, which another
// replica's revocation may not have reached yet), with the API's refusals.
func (b consoleBackend) Principal(ctx context.Context, keyHash []byte) (teammem.Principal, error) {
	var h [32]byte
	if len(keyHash) != len(h) {
		return teammem.Principal{}, refusalError(wire.RefusedKeyUnknown)
	}
	copy(h[:], keyHash)
	p, err := b.s.lookupKey(ctx, h, b.s.now(), true)
	if err == nil {
		b.s.touch.mark(p.Key.ID, b.s.now())
	}
	return p, err
}

// Call routes one request through the API's router as p. The request gets
// its own request context, marked in process with p as its caller, which
// requireKey accepts in place of a key header; nothing from the network
// can set that mark.
func (b consoleBackend) Call(ctx context.Context, p teammem.Principal, method, path string, body []byte) (int, http.Header, []byte) {
	req, err := http.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
	if err != nil {
		return http.StatusBadRequest, http.Header{}, []byte(`{"error":{"type":"invalid","message":"bad console request path"}}`)
	}
	rc, stop := newReqContext(ctx, requestID(ctx), chi.NewRouteContext(), 0)
	defer stop()
	rc.caller, rc.inProcess = p, true
	req = req.WithContext(rc)
	req.Header.Set("X-Teammem-Client", "teammem-console")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &bufferWriter{header: http.Header{}}
	b.s.router.ServeHTTP(rec, req)
	if rc.clientGone {
		// The browser went away: so did the console's page request, which
		// observe then records as the API request was (fail).
		if outer := reqContextOf(ctx); outer != nil {
			outer.clientGone = true
		}
		if rec.status == 0 {
			rec.status = statusClientClosed
		}
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.status, rec.header, rec.buf.Bytes()
}

// Status is the status the API answers err with (statusByCode).
func (b consoleBackend) Status(err error) int {
	if status, ok := statusByCode[teammem.ErrorCode(asTooLarge(err))]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// bufferWriter collects a response in memory.
type bufferWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func (w *bufferWriter) Header() http.Header { return w.header }

func (w *bufferWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *bufferWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.buf.Write(b)
}
