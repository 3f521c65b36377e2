package memdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// safeBundle is a memory root holding every kind of hostile entry, next to
// an outside directory with a file that must never be read or touched.
type safeBundle struct {
	tmp, root, outside string
}

const secret = "TOPSECRET outside content"

func setupSafe(t *testing.T) safeBundle {
	t.Helper()
	tmp := RealTempDir(t)
	b := safeBundle{tmp: tmp, root: filepath.Join(tmp, "mem"), outside: filepath.Join(tmp, "outside")}
	MustWrite(t, filepath.Join(b.outside, "x.md"), secret)
	MustWrite(t, filepath.Join(b.root, "a.md"), "a")
	MustWrite(t, filepath.Join(b.root, "sub", "s.md"), "s")
	MustWrite(t, filepath.Join(b.root, "file.md"), "f")
	MustSymlink(t, b.outside, filepath.Join(b.root, "evil"))                          // directory escaping root
	MustSymlink(t, filepath.Join(b.outside, "x.md"), filepath.Join(b.root, "out.md")) // file escaping root
	MustSymlink(t, "sub", filepath.Join(b.root, "inside"))                            // directory inside root
	MustSymlink(t, "a.md", filepath.Join(b.root, "link.md"))                          // file inside root
	MustSymlink(t, filepath.Join(tmp, "nowhere"), filepath.Join(b.root, "dangling"))
	MustSymlink(t, "loop", filepath.Join(b.root, "loop"))
	MustSymlink(t, "loopb", filepath.Join(b.root, "loopa"))
	MustSymlink(t, "loopa", filepath.Join(b.root, "loopb"))
	return b
}

func TestTarget(t *testing.T) {
	t.Parallel()
	b := setupSafe(t)
	long := strings.Repeat("n", 300) + ".md" // longer than NAME_MAX: passed over, not refused
	tests := []struct {
		key    string
		reason string // "" means accepted
	}{
		{"a.md", ""},
		{"new/deep/x.md", ""},
		{"team/MEMORY.md", ""},
		{"inside/new.md", ""},
		{"file.md/x.md", ""}, // ENOTDIR: cannot be a symlink; the write itself fails
		{long, ""},
		{"../x", "invalid key"},
		{"a/../../x", "invalid key"},
		{"a/..", "invalid key"},
		{"/etc/passwd", "invalid key"},
		{`a\b.md`, "invalid key"},
		{"", "invalid key"},
		{".", "invalid key"},
		{"a\x00b", "invalid key"},
		{"%2e%2e%2fx.md", "invalid key"},
		{"\uff0e\uff0e\uff0fx.md", "invalid key"},
		{"evil/x.md", "escapes the memory directory via a symlink"},
		{"evil/new/y.md", "escapes the memory directory via a symlink"},
		{"out.md", "escapes the memory directory via a symlink"},
		{"dangling", "dangling symlink"},
		{"dangling/x.md", "dangling symlink"},
		{"loop/x.md", "symlink loop"},
		{"loopa", "symlink loop"},
	}
	for _, tt := range tests {
		p, err := Target(b.root, tt.key)
		switch {
		case tt.reason == "" && (err != nil || p != filepath.Join(b.root, tt.key)):
			t.Errorf("Target(%q) = %q, %v; want accepted", tt.key, p, err)
		case tt.reason != "" && (err == nil || !errors.Is(err, ErrUnsafeKey) || !strings.Contains(err.Error(), tt.reason)):
			t.Errorf("Target(%q) = %q, %v; want refusal %q", tt.key, p, err, tt.reason)
		}
	}

	// A root that is itself a symlink (a memory dir kept elsewhere) is fine,
	// and so is a root that does not exist yet.
	linkRoot := filepath.Join(b.tmp, "link-root")
	MustSymlink(t, b.root, linkRoot)
	if _, err := Target(linkRoot, "sub/s.md"); err != nil {
		t.Errorf("symlinked root: %v", err)
	}
	if _, err := Target(linkRoot, "evil/x.md"); !errors.Is(err, ErrUnsafeKey) {
		t.Errorf("symlinked root, escaping key: %v", err)
	}
	if _, err := Target(filepath.Join(b.tmp, "not-yet"), "a/b.md"); err != nil {
		t.Errorf("missing root: %v", err)
	}
}

func TestTargetUnreadableAncestor(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root bypasses directory permissions")
	}
	b := setupSafe(t)
	locked := filepath.Join(b.root, "locked")
	MustMkdir(t, filepath.Join(locked, "in"))
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	if _, err := Target(b.root, "locked/in/x.md"); !errors.Is(err, ErrUnsafeKey) || !strings.Contains(err.Error(), "cannot verify containment") {
		t.Errorf("Target below an unreadable directory: %v", err)
	}
}

