package memsync

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/teammem/teammem/internal/teammem"
)

// TestWatchIgnoresStores checks that changes inside Claude Code's own
// store mounts, and to the store files themselves, never make a push due.
func TestWatchIgnoresStores(t *testing.T) {
	t.Parallel()
	mem := t.TempDir()
	for _, k := range []string{"team/proj/.memory-sync", "team/proj/deep/x.md", "team/a.md", "notes.md"} {
		p := filepath.Join(mem, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fsw.Close()
	w := &Watcher{Engine: &Engine{MemoryDir: mem}}
	due := func(key string) bool {
		s := &watchState{pending: map[teammem.Scope]bool{}, suppressed: map[teammem.Scope]string{}}
		return w.onFileEvent(fsw, s, fsnotify.Event{Name: filepath.Join(mem, filepath.FromSlash(key)), Op: fsnotify.Write})
	}
	for key, want := range map[string]bool{
		"team/a.md": true, "notes.md": true, "team/proj/x.md": false, "team/proj/deep/x.md": false,
		"team/proj/.memory-sync": false, ".memory-sync.1.stage": false, "team/other/.memory-sync-basis": false,
	} {
		if got := due(key); got != want {
			t.Errorf("%s: push due = %v, want %v", key, got, want)
		}
	}
	// Claude Code's user store at the memory dir takes the personal scope,
	// not team/.
	if err := os.WriteFile(filepath.Join(mem, ".memory-sync-basis"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if due("notes.md") || !due("team/a.md") {
		t.Errorf("with a user store: notes.md due %v, team/a.md due %v", due("notes.md"), due("team/a.md"))
	}
}

// TestWatchSkipsNativeScopes checks that a scope `teammem claude` handed to
// Claude Code's own sync makes no push due and is never synced, even before
// Claude Code marked any mount.
func TestWatchSkipsNativeScopes(t *testing.T) {
	t.Parallel()
	mem := t.TempDir()
	for _, k := range []string{"team/teammem/a.md", "team/b.md", "notes.md"} {
		p := filepath.Join(mem, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fsw.Close()
	native := map[teammem.Scope]bool{teammem.ScopeTeam: true}
	e := &Engine{MemoryDir: mem, Native: func(s teammem.Scope) (string, bool) {
		return "synced natively by Claude Code (teammem claude)", native[s]
	}}
	w := &Watcher{Engine: e}
	due := func(key string) bool {
		s := &watchState{pending: map[teammem.Scope]bool{}, suppressed: map[teammem.Scope]string{}}
		return w.onFileEvent(fsw, s, fsnotify.Event{Name: filepath.Join(mem, filepath.FromSlash(key)), Op: fsnotify.Write})
	}
	if due("team/teammem/a.md") || due("team/b.md") || !due("notes.md") {
		t.Fatalf("team native: team/teammem/a.md %v, team/b.md %v, notes.md %v", due("team/teammem/a.md"), due("team/b.md"), due("notes.md"))
	}
	rep, err := e.Sync(t.Context(), teammem.ScopeTeam, true, true)
	if err != nil || len(rep.Excluded) != 1 || rep.Excluded[0].Dir != "team" ||
		rep.Excluded[0].Reason != "synced natively by Claude Code (teammem claude); teammem leaves it alone: the team scope is not synced" {
		t.Fatalf("sync of a native scope: %+v %v", rep, err)
	}
	native[teammem.ScopePersonal] = true
	if due("notes.md") {
		t.Fatal("personal native: notes.md due")
	}
}
