package memsync_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/apiclient"
	memsync "github.com/teammem/teammem/internal/client/memsync"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// startServer runs the real router on SQLite behind a real listener and
// returns its URL and the API key of a member of its only org.
func startServer(t *testing.T) (url, key string) {
	t.Helper()
	return startServerWith(t, teammem.OrgSettings{})
}

// startServerWith is startServer with the org's settings.
func startServerWith(t *testing.T, settings teammem.OrgSettings) (url, key string) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	org, err := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme", Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	user, err := db.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "dev", Role: teammem.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	key, prefix := teammem.NewKeyString()
	if _, err := db.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "dev", Prefix: prefix, Hash: teammem.HashKey(key)}); err != nil {
		t.Fatal(err)
	}
	sc, err := secretscan.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.New(db, secretscan.NewOrgScanner(sc), httpapi.Config{Defaults: teammem.DefaultServerDefaults, MaxBodyBytes: 4 << 20,
		TombstoneRetention: 720 * time.Hour}, nil, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL, key
}

// newEngine is one machine's engine over its own memory dir.
func newEngine(t *testing.T, url, key string) *memsync.Engine {
	t.Helper()
	states, err := memsync.OpenState(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	client := &apiclient.Client{BaseURL: url, Key: key, Repo: "acme/widgets", UserAgent: "test"}
	return &memsync.Engine{Client: client, MemoryDir: filepath.Join(t.TempDir(), "memory"), States: states}
}

func mustWrite(t *testing.T, dir, key, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readKey(dir, key string) string {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

func mustSync(t *testing.T, e *memsync.Engine, scope teammem.Scope) *memsync.Report {
	t.Helper()
	rep, err := e.Sync(context.Background(), scope, true, true)
	if err != nil {
		t.Fatalf("sync %s: %v", scope, err)
	}
	return rep
}

// serverFiles returns what the server holds for scope, key → content.
func serverFiles(t *testing.T, e *memsync.Engine, scope teammem.Scope) map[string]string {
	t.Helper()
	_, entries, err := e.Client.Snapshot(context.Background(), scope)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, en := range entries {
		if en.Content != nil {
			m[en.Key] = *en.Content
		}
	}
	return m
}

// TestClaudeCodeStoresLeftAlone mounts Claude Code's own stores over a
// memory dir teammem synced before: team/proj (synced before) and team/cc
// get a .memory-sync or .memory-sync-basis, the memory dir itself a
// .memory-sync. Nothing in them is pushed, nothing synced before is deleted
// on the server, and nothing the server holds is written into them.
func TestClaudeCodeStoresLeftAlone(t *testing.T) {
	t.Parallel()
	url, key := startServer(t)
	a, b := newEngine(t, url, key), newEngine(t, url, key)
	team := filepath.Join(a.MemoryDir, "team")
	mustWrite(t, team, "a.md", "A")
	mustWrite(t, team, "proj/b.md", "B")
	mustWrite(t, team, "proj/gone.md", "G")
	mustWrite(t, a.MemoryDir, "notes.md", "N")
	mustSync(t, a, teammem.ScopeTeam)
	mustSync(t, a, teammem.ScopePersonal)
	mustSync(t, b, teammem.ScopeTeam)

	// Claude Code mounts its stores on machine a and syncs them its way.
	mustWrite(t, team, "proj/.memory-sync", `{"v":1,"partition":"/v1/code/memory/proj"}`)
	mustWrite(t, team, "proj/b.md", "B as Claude Code's store has it")
	if err := os.Remove(filepath.Join(team, "proj", "gone.md")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, team, "proj/new.md", "Claude Code's own")
	mustWrite(t, team, "cc/.memory-sync-basis", `{"v":1}`)
	mustWrite(t, team, "cc/x.md", "Claude Code's own")
	mustWrite(t, a.MemoryDir, ".memory-sync", `{"v":1,"partition":"/v1/code/memory/user"}`)
	mustWrite(t, a.MemoryDir, "notes.md", "N edited under Claude Code's user store")
	mustWrite(t, a.MemoryDir, "new.md", "personal, Claude Code's")
	// Meanwhile machine b edits team memory, inside proj/ too.
	bTeam := filepath.Join(b.MemoryDir, "team")
	mustWrite(t, bTeam, "proj/b.md", "B2 from b")
	mustWrite(t, bTeam, "proj/from-b.md", "from b")
	mustWrite(t, bTeam, "c.md", "C from b")
	mustSync(t, b, teammem.ScopeTeam)

	rep := mustSync(t, a, teammem.ScopeTeam)
	if !slices.Equal(rep.Pulled, []string{"c.md"}) || len(rep.Pushed)+len(rep.DeletedRemote)+len(rep.RemovedLocal) > 0 {
		t.Errorf("team sync: pulled %q, pushed %q, deleted remotely %q, removed %q", rep.Pulled, rep.Pushed, rep.DeletedRemote, rep.RemovedLocal)
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[s.Key] += s.Message() + "|"
	}
	for _, k := range []string{"proj/b.md", "proj/from-b.md", "proj/gone.md"} {
		if !strings.Contains(skipped[k], "team/proj") || !strings.Contains(skipped[k], ".memory-sync") {
			t.Errorf("%s not reported as left alone: %q", k, skipped[k])
		}
	}
	if len(rep.Excluded) != 2 || rep.Excluded[0].Dir != "team/cc" || rep.Excluded[1].Dir != "team/proj" ||
		!strings.Contains(rep.Excluded[1].Reason, "Claude Code's own memory-store sync (.memory-sync); teammem leaves it alone (2 files synced before") {
		t.Errorf("excluded = %+v", rep.Excluded)
	}

	// Nothing of a's stores reached the server, nothing there was deleted.
	want := map[string]string{"a.md": "A", "c.md": "C from b", "proj/b.md": "B2 from b", "proj/gone.md": "G", "proj/from-b.md": "from b"}
	if got := serverFiles(t, a, teammem.ScopeTeam); !mapsEqual(got, want) {
		t.Errorf("server team space = %q\nwant %q", got, want)
	}
	// Nothing of the server's was written into them.
	for k, v := range map[string]string{"proj/b.md": "B as Claude Code's store has it", "proj/new.md": "Claude Code's own",
		"proj/gone.md": "<missing>", "proj/from-b.md": "<missing>", "cc/x.md": "Claude Code's own"} {
		if got := readKey(team, k); got != v {
			t.Errorf("team/%s = %q, want %q", k, got, v)
		}
	}

	// The personal scope is Claude Code's user store now: not synced at all.
	prep := mustSync(t, a, teammem.ScopePersonal)
	if len(prep.Excluded) != 1 || prep.Excluded[0].Dir != "." || len(prep.Pushed)+len(prep.Pulled) > 0 {
		t.Errorf("personal sync: %+v", prep)
	}
	if got := serverFiles(t, a, teammem.ScopePersonal); !mapsEqual(got, map[string]string{"notes.md": "N"}) {
		t.Errorf("server personal space = %q", got)
	}

	// Status agrees: nothing pending, both exclusions listed.
	st, err := a.States.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range memsync.Scopes {
		changed, deleted, _, err := a.Pending(scope, st.Scope(scope))
		if err != nil || len(changed)+len(deleted) > 0 {
			t.Errorf("%s pending: changed %q, deleted %q, %v", scope, changed, deleted, err)
		}
	}
	if ex, err := a.Exclusions(teammem.ScopeTeam, st.Scope(teammem.ScopeTeam)); err != nil || len(ex) != 2 {
		t.Errorf("team exclusions = %+v, %v", ex, err)
	}
	if ex, err := a.Exclusions(teammem.ScopePersonal, st.Scope(teammem.ScopePersonal)); err != nil || len(ex) != 1 ||
		!strings.Contains(ex[0].Reason, "the personal scope is not synced") {
		t.Errorf("personal exclusions = %+v, %v", ex, err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
