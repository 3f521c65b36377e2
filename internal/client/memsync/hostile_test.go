package memsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestClientRefusesRedirects: a redirect to another port is reported, not
// followed; the other listener never hears from the client, key or not.
func TestClientRefusesRedirects(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		okJSON(me)(w, r)
	}))
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		sc := &script{replies: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, code)
		}}}
		c, _ := newTestClient(t, serve(t, sc))
		_, errMe := c.WhoAmI(context.Background())
		_, errBatch := c.Batch(context.Background(), teammem.ScopeTeam, []BatchUpsert{{Key: "a.md", Content: "x", Base: new(string)}}, nil)
		for _, err := range []error{errMe, errBatch} {
			var re *RedirectError
			f := FailureOf(err)
			if !errors.As(err, &re) || re.Status != code || !strings.HasPrefix(re.Location, other.URL) ||
				f.Code != CodeRedirect || !strings.Contains(f.Message, "answered a redirect") {
				t.Fatalf("%d: err %v, failure %+v", code, err, f)
			}
		}
		if sc.count() != 2 {
			t.Fatalf("%d: %d requests, want 2 (a redirect is not retried)", code, sc.count())
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

// TestClientBoundsAnswers: answers over the limit are refused, whether or
// not they announce their length, and are not retried.
func TestClientBoundsAnswers(t *testing.T) {
	t.Parallel()
	huge := func(announce bool) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			body := `{"scope":"team","version":1,"changes":[{"key":"a.md","op":"upsert","content":"` + strings.Repeat("x", 8<<10) + `"}]}`
			if announce {
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			}
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < len(body); i += 512 { // chunked unless announced
				_, _ = w.Write([]byte(body[i:min(i+512, len(body))]))
				w.(http.Flusher).Flush()
			}
		}
	}
	for _, announce := range []bool{true, false} {
		sc := &script{replies: []func(http.ResponseWriter, *http.Request){huge(announce)}}
		c, _ := newTestClient(t, serve(t, sc))
		c.MaxResponse = 4 << 10
		_, _, _, err := c.Changes(context.Background(), teammem.ScopeTeam, 0)
		var be *BadResponseError
		if !errors.As(err, &be) || !strings.Contains(be.Reason, "larger than") || sc.count() != 1 {
			t.Fatalf("announce %v: %d requests, %v", announce, sc.count(), err)
		}
	}
	// Answers without content have a small limit of their own.
	sc := &script{replies: []func(http.ResponseWriter, *http.Request){okJSON(map[string]string{"pad": strings.Repeat("x", smallBodyLimit)})}}
	c, _ := newTestClient(t, serve(t, sc))
	if _, err := c.WhoAmI(context.Background()); FailureOf(err).Code != CodeBadResponse {
		t.Fatalf("oversized /v1/me: %v", err)
	}
	// And a body that is not JSON is named as such.
	sc = &script{replies: []func(http.ResponseWriter, *http.Request){func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>sign in</html>"))
	}}}
	c, _ = newTestClient(t, serve(t, sc))
	if _, err := c.WhoAmI(context.Background()); !strings.Contains(FailureOf(err).Message, "not the JSON") {
		t.Fatalf("HTML answer: %v", err)
	}
}

