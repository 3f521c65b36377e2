package memdir

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RealTempDir returns t.TempDir() with symlinks resolved, since git writes
// real paths into worktree metadata (macOS's /var is a symlink).
func RealTempDir(tb testing.TB) string {
	tb.Helper()
	d, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// MustGit runs the real git CLI in dir, isolated from the user's config.
func MustGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	// The global config is a file of the test's own: git writes to it by
	// renaming a lock file over it, which would replace /dev/null itself.
	global := filepath.Join(dir, ".gitconfig-test")
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+global, "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// MustRepo creates a repository with one commit at dir.
func MustRepo(tb testing.TB, dir string) string {
	tb.Helper()
	MustMkdir(tb, dir)
	MustGit(tb, dir, "init", "-q")
	MustGit(tb, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

func TestGitRoots(t *testing.T) {
	t.Parallel()
	tmp := RealTempDir(t)
	repo := MustRepo(t, filepath.Join(tmp, "repo"))
	MustMkdir(t, filepath.Join(repo, "a", "b"))
	MustGit(t, repo, "worktree", "add", "-q", "-b", "feature", filepath.Join(tmp, "wt"))
	wt := filepath.Join(tmp, "wt")
	MustMkdir(t, filepath.Join(wt, "sub"))

	lib := MustRepo(t, filepath.Join(tmp, "lib"))
	MustGit(t, repo, "submodule", "add", "-q", lib, "vendor/lib")
	submodule := filepath.Join(repo, "vendor", "lib")

	MustGit(t, tmp, "clone", "-q", "--bare", repo, filepath.Join(tmp, "bare.git"))
	MustGit(t, filepath.Join(tmp, "bare.git"), "worktree", "add", "-q", filepath.Join(tmp, "bare-wt"))

	// A .git file borrowing the real worktree's gitdir: its gitdir file
	// points back at wt/.git, not here, so the check fails.
	forged := filepath.Join(tmp, "forged")
	MustWrite(t, filepath.Join(forged, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	// A .git file whose gitdir has a commondir but does not sit in
	// <commondir>/worktrees.
	fake := filepath.Join(tmp, "fake-gitdir")
	MustWrite(t, filepath.Join(fake, "commondir"), filepath.Join(repo, ".git")+"\n")
	MustWrite(t, filepath.Join(fake, "gitdir"), filepath.Join(tmp, "forged2", ".git")+"\n")
	forged2 := filepath.Join(tmp, "forged2")
	MustWrite(t, filepath.Join(forged2, ".git"), "gitdir: "+fake+"\n")
	// A submodule-like .git file: relative gitdir, no commondir.
	modlike := filepath.Join(repo, "modlike")
	MustMkdir(t, filepath.Join(repo, ".git", "modules", "modlike"))
	MustWrite(t, filepath.Join(modlike, ".git"), "gitdir: ../.git/modules/modlike\n")

	tests := []struct {
		name, start, root, canonical string
	}{
		{"repository root", repo, repo, repo},
		{"subdirectory", filepath.Join(repo, "a", "b"), repo, repo},
		{"relative .. in start", filepath.Join(repo, "a", "..", "a"), repo, repo},
		{"linked worktree shares the main root", filepath.Join(wt, "sub"), wt, repo},
		{"submodule keeps its own root", submodule, submodule, submodule},
		{"submodule-like .git file without commondir", modlike, modlike, modlike},
		{"worktree of a bare repository", filepath.Join(tmp, "bare-wt"), filepath.Join(tmp, "bare-wt"), filepath.Join(tmp, "bare.git")},
		{"forged .git file falls back to its root", forged, forged, forged},
		{"gitdir outside <commondir>/worktrees", forged2, forged2, forged2},
	}
	for _, tt := range tests {
		root, ok := FindGitRoot(tt.start)
		if !ok || root != tt.root {
			t.Errorf("%s: FindGitRoot = %q, %v; want %q", tt.name, root, ok, tt.root)
		}
		canonical, ok := FindCanonicalGitRoot(tt.start)
		if !ok || canonical != tt.canonical {
			t.Errorf("%s: FindCanonicalGitRoot = %q, %v; want %q", tt.name, canonical, ok, tt.canonical)
		}
	}

	outside := filepath.Join(tmp, "plain")
	MustMkdir(t, outside)
	if _, above := FindGitRoot(tmp); !above { // only meaningful when the temp dir is not in a repository
		if r, ok := FindCanonicalGitRoot(outside); ok {
			t.Errorf("FindCanonicalGitRoot outside a repository = %q", r)
		}
	}
}

func TestOriginURL(t *testing.T) {
	t.Parallel()
	tmp := RealTempDir(t)
	repo := MustRepo(t, filepath.Join(tmp, "repo"))
	MustGit(t, repo, "remote", "add", "upstream", "https://example.com/up/stream.git")
	MustGit(t, repo, "remote", "add", "origin", "git@github.com:acme/widgets.git")
	wt := filepath.Join(tmp, "wt")
	MustGit(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
	bare := MustRepo(t, filepath.Join(tmp, "no-origin"))

	bareClone := filepath.Join(tmp, "bare.git")
	MustGit(t, tmp, "clone", "-q", "--bare", "--origin", "origin", repo, bareClone)
	MustGit(t, bareClone, "config", "remote.origin.url", "git@github.com:acme/widgets.git")
	bareWT := filepath.Join(tmp, "bare-wt")
	MustGit(t, bareClone, "worktree", "add", "-q", bareWT)
	canonicalBareWT, _ := FindCanonicalGitRoot(bareWT)

	for _, dir := range []string{repo, wt, bareClone, bareWT, canonicalBareWT} {
		got, err := OriginURL(dir)
		if err != nil || got != "git@github.com:acme/widgets.git" {
			t.Errorf("OriginURL(%s) = %q, %v", dir, got, err)
		}
	}
	if got, err := OriginURL(bare); !errors.Is(err, ErrNoOrigin) {
		t.Errorf("OriginURL without origin = %q, %v; want ErrNoOrigin", got, err)
	}
	if _, err := OriginURL(filepath.Join(tmp, "nowhere")); err == nil || errors.Is(err, ErrNoOrigin) {
		t.Errorf("OriginURL of a non-repository: %v", err)
	}

	// A hand-edited config: quoting, escapes, comments, odd case.
	hand := MustRepo(t, filepath.Join(tmp, "hand"))
	cfg := filepath.Join(hand, ".git", "config")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "# [remote \"origin\"] url = wrong\n[REMOTE \"origin\"] ; comment\n\tURL = \"https://gitlab.example.com/g/my repo.git\" # comment\n"...)
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := OriginURL(hand); err != nil || got != "https://gitlab.example.com/g/my repo.git" {
		t.Errorf("OriginURL(hand-edited) = %q, %v", got, err)
	}
	if got := MustGit(t, hand, "config", "--get", "remote.origin.url"); got != "https://gitlab.example.com/g/my repo.git" {
		t.Errorf("git itself reads %q", got)
	}
}

func TestGitConfigValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       string
		found      bool
		gitAgrees  bool // git config --file reads the same (single-valued, well-formed)
	}{
		{"plain", "[remote \"origin\"]\n\turl = https://x/y.git\n", "https://x/y.git", true, true},
		{"no trailing newline", "[remote \"origin\"]\nurl=a", "a", true, true},
		{"section and key case-insensitive", "[Remote \"origin\"]\n  URL = a\n", "a", true, true},
		{"subsection case-sensitive", "[remote \"Origin\"]\nurl = a\n", "", false, true},
		{"legacy dotted form is lowercased", "[remote.Origin]\nurl = a\n", "a", true, true},
		{"quoted value with blanks", "[remote \"origin\"]\nurl = \" a b \" \n", " a b ", true, true},
		{"inner blanks kept, trailing trimmed", "[remote \"origin\"]\nurl = a  b  \t\n", "a  b", true, true},
		{"hash comment", "[remote \"origin\"]\nurl = a # c\n", "a", true, true},
		{"semicolon comment", "[remote \"origin\"]\nurl = a;c\n", "a", true, true},
		{"quoted comment characters", "[remote \"origin\"]\nurl = \"a#b;c\"\n", "a#b;c", true, true},
		{"escapes", "[remote \"origin\"]\nurl = \"q\\\"b\\\\s\\tt\"\n", "q\"b\\s\tt", true, true},
		{"line continuation", "[remote \"origin\"]\nurl = ab\\\ncd\n", "abcd", true, true},
		{"CRLF", "[remote \"origin\"]\r\nurl = a\r\n", "a", true, true},
		{"BOM", "\uFEFF[remote \"origin\"]\nurl = a\n", "a", true, true},
		{"entry after header on one line", "[remote \"origin\"] url = a\n", "a", true, true},
		{"other remote first", "[remote \"up\"]\nurl = u\n[remote \"origin\"]\nurl = o\n", "o", true, true},
		{"commented-out section", "# [remote \"origin\"]\n; url = x\n[core]\nurl = y\n", "", false, true},
		{"escaped subsection", "[remote \"ori\\\"gin\"]\nurl = a\n", "", false, true},
		{"other key of origin", "[remote \"origin\"]\npushurl = p\nfetch = f\n", "", false, true},
		{"first of two wins", "[remote \"origin\"]\nurl = first\nurl = second\n", "first", true, false},
		{"boolean key skipped", "[remote \"origin\"]\nurl\nurl = b\n", "b", true, false},
		{"unknown escape skips the line", "[remote \"origin\"]\nurl = a\\qb\nurl = c\n", "c", true, false},
		{"unterminated quote skips the line", "[remote \"origin\"]\nurl = \"abc\nurl = d\n", "d", true, false},
		{"broken header never matches", "[remote \"origin\nurl = a\n", "", false, false},
	}
	tmp := t.TempDir()
	for i, tt := range tests {
		got, found := gitConfigValue(tt.text, "remote", "origin", "url")
		if got != tt.want || found != tt.found {
			t.Errorf("%s: got %q, %v; want %q, %v", tt.name, got, found, tt.want, tt.found)
		}
		if !tt.gitAgrees {
			continue
		}
		f := filepath.Join(tmp, "config"+string(rune('a'+i)))
		MustWrite(t, f, tt.text)
		cmd := exec.Command("git", "config", "--file", f, "--get", "remote.origin.url")
		out, err := cmd.Output()
		if gitGot := strings.TrimSuffix(string(out), "\n"); (err == nil) != tt.found || gitGot != tt.want {
			t.Errorf("%s: git reads %q (err %v), we read %q", tt.name, gitGot, err, got)
		}
	}
}
