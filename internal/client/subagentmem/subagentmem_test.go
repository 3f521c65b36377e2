package subagentmem_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/teammem/teammem/internal/client/subagentmem"
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
		if got := subagentmem.DirName(in); got != want {
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
		if got := subagentmem.ValidType(in); got != want {
			t.Errorf("ValidType(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestAgentsRootsDirs(t *testing.T) {
	t.Parallel()
	r := subagentmem.Roots{ConfigHome: "/home/u/.claude", Project: "/src/app"}
	for _, c := range []struct {
		scope subagentmem.Scope
		want  string
	}{
		{subagentmem.ScopeUser, "/home/u/.claude/agent-memory/plugin-rev"},
		{subagentmem.ScopeProject, "/src/app/.claude/agent-memory/plugin-rev"},
		{subagentmem.ScopeLocal, "/src/app/.claude/agent-memory-local/plugin-rev"},
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
	if got := subagentmem.ProjectRoot(sub, repo); got != repo {
		t.Errorf("no .claude anywhere: %s, want the git root %s", got, repo)
	}
	if got := subagentmem.ProjectRoot(sub, ""); got != sub {
		t.Errorf("outside a repository: %s, want cwd %s", got, sub)
	}
	mustWrite(t, filepath.Join(repo, "pkg"), ".claude/agent-memory/a/MEMORY.md", "x")
	if got, want := subagentmem.ProjectRoot(sub, repo), filepath.Join(repo, "pkg"); got != want {
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
		want     subagentmem.Decision
	}{
		{"no snapshot dir", nil, nil, subagentmem.DecisionNone},
		{"snapshot without metadata", map[string]string{"MEMORY.md": "x"}, nil, subagentmem.DecisionNone},
		{"metadata not JSON", map[string]string{"snapshot.json": "{oops"}, nil, subagentmem.DecisionNone},
		{"metadata not an object", map[string]string{"snapshot.json": `"2025-01-01"`}, nil, subagentmem.DecisionNone},
		{"updatedAt missing", map[string]string{"snapshot.json": `{"other":1}`}, nil, subagentmem.DecisionNone},
		{"updatedAt empty", map[string]string{"snapshot.json": `{"updatedAt":""}`}, nil, subagentmem.DecisionNone},
		{"updatedAt a number", map[string]string{"snapshot.json": `{"updatedAt":12}`}, nil, subagentmem.DecisionNone},
		{"no memory dir", map[string]string{"snapshot.json": snapshotJSON(at)}, nil, subagentmem.DecisionInitialize},
		{"extra metadata keys", map[string]string{"snapshot.json": `{"updatedAt":"` + at + `","by":"ci"}`}, nil, subagentmem.DecisionInitialize},
		{"memory without markdown", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"notes.txt": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, subagentmem.DecisionInitialize},
		{"markdown only below the top level", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"sub/a.md": "x"}, subagentmem.DecisionInitialize},
		{"memory without marker", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x"}, subagentmem.DecisionUpdate},
		{"marker not JSON", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": "nope"}, subagentmem.DecisionUpdate},
		{"marker without syncedFrom", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{}`}, subagentmem.DecisionUpdate},
		{"marker older", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"2025-05-31T23:59:59Z"}`}, subagentmem.DecisionUpdate},
		{"marker equal", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, subagentmem.DecisionNone},
		{"marker newer", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"2025-07-01T00:00:00Z"}`}, subagentmem.DecisionNone},
		{"zones compared as instants", map[string]string{"snapshot.json": snapshotJSON("2025-06-01T13:00:00+02:00")},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, subagentmem.DecisionNone},
		{"date-only snapshot", map[string]string{"snapshot.json": snapshotJSON("2025-06-02")},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, subagentmem.DecisionUpdate},
		{"unparsable snapshot date", map[string]string{"snapshot.json": snapshotJSON("last tuesday")},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"` + at + `"}`}, subagentmem.DecisionNone},
		{"unparsable marker date", map[string]string{"snapshot.json": snapshotJSON(at)},
			map[string]string{"MEMORY.md": "x", ".snapshot-synced.json": `{"syncedFrom":"yesterday"}`}, subagentmem.DecisionNone},
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
			if got := subagentmem.Check(snap, mem); got.Decision != c.want {
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

	res, err := subagentmem.Initialize(snap, mem)
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
	if got, ok := subagentmem.ReadMarker(mem); !ok || got != at {
		t.Errorf("marker = %q, %v", got, ok)
	}
	entries, _ := os.ReadDir(mem)
	for _, e := range entries {
		if filepath.Ext(e.Name()) == "" && e.Name() != ".snapshot-synced.json" {
			t.Errorf("left behind %s", e.Name())
		}
	}
	if st := subagentmem.Check(snap, mem); st.Decision != subagentmem.DecisionNone {
		t.Errorf("after Initialize: %+v", st)
	}

	// A newer snapshot is only reported; Initialize refuses to touch memory.
	mustWrite(t, snap, "snapshot.json", snapshotJSON("2025-07-01T00:00:00Z"))
	mustWrite(t, snap, "style.md", "spaces\n")
	if st := subagentmem.Check(snap, mem); st.Decision != subagentmem.DecisionUpdate || st.SyncedFrom != at {
		t.Errorf("after a newer snapshot: %+v", st)
	}
	if _, err := subagentmem.Initialize(snap, mem); !errors.Is(err, subagentmem.ErrNotInitialize) {
		t.Errorf("Initialize over memory: err = %v", err)
	}
	if got := mustRead(t, mem, "style.md"); got != "tabs\n" {
		t.Errorf("style.md overwritten: %q", got)
	}
	if got, _ := subagentmem.ReadMarker(mem); got != at {
		t.Errorf("marker rewritten: %q", got)
	}
}

func TestAgentsInitializeWithoutSnapshot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if _, err := subagentmem.Initialize(filepath.Join(base, "snap"), filepath.Join(base, "mem")); !errors.Is(err, subagentmem.ErrNotInitialize) {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "mem")); !os.IsNotExist(err) {
		t.Errorf("memory dir created: %v", err)
	}
}
