package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestWritesReportLockTiming: a write's response says how long it waited
// for its space's write lock and held it (Server-Timing), on both drivers,
// and on SQLite, whose one writer every org shares, how much of the wait
// other orgs held it; a read, which takes no lock, says nothing.
func TestWritesReportLockTiming(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		owner := e.keys[teammem.RoleOwner]
		put := e.do(http.MethodPut, "/api/claude_code/team_memory?repo=acme/app", owner,
			map[string]any{"entries": map[string]string{"a.md": "hello\n"}})
		if put.Status != http.StatusOK {
			t.Fatalf("push: %d %s", put.Status, put.Body)
		}
		h := put.Header.Get("Server-Timing")
		if _, ok := teammem.ParseServerTiming(h, "lock-wait"); !ok {
			t.Errorf("push Server-Timing %q has no lock-wait", h)
		}
		if held, ok := teammem.ParseServerTiming(h, "lock-held"); !ok || held <= 0 {
			t.Errorf("push Server-Timing %q: lock-held %v, %v; want a positive duration", h, held, ok)
		}
		_, shared := teammem.ParseServerTiming(h, "lock-wait-others")
		if want := t.Name() == "TestWritesReportLockTiming/sqlite"; shared != want {
			t.Errorf("push Server-Timing %q: lock-wait-others there = %v, want %v", h, shared, want)
		}
		get := e.do(http.MethodGet, "/api/claude_code/team_memory?repo=acme/app", owner, nil)
		if get.Status != http.StatusOK || get.Header.Get("Server-Timing") != "" {
			t.Errorf("pull: %d, Server-Timing %q; want 200 and none", get.Status, get.Header.Get("Server-Timing"))
		}
	})
}
