package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/teammem/teammem/internal/teammem"
)

// The handler adapter: handlers return an error and one place decides what
// becomes of it. Three cases, in this order:
//
//   - the client went away (the request's context was cancelled, not timed
//     out): the request is recorded as 499 ("client closed request") and not
//     logged as a failure. It is still answered when nothing was written:
//     net/http also cancels the context of a client that only half-closed
//     its connection after sending, and that client waits for the answer,
//     which must not become net/http's implicit empty 200;
//   - the response had begun (a stream sent its status, an export part of
//     its body): a second header or an error body would corrupt it, so the
//     error is logged once and the response ends as it is;
//   - otherwise the error is answered in the route's envelope.

// statusClientClosed is the status a request is recorded with when its
// client went away before it was answered (nginx's 499). It is never sent.
const statusClientClosed = 499

// handlerFunc is an HTTP handler that reports failure by returning an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// errorWriter answers a request with err in one envelope (writeError,
// writeStoreError).
type errorWriter func(w http.ResponseWriter, r *http.Request, err error)

// handle adapts a handlerFunc: a returned error becomes the JSON error body.
func (s *Server) handle(fn handlerFunc) http.HandlerFunc { return s.adapt(fn, s.writeError) }

// storeHandle adapts a handler of the store routes: a returned error becomes
// Anthropic's envelope.
func (s *Server) storeHandle(fn handlerFunc) http.HandlerFunc { return s.adapt(fn, s.writeStoreError) }

// adapt runs fn on a writer that knows whether the response has begun, and
// hands a returned error to fail.
func (s *Server) adapt(fn handlerFunc, answer errorWriter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		gw := &guardedWriter{ResponseWriter: w}
		if err := fn(gw, r); err != nil {
			s.fail(gw, r, err, answer)
		}
	}
}

// fail is where every error of a request goes, from a handler or from a
// middleware: it answers err with answer unless the client went away or the
// response had begun already (see the top of this file).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, answer errorWriter) {
	switch {
	case clientGone(r):
		if c := reqContextOf(r.Context()); c != nil {
			c.clientGone = true
		}
		if !responseBegun(w) {
			answerError(w, r, err, answer) // quiet: logFailure skips a request whose client went away
		}
	case responseBegun(w):
		code := teammem.ErrorCode(err)
		if code == "" {
			code = teammem.EInternal
		}
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed after its response began",
			slog.String("request_id", requestID(r.Context())), slog.String("code", code), slog.String("error", s.logText(r, err)))
	default:
		answerError(w, r, err, answer)
	}
}

// answerError answers err with answer, first dropping the headers a
// handler set for the body it meant to send (an export's file name, the
// space's ETag): they do not describe an error body.
func answerError(w http.ResponseWriter, r *http.Request, err error, answer errorWriter) {
	h := w.Header()
	h.Del("Content-Disposition")
	h.Del("ETag")
	answer(w, r, err)
}

// logFailure logs a request answered with a server-side failure (code
// internal or unavailable), unless its client went away: that is no
// failure of the server's.
func (s *Server) logFailure(r *http.Request, code string, err error) {
	if c := reqContextOf(r.Context()); c != nil && c.clientGone {
		return
	}
	s.log.LogAttrs(r.Context(), slog.LevelError, "request failed", slog.String("request_id", requestID(r.Context())),
		slog.String("code", code), slog.String("error", s.logText(r, err)))
}

// clientGone reports whether r's client went away: its context was
// cancelled. A request over its time limit ends with DeadlineExceeded
// instead, the server's failure, and is answered (503) as such.
func clientGone(r *http.Request) bool {
	return errors.Is(r.Context().Err(), context.Canceled)
}

// guardedWriter is the writer a handler writes through: it remembers
// whether the response has begun, so that fail never writes a second header
// or an error body after it.
type guardedWriter struct {
	http.ResponseWriter
	begun bool
}

func (g *guardedWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		g.begun = true // an informational 1xx may precede the real status
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *guardedWriter) Write(b []byte) (int, error) {
	g.begun = true
	return g.ResponseWriter.Write(b)
}

// Flush sends the status (200 unless one was written) and what is buffered.
func (g *guardedWriter) Flush() {
	g.begun = true
	_ = http.NewResponseController(g.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (g *guardedWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// responseBegun reports whether w, or a writer it wraps, says the response
// has begun. A writer that cannot tell is taken as not begun: middleware
// refuses before any handler has written.
func responseBegun(w http.ResponseWriter) bool {
	for w != nil {
		switch t := w.(type) {
		case *guardedWriter:
			return t.begun
		case *statusRecorder:
			return t.status != 0
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
	return false
}
