package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

type ctxKey int

// ctxRequest keys a request's *reqContext.
const ctxRequest ctxKey = 0

func requestID(ctx context.Context) string {
	if c := reqContextOf(ctx); c != nil {
		return c.id
	}
	return ""
}

// Request ids: a random process prefix and a counter, unique per process
// and unlikely to repeat across restarts, at no syscall per request.
var (
	requestIDBase = func() uint64 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		return binary.LittleEndian.Uint64(b[:])
	}()
	requestSeq atomic.Uint64
)

func newRequestID() string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], requestIDBase+requestSeq.Add(1))
	return hex.EncodeToString(b[:])
}

// validRequestID reports whether a client's X-Request-Id may be echoed and
// logged: 1 to 64 letters, digits, '.', '_' and '-'.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := range len(id) {
		switch c := id[i]; {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// statusRecorder remembers the status a handler wrote, and adds the
// Server-Timing header of the request's writes (teammem.WriteTiming): how
// long they waited for their space's write lock and held it.
type statusRecorder struct {
	http.ResponseWriter
	status int
	timing *teammem.WriteTiming
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
		r.addTiming()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
		r.addTiming()
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) addTiming() {
	if v := r.timing.ServerTiming(); v != "" {
		r.Header().Set("Server-Timing", v)
	}
}

// Flush lets server-sent events through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// observe assigns a request id, recovers panics as 500s, and records the
// request's metrics and one log line labelled by route template.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.served.Add(1)
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		// The same id under both names: X-Request-Id for teammem's own
		// clients and proxies, request-id where the official SDKs read it
		// (APIError.requestID, withResponse().request_id).
		w.Header()["X-Request-Id"] = []string{id}
		w.Header()["Request-Id"] = []string{id}
		// The route context is created here, not by the router, so that the
		// matched route template is readable after the handler returns.
		rctx := chi.NewRouteContext()
		// A stalled database must fail a request (503), not hang it. Event
		// streams are long-lived by design and bound themselves.
		timeout := s.cfg.RequestTimeout
		if strings.HasSuffix(r.URL.Path, "/events") || r.URL.Path == "/mcp" && r.Method == http.MethodGet {
			timeout = 0
		}
		ctx, stop := newReqContext(r.Context(), id, rctx, timeout)
		defer stop()
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w, timing: &ctx.timing}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.LogAttrs(r.Context(), slog.LevelError, "panic", slog.String("request_id", id), slog.Any("panic", p))
				if rec.status == 0 {
					s.writeError(rec, r, teammem.Errorf(teammem.EInternal, "internal error"))
				}
			}
			route := telemetry.RouteUnmatched
			if p := rctx.RoutePattern(); s.routeLabels[p] {
				route = p
			}
			status := rec.status
			switch {
			case ctx.clientGone:
				status = statusClientClosed
			case status == 0:
				status = http.StatusOK
			}
			d := time.Since(start)
			method := telemetry.MethodLabel(r.Method)
			s.metrics.HTTPRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
			s.metrics.HTTPDuration.WithLabelValues(route, method).Observe(d.Seconds())
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelWarn
			}
			if route == "/healthz" || route == "/readyz" || route == "/metrics" {
				level = slog.LevelDebug
			}
			s.log.LogAttrs(r.Context(), level, "request", slog.String("request_id", id), slog.String("method", r.Method),
				slog.String("route", route), slog.Int("status", status), slog.Duration("duration", d))
		}()
		next.ServeHTTP(rec, r)
	})
}

// routeLabels returns the route templates of router as chi's RoutePattern
// spells them for a matched request. A request that reaches a subrouter
// (/v1, a space) but none of its routes has a pattern too, "/v1/*", and
// that is no route: it counts as unmatched.
func routeLabels(router chi.Routes) map[string]bool {
	out := map[string]bool{}
	_ = chi.Walk(router, func(_, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if route != "/" {
			route = strings.TrimSuffix(route, "/")
		}
		out[route] = true
		return nil
	})
	return out
}

// limitBody caps every request body at the configured size. A write to
// memory refused for its size is a push refused by a cap, and is counted as
// one: a body announced too large never reaches its handler, and one that
// grows too large while read may fail before the handler gets to count it.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tooLarge := &http.MaxBytesError{Limit: s.cfg.MaxBodyBytes}
		if r.ContentLength > s.cfg.MaxBodyBytes {
			s.routeAhead(r)
			s.countPushTooLarge(r, tooLarge)
			s.writeError(w, r, tooLarge)
			return
		}
		body := &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), slot: s.writer.CheckSlot}
		r.Body = body
		next.ServeHTTP(w, r)
		if body.over {
			s.countPushTooLarge(r, tooLarge)
		}
	})
}

// limitedBody is a request body under http.MaxBytesReader that remembers
// whether a read ran past the limit, and carries the writer's check slots
// for decoding it when it is large (decodeJSON).
type limitedBody struct {
	io.ReadCloser
	over bool
	slot func(context.Context) (func(), error)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var maxErr *http.MaxBytesError
	if err != nil && errors.As(err, &maxErr) {
		b.over = true
	}
	return n, err
}

// routeAhead completes the route context of a request answered before the
// router reached its endpoint: middleware of a group runs in front of the
// subrouters mounted in it (a space's routes), when the route is known only
// as far as "/v1/repos/{owner}/{name}/{scope}/*". The metrics and the push
// the request counts as then name the route it was for.
func (s *Server) routeAhead(r *http.Request) {
	c := reqContextOf(r.Context())
	if c == nil || s.routeLabels[c.route.RoutePattern()] {
		return
	}
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	found := chi.NewRouteContext()
	if pattern := s.router.Find(found, r.Method, path); pattern != "" {
		c.route.RoutePatterns = []string{pattern}
		c.route.URLParams = found.URLParams
	}
}

// countPushTooLarge counts a request refused for its body size as a push,
// when it is one. It is the one place that counts such a refusal: a
// handler whose body read ran past the limit leaves it here (limitBody
// learns of it from what the reads returned), so it is counted once.
func (s *Server) countPushTooLarge(r *http.Request, err error) {
	c := reqContextOf(r.Context())
	if c == nil {
		return
	}
	route := c.route.RoutePattern()
	switch {
	case r.Method == http.MethodPut && route == "/api/claude_code/team_memory":
		s.recordWrite(r.Context(), c.caller, apiClaudeCode, r.URL.Query().Get("repo"), teammem.WriteResult{}, err)
	case r.Method != http.MethodGet && s.routeLabels[route] && strings.HasPrefix(route, "/v1/repos/{owner}/{name}/{scope}"):
		// Every route of a space but the reads writes to it.
		slug, _ := s.repoSlug(r)
		s.recordWrite(r.Context(), c.caller, apiV1, slug, teammem.WriteResult{}, err)
	}
}
