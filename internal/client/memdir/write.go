package memdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// TempPrefix starts the name of every temporary file WriteAtomic creates;
// Scan never reports such files.
const TempPrefix = ".teammem-tmp-"

// WriteAtomic writes data to key under root and reports whether it wrote.
//
// The key must pass Target, must not name a file Scan always ignores (which
// could never sync back), and must not be a symlink, directory or other
// non-regular file on disk. When the file already holds exactly data nothing
// happens, so its mtime is kept and no watcher fires. Otherwise missing
// parents are created one by one (0755), each re-checked to resolve within
// root, and data goes to a temp file (0644) in the target's own directory
// that is fsynced and renamed over the target. rename(2) replaces a path
// without following it, and the temp file is removed on any failure.
func WriteAtomic(root, key string, data []byte) (written bool, err error) {
	p, err := Target(root, key)
	if err != nil {
		return false, err
	}
	if IgnoredName(path.Base(key)) {
		return false, &KeyError{Key: key, Reason: "reserved file name that never syncs"}
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil:
		if err := refuseNonRegular(key, fi); err != nil {
			return false, err
		}
		if sameContent(p, fi, data) {
			return false, nil
		}
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return false, fmt.Errorf("write %q: %w", shortKey(key), err)
	}
	if err := mkdirParents(root, key); err != nil {
		return false, err
	}
	if err := replaceFile(p, data); err != nil {
		return false, fmt.Errorf("write %q: %w", shortKey(key), err)
	}
	return true, nil
}

// refuseNonRegular refuses symlinks and anything else that is not a regular
// file at a key's path.
func refuseNonRegular(key string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &KeyError{Key: key, Reason: "is a symlink"}
	case !fi.Mode().IsRegular():
		return &KeyError{Key: key, Reason: "not a regular file"}
	}
	return nil
}

// sameContent reports whether the regular file at p (whose Lstat is fi)
// holds exactly data. Any read problem reports false, so the write goes on.
func sameContent(p string, fi fs.FileInfo, data []byte) bool {
	if fi.Size() != int64(len(data)) {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	return err == nil && bytes.Equal(b, data)
}

// mkdirParents creates root and then each missing directory of key below
// it, re-checking after each step that the directory resolves within root:
// a symlinked parent may point elsewhere inside root, never outside.
func mkdirParents(root, key string) error {
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("write %q: %w", shortKey(key), err)
	}
	if err := os.MkdirAll(rootAbs, 0o755); err != nil {
		return fmt.Errorf("write %q: create memory dir: %w", shortKey(key), err)
	}
	realRoot, err := realpath(rootAbs)
	if err != nil {
		return fmt.Errorf("write %q: resolve memory dir: %w", shortKey(key), err)
	}
	dir := rootAbs
	parts := strings.Split(key, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		err := os.Mkdir(dir, 0o755)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %q: create parent: %w", shortKey(key), err)
		}
		real, err := realpath(dir)
		if err != nil {
			return &KeyError{Key: key, Reason: "cannot verify parent directory (" + errnoText(err) + ")", Err: err}
		}
		if real != realRoot && !within(real, realRoot) {
			return &KeyError{Key: key, Reason: "parent directory escapes the memory directory via a symlink"}
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("write %q: parent %s is not a directory", shortKey(key), part)
		}
	}
	return nil
}

// replaceFile writes data to a fresh temp file next to p and renames it over
// p. The temp file never outlives a failure.
func replaceFile(p string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(p), TempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // a second Close only returns an error we do not need
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	// The target may have turned into something else since it was checked;
	// renaming over a symlink would replace the link, but a directory or a
	// link there means someone else is at work: refuse.
	if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
		return errors.New("target changed into a non-regular file")
	}
	return os.Rename(tmp, p)
}

// Remove deletes the regular file at key under root and then every parent
// directory it leaves empty, up to but not including root. It reports false
// when there was nothing to delete. Symlinks and non-regular files are
// refused, never followed.
func Remove(root, key string) (removed bool, err error) {
	p, err := Target(root, key)
	if err != nil {
		return false, err
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("remove %q: %w", shortKey(key), err)
	}
	if err := refuseNonRegular(key, fi); err != nil {
		return false, err
	}
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("remove %q: %w", shortKey(key), err)
	}
	rootAbs, _ := filepath.Abs(root) // Target already made it absolute
	pruneEmptyDirs(rootAbs, filepath.Dir(p))
	return true, nil
}

// pruneEmptyDirs removes dir and its ancestors while they are empty real
// directories strictly below root.
func pruneEmptyDirs(root, dir string) {
	for within(dir, root) {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			return // gone, or a symlink: leave it
		}
		if syscall.Rmdir(dir) != nil {
			return // not empty (or not ours to remove)
		}
		dir = filepath.Dir(dir)
	}
}

// ReadFile returns the content of the regular file at key under root. It
// refuses symlinks and non-regular files (O_NOFOLLOW semantics: the opened
// file must be the one Lstat saw). A missing file is an error matching
// fs.ErrNotExist, also when a parent is a file.
func ReadFile(root, key string) ([]byte, error) {
	p, err := Target(root, key)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil, fmt.Errorf("read %q: %w", shortKey(key), fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("read %q: %w", shortKey(key), err)
	}
	if err := refuseNonRegular(key, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shortKey(key), err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return nil, &KeyError{Key: key, Reason: "changed while being opened"}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shortKey(key), err)
	}
	return b, nil
}
