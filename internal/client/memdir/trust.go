package memdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// A cloned repository must not redirect the memory directory: teammem
// uploads what it finds there and writes what the server holds into it.
// Claude Code never reads autoMemoryDirectory from the project's
// .claude/settings.json for that reason; the local settings file beside it
// is meant to be the user's own, but nothing stops a repository from
// committing one. These are teammem's extra rules for that file (issue 10
// point 6); the policy and user settings are the user's (or their admin's)
// and are taken as Claude Code takes them.

// localSettingsRefusal returns why the local settings file must not choose
// the memory dir, or "" when it may. It is refused when it is reached
// through a symlink, when git tracks it (or cannot say), and when the user
// never trusted the project in Claude Code (see trustedProject).
func localSettingsRefusal(file string, loc Location, trustFile string) string {
	// A symlink on the way (.claude, or the file itself) could lead git's
	// answer about this path away from the tracked file it points at.
	if real, err := realpath(file); err != nil || real != file {
		return "it is reached through a symlink, so the repository may be choosing it"
	}
	if workTree, ok := FindGitRoot(loc.ProjectRoot); ok {
		rel, err := filepath.Rel(workTree, file)
		if err != nil {
			return "cannot tell whether git tracks it: " + err.Error()
		}
		tracked, err := gitTracks(workTree, filepath.ToSlash(rel))
		switch {
		case err != nil:
			return "cannot tell whether git tracks it (" + err.Error() + ")"
		case tracked:
			return "git tracks the file, so whoever controls the repository chose that directory, not you"
		}
	}
	if !trustedProject(trustFile, loc.ProjectRoot) {
		return "you have not trusted this project in Claude Code (no hasTrustDialogAccepted for it in " + trustFile + ")"
	}
	return ""
}

// gitTracks reports whether git's index holds rel ('/'-separated, relative
// to the work tree). It runs the git CLI, which knows every index format,
// with the variables that would point it at another repository removed and
// the file-system monitor hook off: a repository's own .git/config must not
// get to run a program because teammem looked at it.
func gitTracks(workTree, rel string) (bool, error) {
	cmd := exec.Command("git", "-c", "core.fsmonitor=false", "--no-optional-locks",
		"ls-files", "--error-unmatch", "--", ":(literal)"+rel)
	cmd.Dir = workTree
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1: // "did not match any file(s) known to git"
		return false, nil
	}
	if msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); msg != "" {
		return false, fmt.Errorf("git ls-files: %v: %s", err, msg)
	}
	return false, fmt.Errorf("git ls-files: %w", err)
}