func TestWriteAtomic(t *testing.T) {
	t.Parallel()
	b := setupSafe(t)

	written, err := WriteAtomic(b.root, "team/notes/n.md", []byte("one"))
	MustContent(t, filepath.Join(b.root, "team", "notes", "n.md"), "one")
	if err != nil || !written {
		t.Fatalf("first write: %v, %v", written, err)
	}
	fi, _ := os.Stat(filepath.Join(b.root, "team", "notes", "n.md"))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}

	// Identical content: nothing written, mtime kept.
	p := filepath.Join(b.root, "a.md")
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if written, err := WriteAtomic(b.root, "a.md", []byte("a")); err != nil || written {
		t.Errorf("identical write: %v, %v", written, err)
	}
	if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) {
		t.Errorf("mtime changed to %v", fi.ModTime())
	}
	if written, err := WriteAtomic(b.root, "a.md", []byte("changed")); err != nil || !written {
		t.Errorf("changed write: %v, %v", written, err)
	}
	MustContent(t, p, "changed")

	// A symlinked directory inside root may be written through.
	if _, err := WriteAtomic(b.root, "inside/new.md", []byte("via link")); err != nil {
		t.Errorf("write through an inside link: %v", err)
	}
	MustContent(t, filepath.Join(b.root, "sub", "new.md"), "via link")

	refused := []string{"evil/x.md", "evil/new.md", "evil/deep/new.md", "out.md", "link.md", "dangling", "dangling/x.md",
		"loop/x.md", "../x.md", ".consolidate-lock", "sub/.teammem-tmp-123", ".DS_Store"}
	for _, key := range refused {
		if written, err := WriteAtomic(b.root, key, []byte("pwned")); !errors.Is(err, ErrUnsafeKey) || written {
			t.Errorf("WriteAtomic(%q) = %v, %v; want refused", key, written, err)
		}
	}
	for _, key := range []string{"sub", "file.md/x.md"} { // a directory; a file as a parent
		if _, err := WriteAtomic(b.root, key, []byte("x")); err == nil {
			t.Errorf("WriteAtomic(%q) succeeded", key)
		}
	}
	MustContent(t, filepath.Join(b.outside, "x.md"), secret)
	MustContent(t, filepath.Join(b.root, "a.md"), "changed") // link.md was not followed
	if _, err := os.Stat(filepath.Join(b.outside, "new.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file appeared outside root: %v", err)
	}
	MustNoTempFiles(t, b.tmp)

	// A missing root is created.
	fresh := filepath.Join(b.tmp, "fresh", "memory")
	if written, err := WriteAtomic(fresh, "MEMORY.md", []byte("# index\n")); err != nil || !written {
		t.Errorf("write into a missing root: %v, %v", written, err)
	}
}

func TestWriteAtomicFailureLeavesNoTemp(t *testing.T) {
	t.Parallel()
	b := setupSafe(t)
	// replaceFile refuses when the target turned into a directory after the
	// checks; its temp file must be gone.
	if err := replaceFile(filepath.Join(b.root, "sub"), []byte("x")); err == nil {
		t.Fatal("replaceFile over a directory succeeded")
	}
	MustNoTempFiles(t, b.tmp)
	// mkdirParents re-checks every parent it walks through.
	if err := mkdirParents(b.root, "evil/new/x.md"); !errors.Is(err, ErrUnsafeKey) {
		t.Errorf("mkdirParents through an escaping link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.outside, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a directory appeared outside root: %v", err)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	b := setupSafe(t)
	MustWrite(t, filepath.Join(b.root, "x", "y", "z.md"), "z")
	MustWrite(t, filepath.Join(b.root, "x", "keep.md"), "k")

	if removed, err := Remove(b.root, "x/y/z.md"); err != nil || !removed {
		t.Fatalf("Remove: %v, %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(b.root, "x", "y")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty parent kept: %v", err)
	}
	if removed, err := Remove(b.root, "x/keep.md"); err != nil || !removed {
		t.Fatalf("Remove: %v, %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(b.root, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty parent kept: %v", err)
	}
	if removed, err := Remove(b.root, "x/keep.md"); err != nil || removed {
		t.Errorf("Remove of a missing file: %v, %v", removed, err)
	}

	// Root itself is never pruned, even when emptied.
	only := filepath.Join(b.tmp, "only")
	MustWrite(t, filepath.Join(only, "one.md"), "1")
	if _, err := Remove(only, "one.md"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(only); err != nil || !fi.IsDir() {
		t.Errorf("root was removed: %v", err)
	}

	for _, key := range []string{"evil/x.md", "out.md", "link.md", "dangling", "loop/x.md", "../outside/x.md"} {
		if removed, err := Remove(b.root, key); !errors.Is(err, ErrUnsafeKey) || removed {
			t.Errorf("Remove(%q) = %v, %v; want refused", key, removed, err)
		}
	}
	if _, err := Remove(b.root, "sub"); err == nil {
		t.Error("Remove of a directory succeeded")
	}
	MustContent(t, filepath.Join(b.outside, "x.md"), secret)
	if fi, err := os.Lstat(filepath.Join(b.root, "link.md")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link.md touched: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	b := setupSafe(t)
	if got, err := ReadFile(b.root, "sub/s.md"); err != nil || string(got) != "s" {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
	for _, key := range []string{"missing.md", "file.md/x.md", "nodir/x.md"} {
		if _, err := ReadFile(b.root, key); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%q) = %v; want fs.ErrNotExist", key, err)
		}
	}
	for _, key := range []string{"evil/x.md", "out.md", "link.md", "dangling", "loopa", "sub", "a/../../outside/x.md"} {
		_, err := ReadFile(b.root, key)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%q) = %v; want refused", key, err)
		}
		if err != nil && strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("error leaks content: %v", err)
		}
	}
}

// MustContent fails unless the file at p holds want.
func MustContent(tb testing.TB, p, want string) {
	tb.Helper()
	got, err := os.ReadFile(p)
	if err != nil || string(got) != want {
		tb.Errorf("%s = %q, %v; want %q", p, got, err, want)
	}
}

// MustNoTempFiles fails if a WriteAtomic temp file exists below dir.
func MustNoTempFiles(tb testing.TB, dir string) {
	tb.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), TempPrefix) {
			tb.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}
