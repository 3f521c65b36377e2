package apiclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/apiclienttest"
	"github.com/teammem/teammem/internal/wire"
)

// The fake server of these tests (see apiclienttest).
type script = apiclienttest.Script

var (
	status = apiclienttest.Error
	okJSON = apiclienttest.OK
	serve  = apiclienttest.Serve
)

var me = wire.Me{Org: teammem.Org{Slug: "acme"}, User: teammem.User{Handle: "ann", Role: teammem.RoleMember}}

// sleeps records the waits a client asked for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// newTestClient is a client of srv whose retries do not wait.
func newTestClient(t *testing.T, srv *httptest.Server) (*Client, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	return &Client{BaseURL: srv.URL, Key: "tmk_test_key", Repo: "acme/widgets", Sleep: sl.sleep}, sl
}

func TestClientRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){
		status(503, teammem.EUnavailable, "the database cannot be reached", nil),
		status(503, teammem.EUnavailable, "the database cannot be reached", nil),
		okJSON(me),
	}}
	c, sl := newTestClient(t, serve(t, sc))
	got, err := c.WhoAmI(context.Background())
	if err != nil || got.User.Handle != "ann" {
		t.Fatalf("WhoAmI = %+v, %v", got, err)
	}
	if sc.Count() != 3 || len(sl.d) != 2 {
		t.Fatalf("%d requests and %d waits, want 3 and 2", sc.Count(), len(sl.d))
	}
}

func TestClientGivesUpAfterFourAttempts(t *testing.T) {
	t.Parallel()
	for _, reply := range []func(http.ResponseWriter, *http.Request){
		status(500, teammem.EInternal, "internal error", nil),
		status(429, teammem.ERateLimited, "slow down", nil),
		func(w http.ResponseWriter, r *http.Request) { http.Error(w, "<html>bad gateway</html>", 502) },
	} {
		sc := &script{Replies: []func(http.ResponseWriter, *http.Request){reply}}
		c, _ := newTestClient(t, serve(t, sc))
		_, err := c.WhoAmI(context.Background())
		var ae *APIError
		if !errors.As(err, &ae) || sc.Count() != DefaultAttempts {
			t.Fatalf("after %d requests: %v", sc.Count(), err)
		}
	}
}

// TestClientNamesPermanentFailures: 4xx answers are not retried, the
// server's code comes back as a *teammem.Error, and the message says why.
func TestClientNamesPermanentFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		reply    func(http.ResponseWriter, *http.Request)
		code     string
		message  string
		refused  bool
		noServer bool
	}{
		{status(401, teammem.EUnauthorized, "the API key was revoked", nil), teammem.EUnauthorized, "the API key was refused: the API key was revoked", true, false},
		{status(403, teammem.EForbidden, "the API key is read-only", wire.ForbiddenDetails{Reason: wire.ForbiddenReadOnly}.Map()), teammem.EForbidden, "the API key is read-only", true, false},
		{status(403, teammem.EForbidden, "role viewer may not team.write (needs member or above)",
			wire.ForbiddenDetails{Reason: wire.ForbiddenRole, Role: teammem.RoleViewer, Needs: teammem.RoleMember, Action: "team.write"}.Map()),
			teammem.EForbidden, "its user is a viewer (team.write needs member or above)", true, false},
		{status(413, teammem.ETooLarge, "too many entries", nil), teammem.ETooLarge, "too many entries", false, false},
		{func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", 400) }, "", "400 Bad Request", false, false},
	}
	for _, tc := range cases {
		sc := &script{Replies: []func(http.ResponseWriter, *http.Request){tc.reply}}
		c, sl := newTestClient(t, serve(t, sc))
		_, err := c.WhoAmI(context.Background())
		if sc.Count() != 1 || len(sl.d) != 0 {
			t.Errorf("%s: %d requests, want 1 (no retry)", tc.message, sc.Count())
		}
		if got := teammem.ErrorCode(err); tc.code != "" && got != tc.code {
			t.Errorf("%s: ErrorCode = %q, want %q", tc.message, got, tc.code)
		}
		f := FailureOf(err)
		if !strings.Contains(f.Message, tc.message) || f.KeyRefused() != tc.refused || f.NoServer() != tc.noServer || f.Status == 0 {
			t.Errorf("FailureOf = %+v, want a message with %q, refused %v", f, tc.message, tc.refused)
		}
	}
}

func TestClientHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	limited := func(after string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", after)
			status(429, teammem.ERateLimited, "slow down", nil)(w, r)
		}
	}
	for _, tc := range []struct {
		after    string
		min, max time.Duration
	}{
		{"3", 3 * time.Second, 3 * time.Second},
		{"3600", maxRetryAfter, maxRetryAfter},
		{time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat), 8 * time.Second, 10 * time.Second},
	} {
		sc := &script{Replies: []func(http.ResponseWriter, *http.Request){limited(tc.after), okJSON(me)}}
		c, sl := newTestClient(t, serve(t, sc))
		if _, err := c.WhoAmI(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(sl.d) != 1 || sl.d[0] < tc.min || sl.d[0] > tc.max {
			t.Errorf("Retry-After %s: asked to wait %v, want %v to %v", tc.after, sl.d, tc.min, tc.max)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	for n, base := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 7: retryCap} {
		for range 20 {
			if d := retryDelay(n, 0); d < base || d > base+base/4 {
				t.Fatalf("retryDelay(%d) = %v, want %v plus at most 25%%", n, d, base)
			}
		}
	}
}

// TestClientRetriesUnreachable: a port nobody listens on is retried, then
// named as unreachable.
func TestClientRetriesUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sl := &sleeps{}
	c := &Client{BaseURL: "http://" + addr, Key: "k", Repo: "acme/widgets", Sleep: sl.sleep}
	_, err = c.WhoAmI(context.Background())
	var ue *UnreachableError
	f := FailureOf(err)
	if !errors.As(err, &ue) || len(sl.d) != DefaultAttempts-1 || f.Code != CodeUnreachable || !f.NoServer() ||
		!strings.Contains(f.Message, "connection refused") {
		t.Fatalf("err %v, %d waits, failure %+v", err, len(sl.d), f)
	}
}

// TestClientRetriesTimeouts: an attempt that gets no answer in time is
// tried again.
func TestClientRetriesTimeouts(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done() // hang until the client gives up
			return
		}
		okJSON(me)(w, r)
	}))
	c, _ := newTestClient(t, srv)
	c.HTTP = &http.Client{Timeout: 200 * time.Millisecond}
	if _, err := c.WhoAmI(context.Background()); err != nil || n.Load() != 2 {
		t.Fatalf("after %d requests: %v", n.Load(), err)
	}
}

// TestClientStopsAtDeadline: a retry that could not finish before the
// context's deadline is not started; the failure is reported at once.
func TestClientStopsAtDeadline(t *testing.T) {
	t.Parallel()
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){status(503, teammem.EUnavailable, "down", nil)}}
	c, _ := newTestClient(t, serve(t, sc))
	c.Sleep = nil // the real timer: the deadline must stop it first
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.WhoAmI(ctx)
	if StatusOf(err) != 503 || sc.Count() != 1 {
		t.Fatalf("after %d requests: %v", sc.Count(), err)
	}
}

// TestMaxEntryBytesIsTheServerDefault: the client's own entry cap, used
// when a server announces none, is the server's default cap.
func TestMaxEntryBytesIsTheServerDefault(t *testing.T) {
	if MaxEntryBytes != teammem.DefaultServerDefaults.MaxEntryBytes {
		t.Fatalf("MaxEntryBytes = %d, the server's default is %d", MaxEntryBytes, teammem.DefaultServerDefaults.MaxEntryBytes)
	}
}
