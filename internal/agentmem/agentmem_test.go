package agentmem_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/teammem/teammem/internal/agentmem"
)

// mustWrite writes content to dir/rel, creating parents.
func mustWrite(tb testing.TB, dir, rel, content string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// mustRead returns the content of dir/rel, or "<missing>".
func mustRead(tb testing.TB, dir, rel string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

func snapshotJSON(updatedAt string) string {
	b, _ := json.Marshal(map[string]string{"updatedAt": updatedAt})
	return string(b)
}

func TestAgentsDirName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"reviewer":          "reviewer",
		"plugin:reviewer":   "plugin-reviewer",
		"a:b:c":             "a-b-c",
		"already-dashed":    "already-dashed",
		"ünïcode:agent":     "ünïcode-agent",
		"trailing:":         "trailing-",
		":leading":          "-leading",
		"no colon at all 1": "no colon at all 1",
	} {
		if got := agentmem.DirName(in); got != want {
			t.Errorf("DirName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAgentsValidType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"reviewer": true, "plugin:reviewer": true, "": false, ".": false, "..": false,
		"../evil": false, "a/b": false, `a\b`: false, "nul\x00": false, "..hidden": true,
	} {
		if got := agentmem.ValidType(in); got != want {
			t.Errorf("ValidType(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestAgentsRootsDirs(t *testing.T) {
	t.Parallel()
	r := agentmem.Roots{ConfigHome: "/home/u/.claude", Project: "/src/app"}
	for _, c := range []struct {
		scope agentmem.Scope
		want  string
	}{
		{agentmem.ScopeUser, "/home/u/.claude/agent-memory/plugin-rev"},
		{agentmem.ScopeProject, "/src/app/.claude/agent-memory/plugin-rev"},
		{agentmem.ScopeLocal, "/src/app/.claude/agent-memory-local/plugin-rev"},
	} {
		if got := r.Dir(c.scope, "plugin:rev"); got != filepath.FromSlash(c.want) {
			t.Errorf("Dir(%s) = %s, want %s", c.scope, got, c.want)
		}
	}
	// Snapshot directories keep the raw type.
	if got, want := r.SnapshotDir("plugin:rev"), filepath.FromSlash("/src/app/.claude/agent-memory-snapshots/plugin:rev"); got != want {
		t.Errorf("SnapshotDir = %s, want %s", got, want)
	}
}

func TestAgentsProjectRoot(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	sub := filepath.Join(repo, "pkg", "deep")
	mustWrite(t, sub, "x.go", "package x")
	if got := agentmem.ProjectRoot(sub, repo); got != repo {
		t.Errorf("no .claude anywhere: %s, want the git root %s", got, repo)
	}
	if got := agentmem.ProjectRoot(sub, ""); got != sub {
		t.Errorf("outside a repository: %s, want cwd %s", got, sub)
	}
	mustWrite(t, filepath.Join(repo, "pkg"), ".claude/agent-memory/a/MEMORY.md", "x")
	if got, want := agentmem.ProjectRoot(sub, repo), filepath.Join(repo, "pkg"); got != want {
		t.Errorf("nearest .claude: %s, want %s", got, want)
	}
}

func TestAgentsCheck(t *testing.T) {
	t.Parallel()
	const at = "2025-06-01T12:00:00.000Z"
	cases := []struct {
		name     string
		snapshot map[string]string // files in the snapshot dir; nil: no dir
		memory   map[string]string // files in the memory dir; nil: no dir
		want     agentmem.Decision
	}{
		{"no snapshot dir", nil, nil, agentmem.DecisionNone},
		{"snapshot without metadata", map[string]string{"MEMORY.md": "x"}, nil, agentmem.DecisionNone},
		{"metadata not JSON", map[string]string{"snapshot.json": "{oops"}, nil, agentmem.DecisionNone},
		{"metadata not an object", map[string]string{"snapshot.json": `"2025-01-01"`}, nil, agentmem.DecisionNone},
		{"updatedAt missing", map[string]string{"snapshot.json": `{"other":1}`}, nil, agentmem.DecisionNone},
		{"updatedAt empty", map[string]string{"snapshot.json": `{"updatedAt":""}`}, nil, agentmem.DecisionNone},
		{"updatedAt a number", map[string]string{"snapshot.json": `{"updatedAt":12}`}, nil, agentmem.DecisionNone},
		{"no memory dir", map[string]string{"snapshot.json": snapshotJSON(at)}, nil, agentmem.DecisionInitialize},
		{"extra metadata keys", map[string]string{"snapshot.json": `{"updatedAt":"` + at + `","by":"ci"}`}, nil, agentmem.DecisionInitialize},
		{"memory without markdown", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"notes.txt": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, agentmem.DecisionInitialize},
		{"markdown only below the top level", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"sub/a.md": "x"}, agentmem.DecisionInitialize},
		{"memory without marker", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x"}, agentmem.DecisionUpdate},
		{"marker not JSON", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": "nope"}, agentmem.DecisionUpdate},
		{"marker without syncedFrom", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{}`}, agentmem.DecisionUpdate},
		{"marker older", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"2025-05-31T23:59:59Z"}`}, agentmem.DecisionUpdate},
		{"marker equal", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, agentmem.DecisionNone},
		{"marker newer", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"2025-07-01T00:00:00Z"}`}, agentmem.DecisionNone},
		{"zones compared as instants", map[string]string{"snapshot.json": snapshotJSON("2025-06-01T13:00:00+02:00")},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, agentmem.DecisionNone},
		{"date-only snapshot", map[string]string{"snapshot.json": snapshotJSON("2025-06-02")},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, agentmem.DecisionUpdate},
		{"unparsable snapshot date", map[string]string{"snapshot.json": snapshotJSON("last tuesday")},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, agentmem.DecisionNone},
		{"unparsable marker date", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"yesterday"}`}, agentmem.DecisionNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			snap, mem := filepath.Join(base, "snap"), filepath.Join(base, "mem")
			for rel, content := range c.snapshot {
				mustWrite(t, snap, rel, content)
			}
			for rel, content := range c.memory {
				mustWrite(t, mem, rel, content)
			}
			if got := agentmem.Check(snap, mem); got.Decision != c.want {
				t.Errorf("Check = %+v, want %s", got, c.want)
			}
		})
	}
}

func TestAgentsInitialize(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	snap, mem := filepath.Join(base, "snap"), filepath.Join(base, "mem")
	const at = "2025-06-01T12:00:00.000Z"
	mustWrite(t, snap, "snapshot.json", snapshotJSON(at))
	mustWrite(t, snap, "MEMORY.md", "- [Style](style.md) — house style\n")
	mustWrite(t, snap, "style.md", "tabs\n")
	mustWrite(t, snap, "notes.txt", "from the snapshot\n")
	mustWrite(t, snap, "nested/deep.md", "top level only\n")
	if err := os.Symlink(filepath.Join(snap, "style.md"), filepath.Join(snap, "link.md")); err != nil {
		t.Fatal(err)
	}
	// A file of the same name already in the memory dir is never replaced.
	mustWrite(t, mem, "notes.txt", "mine\n")

	res, err := agentmem.Initialize(snap, mem)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Copied)
	if !slices.Equal(res.Copied, []string{"MEMORY.md", "style.md"}) || !slices.Equal(res.Kept, []string{"notes.txt"}) || res.SyncedFrom != at {
		t.Errorf("result = %+v", res)
	}
	for rel, want := range map[string]string{
		"MEMORY.md":      "- [Style](style.md) — house style\n",
		"style.md":       "tabs\n",
		"notes.txt":      "mine\n",
		"snapshot.json":  "<missing>",
		"nested/deep.md": "<missing>",
		"link.md":        "<missing>",
	} {
		if got := mustRead(t, mem, rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if got, ok := agentmem.ReadMarker(mem); !ok || got != at {
		t.Errorf("marker = %q, %v", got, ok)
	}
	entries, _ := os.ReadDir(mem)
	for _, e := range entries {
		if filepath.Ext(e.Name()) == "" && e.Name() != ".snapshot-synced.json" {
			t.Errorf("left behind %s", e.Name())
		}
	}
	if st := agentmem.Check(snap, mem); st.Decision != agentmem.DecisionNone {
		t.Errorf("after Initialize: %+v", st)
	}

	// A newer snapshot is only reported; Initialize refuses to touch memory.
	mustWrite(t, snap, "snapshot.json", snapshotJSON("2025-07-01T00:00:00Z"))
	mustWrite(t, snap, "style.md", "spaces\n")
	if st := agentmem.Check(snap, mem); st.Decision != agentmem.DecisionUpdate || st.SyncedFrom != at {
		t.Errorf("after a newer snapshot: %+v", st)
	}
	if _, err := agentmem.Initialize(snap, mem); !errors.Is(err, agentmem.ErrNotInitialize) {
		t.Errorf("Initialize over memory: err = %v", err)
	}
	if got := mustRead(t, mem, "style.md"); got != "tabs\n" {
		t.Errorf("style.md overwritten: %q", got)
	}
	if got, _ := agentmem.ReadMarker(mem); got != at {
		t.Errorf("marker rewritten: %q", got)
	}
}

func TestAgentsInitializeWithoutSnapshot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if _, err := agentmem.Initialize(filepath.Join(base, "snap"), filepath.Join(base, "mem")); !errors.Is(err, agentmem.ErrNotInitialize) {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "mem")); !os.IsNotExist(err) {
		t.Errorf("memory dir created: %v", err)
	}
}
