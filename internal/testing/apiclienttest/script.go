// Package apiclienttest scripts a fake teammem server for tests: of
// apiclient's requests, and of the sync engine over them, with answers no
// real server gives (lost, oversized, hostile).
package apiclienttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/teammem/teammem/internal/wire"
)

// Script is a fake server answering each request with the next of its
// Replies (the last one repeats), counting the requests it received.
type Script struct {
	Replies []func(w http.ResponseWriter, r *http.Request)

	mu   sync.Mutex
	hits int
}

// ServeHTTP answers r with the next reply; the reply can read the body
// again.
func (s *Script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	s.mu.Lock()
	i := min(s.hits, len(s.Replies)-1)
	s.hits++
	s.mu.Unlock()
	s.Replies[i](w, r)
}

// Count is the number of requests received so far.
func (s *Script) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// Error answers code with a teammem error body.
func Error(code int, typ, msg string, details map[string]any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: wire.ErrorObject{Type: typ, Message: msg, Details: details}})
	}
}

// OK answers 200 with v as JSON.
func OK(v any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

// Serve runs h on a local test server, closed when the test ends.
func Serve(tb testing.TB, h http.Handler) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// AnthropicError answers code in Anthropic's error envelope, which the
// Dreams and memory stores routes answer in; extra adds fields to the
// error object (such as changed_paths).
func AnthropicError(code int, typ, msg string, extra map[string]any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		e := map[string]any{"type": typ, "message": msg}
		for k, v := range extra {
			e[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": e})
	}
}
