package memsync_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// requestLog sits in front of a real server, recording each request's path
// and query, and answers 503 to the /changes requests while failChanges is
// set: a server that stumbles.
type requestLog struct {
	mu          sync.Mutex
	seen        []string
	failChanges bool
	proxy       *httputil.ReverseProxy
}

func (l *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.seen = append(l.seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	fail := l.failChanges && strings.HasSuffix(r.URL.Path, "/changes")
	l.mu.Unlock()
	if fail {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	l.proxy.ServeHTTP(w, r)
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.seen
	l.seen = nil
	return seen
}

// TestSyncMovedGoesStraightToChanges: a pull the server announced (a live
// event) asks for the changes since the synced version and nothing else,
// one round trip where a sync makes two; its own write announced back
// changes nothing; and when that request fails, the ordinary pull (head
// check first) takes over within the same sync, so nothing is missed.
func TestSyncMovedGoesStraightToChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	upstream, key := startServer(t)
	target, _ := url.Parse(upstream)
	log := &requestLog{proxy: httputil.NewSingleHostReverseProxy(target)}
	front := httptest.NewServer(log)
	t.Cleanup(front.Close)

	a, b := newEngine(t, upstream, key), newEngine(t, front.URL, key)
	b.Client.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() } // retries without waiting
	mustWrite(t, a.MemoryDir, "team/build.md", "make\n")
	mustSync(t, a, teammem.ScopeTeam)
	mustSync(t, b, teammem.ScopeTeam)

	mustWrite(t, a.MemoryDir, "team/build.md", "make all\n")
	mustSync(t, a, teammem.ScopeTeam)
	log.take()
	rep, err := b.SyncMoved(ctx, teammem.ScopeTeam)
	if err != nil {
		t.Fatal(err)
	}
	if got := readKey(b.MemoryDir, "team/build.md"); got != "make all\n" || len(rep.Pulled) != 1 {
		t.Fatalf("after the announced pull b has %q (pulled %v)", got, rep.Pulled)
	}
	if seen := log.take(); len(seen) != 1 || !strings.Contains(seen[0], "/team/changes?since=") {
		t.Fatalf("the announced pull sent %v, want only the changes since b's version", seen)
	}

	// The same announcement again (b's own write comes back this way too).
	if rep, err := b.SyncMoved(ctx, teammem.ScopeTeam); err != nil || !rep.NotModified || len(rep.Pulled) != 0 {
		t.Fatalf("an announcement of nothing new: %+v, %v", rep, err)
	}
	log.take()

	// The changes request fails: the head check and a second try follow.
	mustWrite(t, a.MemoryDir, "team/deploy.md", "ship\n")
	mustSync(t, a, teammem.ScopeTeam)
	log.mu.Lock()
	log.failChanges = true
	log.mu.Unlock()
	rep, err = b.SyncMoved(ctx, teammem.ScopeTeam)
	log.mu.Lock()
	log.failChanges = false
	log.mu.Unlock()
	if err == nil {
		t.Fatalf("with every changes request failing the sync succeeded: %+v", rep)
	}
	if seen := log.take(); len(seen) < 3 || !strings.Contains(strings.Join(seen, "\n"), "view=head") {
		t.Fatalf("after the failed changes request the pull sent %v, want the head check and changes again", seen)
	}
	if rep, err := b.SyncMoved(ctx, teammem.ScopeTeam); err != nil || readKey(b.MemoryDir, "team/deploy.md") != "ship\n" {
		t.Fatalf("the next announced pull: %+v, %v; deploy.md = %q", rep, err, readKey(b.MemoryDir, "team/deploy.md"))
	}
}
