package memdir

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestScanCache(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	// Files written now count as settled for a Scan an hour from now; one
	// with a fresh modification time is written below with a future one.
	clock = func() time.Time { return time.Now().Add(time.Hour) }
	t.Cleanup(func() { clock = time.Now })
	write := func(name, content string, mtime time.Time) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	var cache ScanCache
	scan := func() map[string]File {
		t.Helper()
		files, _, err := Scan(root, ScanOptions{Cache: &cache})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]File{}
		for _, f := range files {
			out[f.Key] = f
		}
		return out
	}
	reused := func(a, b File) bool { return &a.Content[0] == &b.Content[0] }

	write("old.md", "settled", old)
	write("new.md", "fresh", time.Now().Add(time.Hour))
	first := scan()
	second := scan()
	if !reused(first["old.md"], second["old.md"]) {
		t.Error("an unchanged settled file was read again")
	}
	if reused(first["new.md"], second["new.md"]) {
		t.Error("a file modified within the racy window was trusted")
	}

	// Same size, modification time put back: the change time still moves
	// (once the coarse timestamp clock has ticked).
	time.Sleep(20 * time.Millisecond)
	write("old.md", "SETTLED", old)
	third := scan()
	if got := string(third["old.md"].Content); got != "SETTLED" {
		t.Fatalf("a rewrite that kept size and mtime was missed: %q", got)
	}

	// A replaced file (new inode) and a removed one.
	if err := os.Remove(filepath.Join(root, "old.md")); err != nil {
		t.Fatal(err)
	}
	if got := scan(); len(got) != 1 {
		t.Fatalf("after a removal the scan found %v", got)
	}
	if n := len(cache.roots); n != 1 {
		t.Fatalf("cache holds %d roots", n)
	}
	for _, files := range cache.roots {
		if _, ok := files["old.md"]; ok {
			t.Error("a removed file stayed in the cache")
		}
	}
}
