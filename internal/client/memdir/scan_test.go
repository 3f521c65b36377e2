package memdir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

func setupScan(t *testing.T) string {
	t.Helper()
	root := filepath.Join(RealTempDir(t), "memory")
	files := map[string]string{
		"MEMORY.md":             "# index\n",
		"a-b.md":                "dash",
		"a/x.md":                "nested",
		"nested/deep/x.md":      "deep",
		"nested/team/z.md":      "not top-level team",
		"notes.txt":             "any extension syncs",
		"team/t.md":             "team",
		"team/MEMORY.md":        "team index",
		"exact.md":              strings.Repeat("e", DefaultMaxBytes),
		"big.md":                strings.Repeat("b", 300_000),
		".consolidate-lock":     "1234",
		".teammem-tmp-abc":      "partial",
		"nested/.DS_Store":      "finder",
		"nested/.teammem-tmp-1": "partial",
		`back\slash.md`:         "invalid on the wire",
		"ctrl\x01.md":           "invalid on the wire",
	}
	for k, v := range files {
		MustWrite(t, filepath.Join(root, filepath.FromSlash(k)), v)
	}
	MustSymlink(t, "a-b.md", filepath.Join(root, "link.md"))
	MustSymlink(t, "nested", filepath.Join(root, "linkdir"))
	MustSymlink(t, filepath.Join(root, "..", "elsewhere"), filepath.Join(root, "team", "dangling.md"))
	return root
}

func TestScan(t *testing.T) {
	t.Parallel()
	root := setupScan(t)

	files, skipped, err := Scan(root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"MEMORY.md", "a-b.md", "a/x.md", "exact.md", "nested/deep/x.md", "nested/team/z.md",
		"notes.txt", "team/MEMORY.md", "team/t.md"}
	if got := fileKeys(files); !reflect.DeepEqual(got, wantKeys) {
		t.Errorf("keys = %q\nwant %q", got, wantKeys)
	}
	wantSkipped := []Skipped{
		{"back\\slash.md", SkipInvalid},
		{"big.md", "larger than 250000 bytes"},
		{"ctrl\x01.md", SkipInvalid},
		{"link.md", SkipSymlink},
		{"linkdir", SkipSymlink},
		{"team/dangling.md", SkipSymlink},
	}
	if !reflect.DeepEqual(skipped, wantSkipped) {
		t.Errorf("skipped = %q\nwant %q", skipped, wantSkipped)
	}
	for _, f := range files {
		disk, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Key)))
		fi, _ := os.Stat(filepath.Join(root, filepath.FromSlash(f.Key)))
		if err != nil || string(f.Content) != string(disk) || f.Size != int64(len(disk)) ||
			f.Checksum != teammem.EntryChecksum(string(disk)) || !f.ModTime.Equal(fi.ModTime()) {
			t.Errorf("file %q: size %d, checksum %s, mtime %v", f.Key, f.Size, f.Checksum, f.ModTime)
		}
	}

	// The personal part: team/ left out at the top level only.
	files, skipped, err = Scan(root, ScanOptions{Exclude: []string{"team"}, MaxBytes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := fileKeys(files); !reflect.DeepEqual(got, []string{"a-b.md", "nested/deep/x.md"}) {
		t.Errorf("personal keys = %q", got)
	}
	for _, s := range skipped {
		if strings.HasPrefix(s.Key, "team/") {
			t.Errorf("excluded dir reported: %v", s)
		}
	}
	if !containsSkip(skipped, Skipped{"MEMORY.md", "larger than 5 bytes"}) {
		t.Errorf("MaxBytes not applied: %q", skipped)
	}

	// A missing root is empty, not an error.
	if files, skipped, err := Scan(filepath.Join(root, "missing"), ScanOptions{}); err != nil || files != nil || skipped != nil {
		t.Errorf("missing root: %v, %v, %v", files, skipped, err)
	}
	// A root that is a file is an error.
	if _, _, err := Scan(filepath.Join(root, "a-b.md"), ScanOptions{}); err == nil {
		t.Error("scanning a file succeeded")
	}
}

func TestScanUnreadableDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root bypasses directory permissions")
	}
	root := filepath.Join(RealTempDir(t), "memory")
	MustWrite(t, filepath.Join(root, "locked", "x.md"), "x")
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })
	if _, _, err := Scan(root, ScanOptions{}); err == nil {
		t.Error("an unreadable directory must fail the scan, not look empty")
	}
}

func fileKeys(files []File) []string {
	keys := []string{}
	for _, f := range files {
		keys = append(keys, f.Key)
	}
	return keys
}

func containsSkip(list []Skipped, s Skipped) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