// TestClientConflicts: a 409 comes back as the conflicts it lists, unless a
// conflicting entry is over the cap (the engine would write it).
func TestClientConflicts(t *testing.T) {
	t.Parallel()
	conflict := func(content string) func(http.ResponseWriter, *http.Request) {
		return status(409, teammem.EConflict, "conflict", map[string]any{"conflicts": []teammem.Conflict{
			{Key: "a.md", Checksum: teammem.EntryChecksum(content), Content: content}}})
	}
	sc := &script{replies: []func(http.ResponseWriter, *http.Request){conflict("theirs\n")}}
	c, _ := newTestClient(t, serve(t, sc))
	_, err := c.Batch(context.Background(), teammem.ScopeTeam, []BatchUpsert{{Key: "a.md", Content: "ours\n", Base: new(string)}}, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Content != "theirs\n" || teammem.ErrorCode(err) != teammem.EConflict {
		t.Fatalf("conflict: %v", err)
	}
	sc = &script{replies: []func(http.ResponseWriter, *http.Request){conflict(strings.Repeat("x", MaxFileBytes+1))}}
	c, _ = newTestClient(t, serve(t, sc))
	_, err = c.Batch(context.Background(), teammem.ScopeTeam, []BatchUpsert{{Key: "a.md", Content: "ours\n", Base: new(string)}}, nil)
	if FailureOf(err).Code != CodeBadResponse {
		t.Fatalf("oversized conflict: %v", err)
	}
}

// newTestEngine is an engine over a fresh memory dir and state dir.
func newTestEngine(t *testing.T, c *Client) (*Engine, string) {
	t.Helper()
	mem := filepath.Join(t.TempDir(), "memory")
	if err := os.MkdirAll(filepath.Join(mem, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	states, err := OpenState(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{Client: c, MemoryDir: mem, States: states}, mem
}

// changesServer answers heads and change lists of one space at version 1,
// whose checksum the changes add up to.
func changesServer(maxEntryBytes int, changes ...wire.Change) func(http.ResponseWriter, *http.Request) {
	sums := map[string]string{}
	for _, c := range changes {
		sums[c.Key] = c.Checksum
	}
	head := wire.SpaceHead{Scope: teammem.ScopeTeam, Version: 1, Checksum: teammem.SpaceChecksum(sums)}
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/changes") {
			okJSON(wire.ChangeList{SpaceHead: head, MaxEntryBytes: maxEntryBytes, Changes: changes})(w, r)
			return
		}
		okJSON(wire.Snapshot{Repo: "acme/widgets", SpaceHead: head, MaxEntryBytes: maxEntryBytes})(w, r)
	}
}

func upsert(key, content string) wire.Change {
	return wire.Change{Key: key, Op: wire.OpUpsert, Checksum: teammem.EntryChecksum(content), Content: &content, Version: 1}
}

// TestPullSkipsOversizedEntries: entries over the client's cap, or over a
// lower cap the server announced, are never written and are reported.
func TestPullSkipsOversizedEntries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		announced, size, limit int
	}{{0, 300_000, MaxFileBytes}, {1_000_000, 300_000, MaxFileBytes}, {1000, 2000, 1000}} {
		sc := &script{replies: []func(http.ResponseWriter, *http.Request){
			changesServer(tc.announced, upsert("big.md", strings.Repeat("x", tc.size)), upsert("fine.md", "fine\n"))}}
		c, _ := newTestClient(t, serve(t, sc))
		e, mem := newTestEngine(t, c)
		rep, err := e.Sync(context.Background(), teammem.ScopeTeam, true, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(mem, "team", "big.md")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("cap %d: the oversized entry was written (%v)", tc.limit, err)
		}
		want := Skip{Key: "big.md", Kind: SkipTooLarge, Limit: int64(tc.limit)}
		if len(rep.Skipped) != 1 || rep.Skipped[0] != want || len(rep.Pulled) != 1 {
			t.Fatalf("cap %d: report %+v", tc.limit, rep)
		}
	}
}

// TestPullRefusesHugeAnswer: an answer over the limit writes nothing and
// leaves the state where it was, so the next pull asks again.
func TestPullRefusesHugeAnswer(t *testing.T) {
	t.Parallel()
	sc := &script{replies: []func(http.ResponseWriter, *http.Request){
		changesServer(0, upsert("a.md", strings.Repeat("x", 10_000)), upsert("b.md", "b\n"))}}
	c, _ := newTestClient(t, serve(t, sc))
	c.MaxResponse = 5_000
	e, mem := newTestEngine(t, c)
	_, err := e.Sync(context.Background(), teammem.ScopeTeam, true, false)
	var se *StepError
	if !errors.As(err, &se) || se.Step != StepPull || FailureOf(err).Code != CodeBadResponse {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(mem, "team"))
	st, _ := e.States.Load()
	if len(entries) != 0 || st.Scope(teammem.ScopeTeam).Version != 0 {
		t.Fatalf("written %v, state version %d", entries, st.Scope(teammem.ScopeTeam).Version)
	}
}

// TestPushResendAfterLostAnswer: the first batch commits but its answer is
// lost (503); the resend answers 409 with exactly our content, which the
// push takes as done: no error, nothing pending, the file untouched.
func TestPushResendAfterLostAnswer(t *testing.T) {
	t.Parallel()
	resend := func(w http.ResponseWriter, r *http.Request) {
		var req wire.BatchRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		var conflicts []teammem.Conflict
		for _, u := range req.Upserts {
			conflicts = append(conflicts, teammem.Conflict{Key: u.Key, Checksum: teammem.EntryChecksum(u.Content), Content: u.Content})
		}
		status(409, teammem.EConflict, "conflict", map[string]any{"conflicts": conflicts})(w, r)
	}
	sc := &script{replies: []func(http.ResponseWriter, *http.Request){status(503, teammem.EUnavailable, "lost", nil), resend}}
	c, _ := newTestClient(t, serve(t, sc))
	e, mem := newTestEngine(t, c)
	if err := os.WriteFile(filepath.Join(mem, "team", "a.md"), []byte("ours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Sync(context.Background(), teammem.ScopeTeam, false, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Pushed, []string{"a.md"}) || len(rep.Merged) != 0 {
		t.Fatalf("a resent batch reported as pushed %v, merged %v; want pushed only", rep.Pushed, rep.Merged)
	}
	st, _ := e.States.Load()
	changed, deleted, _, err := e.Pending(teammem.ScopeTeam, st.Scope(teammem.ScopeTeam))
	b, _ := os.ReadFile(filepath.Join(mem, "team", "a.md"))
	if err != nil || len(changed)+len(deleted) != 0 || string(b) != "ours\n" || sc.count() != 2 {
		t.Fatalf("pending %v %v (%v), file %q, %d requests", changed, deleted, err, b, sc.count())
	}
}
