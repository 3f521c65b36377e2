package memdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/teammem/teammem/internal/teammem"
)

// ErrUnsafeKey matches, with errors.Is, every *KeyError: a key this package
// refuses to touch. Callers applying a batch from a server skip such a key
// and carry on (Claude Code's PathTraversalError); other errors are I/O.
var ErrUnsafeKey = errors.New("unsafe key")

// KeyError reports a refused key and why. Its message names the key, never
// file content.
type KeyError struct {
	Key    string
	Reason string
	Err    error // the underlying validation or system error, if any
}

// Error returns `refused key "<key>": <reason>`.
func (e *KeyError) Error() string {
	return fmt.Sprintf("refused key %q: %s", shortKey(e.Key), e.Reason)
}

// Unwrap returns the underlying error.
func (e *KeyError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnsafeKey.
func (e *KeyError) Is(target error) bool { return target == ErrUnsafeKey }

// shortKey cuts a key for messages; %q escapes what is not valid UTF-8.
func shortKey(key string) string {
	if len(key) <= 120 {
		return key
	}
	return key[:120] + "…"
}

// Target returns the path on disk of key under root after every check Claude
// Code applies to a key from a server (reference §3.9):
//
//  1. teammem.ValidateKey: no NUL, no encoded or Unicode-normalised
//     traversal, no backslash, not absolute, no empty, "." or ".." segment;
//  2. lexical containment: root joined with the key stays strictly below
//     root;
//  3. symlink containment: the real path of the deepest existing ancestor,
//     joined with the rest, stays within the real path of root. A dangling
//     symlink, a symlink loop or an ancestor that cannot be examined (for
//     example EACCES) refuses the key; a component that is not a directory
//     or whose name is too long is passed over, as it cannot be a symlink.
//
// It returns the lexical path (root made absolute, joined with the key), not
// the real one. Refusals are *KeyError; root may not exist yet.
func Target(root, key string) (string, error) {
	if err := teammem.ValidateKey(key); err != nil {
		reason, _ := teammem.ErrorDetails(err)["reason"].(string)
		return "", &KeyError{Key: key, Reason: "invalid key: " + reason, Err: err}
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("key %q: memory dir %s: %w", shortKey(key), root, err)
	}
	p := filepath.Join(rootAbs, filepath.FromSlash(key))
	if !within(p, rootAbs) {
		return "", &KeyError{Key: key, Reason: "escapes the memory directory"}
	}
	if err := checkRealContainment(rootAbs, p, key); err != nil {
		return "", err
	}
	return p, nil
}

// checkRealContainment is stage 3 of Target.
func checkRealContainment(rootAbs, p, key string) error {
	real, err := realpathDeepestExisting(p)
	if err != nil {
		return &KeyError{Key: key, Reason: err.Error(), Err: errors.Unwrap(err)}
	}
	realRoot, err := realpath(rootAbs)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil // no root yet, hence no symlink inside it
	case err != nil:
		return &KeyError{Key: key, Reason: "cannot resolve the memory directory: " + errnoText(err), Err: err}
	}
	if real != realRoot && !within(real, realRoot) {
		return &KeyError{Key: key, Reason: "escapes the memory directory via a symlink"}
	}
	return nil
}

// within reports whether p lies strictly below dir (both clean and absolute).
func within(p, dir string) bool {
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir) && len(p) > len(dir)
}

// containmentError is a refusal found while resolving symlinks. It wraps
// the system error only when containment could not be verified: a dangling
// link's ENOENT must not read as fs.ErrNotExist to callers.
type containmentError struct {
	msg string
	err error
}

func (e *containmentError) Error() string { return e.msg }
func (e *containmentError) Unwrap() error { return e.err }

// realpathDeepestExisting returns the real path of p's deepest existing
// ancestor (p itself when it exists) joined with the components below it
// that do not exist yet (Claude Code's realpathDeepestExisting).
func realpathDeepestExisting(p string) (string, error) {
	var tail []string
	cur := p
	for {
		real, err := realpath(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, tail...)...), nil
		}
		switch {
		case errors.Is(err, syscall.ELOOP):
			return "", &containmentError{"symlink loop", nil}
		case errors.Is(err, fs.ErrNotExist):
			if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return "", &containmentError{"dangling symlink", nil}
			}
		case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ENAMETOOLONG):
		default:
			return "", &containmentError{"cannot verify containment (" + errnoText(err) + ")", err}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		tail = append([]string{filepath.Base(cur)}, tail...)
		cur = parent
	}
}

// errnoText names the system error inside err, or returns err's text.
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// maxSymlinks is how many symlinks realpath follows before reporting ELOOP,
// Linux's limit.
const maxSymlinks = 40

// realpath resolves every symlink in the absolute path p, like realpath(3),
// and reports the errno realpath would: ENOENT for a missing component or
// dangling link, ENOTDIR for a file used as a directory, ELOOP after
// maxSymlinks links. filepath.EvalSymlinks cannot be used because it reports
// loops with an error that carries no errno.
func realpath(p string) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	pending := splitPath(p[len(vol):])
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if len(pending) > 0 && !fi.IsDir() {
				return "", &fs.PathError{Op: "realpath", Path: next, Err: syscall.ENOTDIR}
			}
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", &fs.PathError{Op: "realpath", Path: p, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved, target = v+string(filepath.Separator), target[len(v):]
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

// splitPath splits a path into its non-empty components.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator })
}