// trustedProject reports whether Claude Code's global config file records
// that the user accepted the workspace-trust dialog for dir or one of its
// parents: projects[<path>].hasTrustDialogAccepted is true.
//
// The reference does not describe how Claude Code records trust; this is
// teammem's reading of the file Claude Code keeps it in,
// <CLAUDE_CONFIG_DIR or home>/.claude.json, whose "projects" object is
// keyed by absolute project paths. A missing or unreadable file, or one
// without such an entry, means not trusted: the rule fails closed.
func trustedProject(trustFile, dir string) bool {
	b, err := os.ReadFile(trustFile)
	if err != nil {
		return false
	}
	var cfg struct {
		Projects map[string]struct {
			Trusted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if json.Unmarshal(b, &cfg) != nil {
		return false
	}
	trusted := map[string]bool{}
	for p, v := range cfg.Projects {
		if v.Trusted && filepath.IsAbs(p) {
			trusted[norm.NFC.String(filepath.Clean(p))] = true
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if trusted[d] {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// trustFile is the Claude Code global config file trustedProject reads.
func trustFile(getenv func(string) string, home, configHome string) string {
	if _, ok := lookupEnv(getenv, "CLAUDE_CONFIG_DIR"); ok {
		return filepath.Join(configHome, ".claude.json")
	}
	return filepath.Join(home, ".claude.json")
}

// repoDirRefusal returns why dir, a memory dir a file inside the repository
// chose, must not be used, or "" when it may. Checked on the path as given
// and on its real path (so a symlink cannot lead elsewhere), dir must not be
// the home directory or one of its parents, nor lie in a hidden directory of
// the home (~/.ssh, ~/.config/...) other than below Claude's config home;
// and what it already holds must be memory files (see foreignEntry).
func repoDirRefusal(dir, home, configHome string) string {
	real, err := realpathDeepestExisting(dir)
	if err != nil {
		return "cannot resolve it: " + err.Error()
	}
	realHome, realConfig := home, configHome
	if r, err := realpathDeepestExisting(home); err == nil && home != "" {
		realHome = r
	}
	if r, err := realpathDeepestExisting(configHome); err == nil && configHome != "" {
		realConfig = r
	}
	if why := placeRefusal(dir, home, configHome); why != "" {
		return why
	}
	if why := placeRefusal(real, realHome, realConfig); why != "" {
		return why + " (through a symlink)"
	}
	key, err := foreignEntry(dir)
	switch {
	case err != nil:
		return err.Error()
	case key != "":
		return fmt.Sprintf("it already holds %s, which is not a memory file teammem or Claude Code would have written", key)
	}
	return ""
}

// placeRefusal is repoDirRefusal's check of where p lies.
func placeRefusal(p, home, configHome string) string {
	if home == "" {
		return ""
	}
	if p == home || within(home, p) {
		return "it is your home directory or contains it"
	}
	base := home
	switch {
	case p == configHome || within(p, configHome):
		base = configHome // Claude's own dot-directory is where memory lives
	case !within(p, home):
		return ""
	}
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return ""
	}
	hidden := base
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		hidden = filepath.Join(hidden, c)
		if strings.HasPrefix(c, ".") && c != "." {
			return "it lies in " + hidden + ", a hidden directory of your home"
		}
	}
	return ""
}

// maxForeignCheck bounds how many entries foreignEntry looks at; a
// directory with more is refused rather than walked for long.
const maxForeignCheck = 10_000

// foreignEntry returns the first entry below dir (a '/'-separated key) that
// is not a memory file, or "" when there is none or dir does not exist yet.
//
// Memory files are what Claude Code and teammem put in a memory dir:
// *.md files (topic files, MEMORY.md, logs/.../*.md daily logs) in
// directories of their own, the names IgnoredName lists (the dream lock,
// temp files, .DS_Store, the memory-store files) and, inside a directory
// Claude Code's store sync mounted, the other types it syncs (.txt, .json,
// .jsonl; memory-stores reference §6.2). Anything else — a symlink, a
// key, a config file — means dir is somebody else's directory.
func foreignEntry(dir string) (string, error) {
	seen := 0
	var walk func(rel string, inStore bool) (string, error)
	walk = func(rel string, inStore bool) (string, error) {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		switch {
		case rel == "" && errors.Is(err, fs.ErrNotExist):
			return "", nil
		case err != nil:
			return "", fmt.Errorf("cannot check what it holds: %w", err)
		}
		inStore = inStore || StoreMarker(filepath.Join(dir, filepath.FromSlash(rel))) != ""
		for _, e := range entries {
			if seen++; seen > maxForeignCheck {
				return "", fmt.Errorf("it holds more than %d entries", maxForeignCheck)
			}
			key := path.Join(rel, e.Name())
			switch {
			case e.IsDir():
				if k, err := walk(key, inStore); k != "" || err != nil {
					return k, err
				}
			case !e.Type().IsRegular() || !isMemoryFile(e.Name(), inStore):
				return key, nil
			}
		}
		return "", nil
	}
	return walk("", false)
}

// isMemoryFile reports whether a regular file's name is one foreignEntry
// accepts.
func isMemoryFile(name string, inStore bool) bool {
	switch ext := strings.ToLower(path.Ext(name)); {
	case ext == ".md", IgnoredName(name):
		return true
	case inStore:
		return ext == ".txt" || ext == ".json" || ext == ".jsonl"
	}
	return false
}
