package memdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// ErrNoOrigin is returned by OriginURL when no [remote "origin"] url is
// configured: the repository has no slug and team memory cannot sync.
var ErrNoOrigin = errors.New("no origin remote configured")

// FindGitRoot walks upward from start (made absolute) and returns the first
// directory holding a .git directory or file, NFC-normalised. The filesystem
// root is checked too. It reports false when there is none.
func FindGitRoot(start string) (string, bool) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", false
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return norm.NFC.String(dir), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// FindCanonicalGitRoot returns the directory a repository's memory is keyed
// by: FindGitRoot(start), except that every linked worktree of a repository
// maps to the main working tree (or to the bare repository directory for a
// worktree of a bare repository), so all worktrees share one memory dir.
//
// A .git file is trusted only when git's own bookkeeping agrees with it: its
// gitdir must sit in <commondir>/worktrees/, and that gitdir's "gitdir" file
// must point back at this worktree's .git. Otherwise, for submodules (no
// commondir) and on any error, the worktree's own root is returned, so a
// forged .git file cannot borrow another repository's memory.
func FindCanonicalGitRoot(start string) (string, bool) {
	root, ok := FindGitRoot(start)
	if !ok {
		return "", false
	}
	return canonicalRoot(root), true
}

// canonicalRoot applies the worktree resolution and its security checks.
func canonicalRoot(root string) string {
	wtGitDir, ok := readGitFile(root)
	if !ok {
		return root // a .git directory: a regular repository
	}
	commonRaw, err := os.ReadFile(filepath.Join(wtGitDir, "commondir"))
	if err != nil {
		return root // no commondir: a submodule, or not a worktree at all
	}
	commonDir := resolvePath(wtGitDir, strings.TrimSpace(string(commonRaw)))
	if filepath.Dir(wtGitDir) != filepath.Join(commonDir, "worktrees") {
		return root
	}
	backRaw, err := os.ReadFile(filepath.Join(wtGitDir, "gitdir"))
	if err != nil {
		return root
	}
	// Git writes an absolute path here; with worktree.useRelativePaths it is
	// relative to the worktree's gitdir, which is where we resolve it.
	back, err1 := filepath.EvalSymlinks(resolvePath(wtGitDir, strings.TrimSpace(string(backRaw))))
	realRoot, err2 := filepath.EvalSymlinks(root)
	if err1 != nil || err2 != nil || back != filepath.Join(realRoot, ".git") {
		return root
	}
	if filepath.Base(commonDir) != ".git" {
		return norm.NFC.String(commonDir) // worktree of a bare repository
	}
	return norm.NFC.String(filepath.Dir(commonDir))
}

// readGitFile reads root/.git when it is a file of the form "gitdir: <path>"
// and returns that path resolved against root.
func readGitFile(root string) (string, bool) {
	p := filepath.Join(root, ".git")
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	s := string(b)
	if !strings.HasPrefix(s, "gitdir:") {
		return "", false
	}
	v := strings.TrimSpace(strings.TrimPrefix(s, "gitdir:"))
	if v == "" {
		return "", false
	}
	return resolvePath(root, v), true
}

// resolvePath resolves p against base the way Node's path.resolve does:
// absolute paths are only cleaned.
func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// OriginURL returns the url of the "origin" remote of the repository whose
// working tree is gitRoot (as FindGitRoot or FindCanonicalGitRoot return it;
// the latter may return a bare repository's own directory).
// It reads the config of the repository's git directory; for a linked
// worktree, whose own git directory has no such entry, it falls back to the
// config of the common directory. Only origin is consulted and the first
// url wins; include and includeIf directives are not followed. It returns
// ErrNoOrigin when no url is configured.
func OriginURL(gitRoot string) (string, error) {
	gitDir, ok := gitDirOf(gitRoot)
	if !ok {
		return "", fmt.Errorf("origin url of %s: not a git repository", gitRoot)
	}
	dirs := []string{gitDir}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		dirs = append(dirs, resolvePath(gitDir, strings.TrimSpace(string(b))))
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "config"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("origin url of %s: %w", gitRoot, err)
		}
		if url, ok := gitConfigValue(string(b), "remote", "origin", "url"); ok {
			return url, nil
		}
	}
	return "", ErrNoOrigin
}

// gitDirOf returns the git directory of a working tree: its .git directory,
// the target of its .git file, or the directory itself when it is a bare
// repository (FindCanonicalGitRoot's answer for a bare repository's
// worktrees).
func gitDirOf(root string) (string, bool) {
	if wt, ok := readGitFile(root); ok {
		return wt, true
	}
	if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
		return filepath.Join(root, ".git"), true
	}
	head, err1 := os.Stat(filepath.Join(root, "HEAD"))
	objects, err2 := os.Stat(filepath.Join(root, "objects"))
	if err1 == nil && err2 == nil && head.Mode().IsRegular() && objects.IsDir() {
		return root, true
	}
	return "", false
}
