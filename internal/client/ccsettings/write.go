package ccsettings

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFile replaces a settings file atomically: a temp file in the
// same directory, fsynced and renamed over it. The file's mode is kept, a
// symlinked settings file (dotfile managers) is written through, and
// missing directories are created.
func writeFile(file string, data []byte) error {
	target, mode := file, os.FileMode(0o644)
	if real, err := filepath.EvalSymlinks(file); err == nil {
		target = real
	}
	if fi, err := os.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".settings-teammem-*.json")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), target)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
