//go:build unix

package memdir

import (
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

func TestScanFIFO(t *testing.T) {
	t.Parallel()
	root := RealTempDir(t)
	MustWrite(t, filepath.Join(root, "a.md"), "a")
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, skipped, err := Scan(root, ScanOptions{})
	if err != nil || len(files) != 1 || !reflect.DeepEqual(skipped, []Skipped{{"pipe", SkipNotRegular}}) {
		t.Errorf("Scan = %v, %v, %v", fileKeys(files), skipped, err)
	}
}
