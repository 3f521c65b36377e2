package memdir

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// setupStores is a team/ directory with Claude Code store mounts beside a
// directory of teammem's own.
func setupStores(t *testing.T) string {
	t.Helper()
	root := filepath.Join(RealTempDir(t), "team")
	for k, v := range map[string]string{
		"ours/a.md":                 "teammem's",
		"proj/.memory-sync":         `{"v":1,"partition":"/v1/code/memory/proj"}`,
		"proj/b.md":                 "Claude Code's",
		"proj/deep/c.md":            "Claude Code's",
		"basis/.memory-sync-basis":  `{"v":1}`,
		"basis/d.md":                "Claude Code's",
		"ours/nested/.memory-sync":  "{}",
		"ours/nested/e.md":          "a store below one of ours",
		"ours/.memory-sync.x.stage": "staging copy",
		"top.md":                    "teammem's",
	} {
		MustWrite(t, filepath.Join(root, filepath.FromSlash(k)), v)
	}
	return root
}

func TestStoreDir(t *testing.T) {
	t.Parallel()
	root := setupStores(t)
	tests := []struct {
		key, dir, marker string
	}{
		{"top.md", "", ""},
		{"ours/a.md", "", ""},
		{"proj/b.md", "proj", StoreManifestName},
		{"proj/deep/c.md", "proj", StoreManifestName},
		{"proj/new/never-written.md", "proj", StoreManifestName},
		{"basis/d.md", "basis", StoreBasisName},
		{"ours/nested/e.md", "ours/nested", StoreManifestName},
		{"proj", "", ""}, // the key itself is not looked into
		{"missing/x.md", "", ""},
	}
	for _, tt := range tests {
		dir, marker, ok := StoreDir(root, tt.key)
		if dir != tt.dir || marker != tt.marker || ok != (tt.dir != "") {
			t.Errorf("StoreDir(%q) = %q, %q, %v; want %q, %q", tt.key, dir, marker, ok, tt.dir, tt.marker)
		}
	}
	// A marker in the root itself claims everything below it.
	MustWrite(t, filepath.Join(root, StoreBasisName), "{}")
	if dir, marker, ok := StoreDir(root, "top.md"); dir != "." || marker != StoreBasisName || !ok {
		t.Errorf("StoreDir with a marked root = %q, %q, %v", dir, marker, ok)
	}
}

func TestScanSkipStores(t *testing.T) {
	t.Parallel()
	root := setupStores(t)
	files, skipped, err := Scan(root, ScanOptions{SkipStores: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fileKeys(files), []string{"ours/a.md", "top.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %q, want %q", got, want)
	}
	want := []Skipped{
		{Key: "basis", Reason: SkipStore + " (.memory-sync-basis)"},
		{Key: "ours/nested", Reason: SkipStore + " (.memory-sync)"},
		{Key: "proj", Reason: SkipStore + " (.memory-sync)"},
	}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped = %q\nwant %q", skipped, want)
	}
	for _, s := range skipped {
		if !s.IsStore() {
			t.Errorf("%q: IsStore is false", s.Key)
		}
	}

	// Without the option the mounts are read like any directory, but the
	// store's own files never are.
	files, _, err = Scan(root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fileKeys(files), []string{"basis/d.md", "ours/a.md", "ours/nested/e.md", "proj/b.md", "proj/deep/c.md", "top.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys without SkipStores = %q, want %q", got, want)
	}
}

func TestWriteRefusesStoreFiles(t *testing.T) {
	t.Parallel()
	root := RealTempDir(t)
	for _, key := range []string{".memory-sync", "proj/.memory-sync", "proj/.memory-sync-basis", ".memory-sync.abc.stage"} {
		if _, err := WriteAtomic(root, key, []byte("{}")); !errors.Is(err, ErrUnsafeKey) {
			t.Errorf("WriteAtomic(%q) = %v, want a refusal", key, err)
		}
	}
}
