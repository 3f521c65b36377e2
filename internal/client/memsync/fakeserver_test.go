package memsync

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/wire"
)

// The engine's tests of pulls and pushes against a hostile or flaky server
// script its answers here; apiclient's own tests cover the requests.

// script is a fake server answering each request with the next of its
// replies (the last one repeats), counting what it received.
type script struct {
	mu      sync.Mutex
	replies []func(w http.ResponseWriter, r *http.Request)
	hits    int
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b)) // for the reply to read again
	s.mu.Lock()
	i := min(s.hits, len(s.replies)-1)
	s.hits++
	s.mu.Unlock()
	s.replies[i](w, r)
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// status answers with a teammem error body.
func status(code int, typ, msg string, details map[string]any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: wire.ErrorObject{Type: typ, Message: msg, Details: details}})
	}
}

// okJSON answers 200 with v.
func okJSON(v any) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
}

// newTestClient is a client of srv whose retries do not wait.
func newTestClient(t *testing.T, srv *httptest.Server) *apiclient.Client {
	t.Helper()
	noWait := func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return &apiclient.Client{BaseURL: srv.URL, Key: "tmk_test_key", Repo: "acme/widgets", Sleep: noWait}
}

func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
