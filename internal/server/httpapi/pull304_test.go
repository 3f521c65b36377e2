package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestConditionalPullTouchesNoDatabase: once the key and the space's head
// are cached, conditional pulls through both dialects (the Claude Code GET
// and /v1's head view) answer 304 without one statement reaching the
// database, on both drivers; a write moves the head and the next pull
// reads again (issue 26 point 2).
func TestConditionalPullTouchesNoDatabase(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		key := e.keys[teammem.RoleOwner]
		queries := func() int64 { return st.(teammem.PoolStatser).PoolStats().Queries }
		put := func(content string) {
			t.Helper()
			if r := e.do(http.MethodPut, "/api/claude_code/team_memory?repo=acme/pulls", key,
				map[string]any{"entries": map[string]string{"a.md": content}}); r.Status != http.StatusOK {
				t.Fatalf("push: %d %s", r.Status, r.Body)
			}
		}
		etags := func() (legacy, v1 string) {
			t.Helper()
			a := e.do(http.MethodGet, "/api/claude_code/team_memory?repo=acme/pulls", key, nil)
			b := e.do(http.MethodGet, "/v1/repos/acme/pulls/team?view=head", key, nil)
			if a.Status != http.StatusOK || b.Status != http.StatusOK || a.Header.Get("ETag") == "" || b.Header.Get("ETag") == "" {
				t.Fatalf("full pulls: %d %q, %d %q", a.Status, a.Header.Get("ETag"), b.Status, b.Header.Get("ETag"))
			}
			return a.Header.Get("ETag"), b.Header.Get("ETag")
		}
		put("first\n")
		legacy, v1 := etags()
		before := queries()
		const pulls = 200
		for range pulls {
			a := e.do(http.MethodGet, "/api/claude_code/team_memory?repo=acme/pulls", key, nil, "If-None-Match", legacy)
			b := e.do(http.MethodGet, "/v1/repos/acme/pulls/team?view=head", key, nil, "If-None-Match", v1)
			if a.Status != http.StatusNotModified || b.Status != http.StatusNotModified {
				t.Fatalf("conditional pulls: %d, %d", a.Status, b.Status)
			}
		}
		if n := queries() - before; n != 0 {
			t.Errorf("%d conditional pulls sent %d statements to the database, want none", 2*pulls, n)
		}
		put("second\n")
		moved := queries()
		if moved == before {
			t.Fatal("a write sent no statement: the counter counts nothing")
		}
		if a := e.do(http.MethodGet, "/api/claude_code/team_memory?repo=acme/pulls", key, nil, "If-None-Match", legacy); a.Status != http.StatusOK {
			t.Errorf("a pull with the old ETag after a write = %d, want 200", a.Status)
		}
	})
}
