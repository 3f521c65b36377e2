package memsync

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// newTestEngine is an engine over a fresh memory dir and state dir.
func newTestEngine(t *testing.T, c *apiclient.Client) (*Engine, string) {
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
		sc := &script{Replies: []func(http.ResponseWriter, *http.Request){
			changesServer(tc.announced, upsert("big.md", strings.Repeat("x", tc.size)), upsert("fine.md", "fine\n"))}}
		c := newTestClient(t, serve(t, sc))
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
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){
		changesServer(0, upsert("a.md", strings.Repeat("x", 10_000)), upsert("b.md", "b\n"))}}
	c := newTestClient(t, serve(t, sc))
	c.MaxResponse = 5_000
	e, mem := newTestEngine(t, c)
	_, err := e.Sync(context.Background(), teammem.ScopeTeam, true, false)
	var se *StepError
	if !errors.As(err, &se) || se.Step != StepPull || FailureOf(err).Code != apiclient.CodeBadResponse {
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
	sc := &script{Replies: []func(http.ResponseWriter, *http.Request){status(503, teammem.EUnavailable, "lost", nil), resend}}
	c := newTestClient(t, serve(t, sc))
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
	if err != nil || len(changed)+len(deleted) != 0 || string(b) != "ours\n" || sc.Count() != 2 {
		t.Fatalf("pending %v %v (%v), file %q, %d requests", changed, deleted, err, b, sc.Count())
	}
}
