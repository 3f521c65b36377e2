package memdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// Sources of Location.MemoryDir. A settings override reports
// SourceSettingsPrefix followed by the settings source: "settings:policy",
// "settings:local" or "settings:user".
const (
	SourceFlag           = "flag"
	SourceCowork         = "cowork-override"
	SourceSettingsPrefix = "settings:"
	SourceDefault        = "default"
)

// Options says where to resolve a project's memory from. Zero fields take
// the process's values.
type Options struct {
	// Cwd is the directory the agent runs in; "" means os.Getwd.
	Cwd string
	// Getenv reads environment variables; nil means the process environment
	// (see ConfigHome for the one case that needs os.LookupEnv).
	Getenv func(string) string
	// Home is the user's home directory; "" means os.UserHomeDir.
	Home string
	// Dir is an explicit memory dir (--dir or TEAMMEM_MEMORY_DIR, which the
	// caller reads); it overrides everything. Relative paths are taken
	// against Cwd and a leading "~/" against Home.
	Dir string

	// policyFile replaces the OS's managed-settings path; tests only.
	policyFile string
}

// Location is where a project's memory and transcripts live. Every path is
// absolute, NFC-normalised and has no trailing separator.
type Location struct {
	ConfigHome  string // Claude Code's config home (see ConfigHome)
	ProjectRoot string // realpath of the working directory
	GitRoot     string // FindCanonicalGitRoot(ProjectRoot) (a bare repository for its worktrees); "" outside a repository
	// ProjectKey is the name of the projects/ directory memory is keyed by:
	// SanitizePath(GitRoot, or ProjectRoot outside a repository), or for
	// long paths the existing directory ProjectDir found by prefix.
	ProjectKey    string
	MemoryDir     string // the memory directory; MEMORY.md is its index
	TeamDir       string // MemoryDir/team, synced with the repository's team space
	TranscriptDir string // projects/<SanitizePath(ProjectRoot)>, where session transcripts go
	Source        string // what chose MemoryDir: one of the Source constants
	// Warnings are the settings Resolve refused while choosing MemoryDir,
	// one sentence each for people; every command shows them (once, on
	// stderr) and status lists them.
	Warnings []string
}

// Resolve works out a project's Location the way Claude Code does
// (reference §1.4, §2.2, §2.3). The memory dir is, first that applies:
//
//  1. o.Dir (Source "flag");
//  2. $CLAUDE_COWORK_MEMORY_PATH_OVERRIDE when it validates, without tilde
//     expansion ("cowork-override");
//  3. autoMemoryDirectory from the first settings file that defines it, in
//     the order policy (managed-settings.json), local
//     (<ProjectRoot>/.claude/settings.local.json), user
//     (<ConfigHome>/settings.json), validated with "~/" expansion; an invalid
//     value means no override, later files are not tried. Project settings
//     (.claude/settings.json) are never read, since a cloned repository must
//     not redirect writes; Claude Code's --settings flag source has no
//     counterpart here;
//  4. <ConfigHome>/projects/<ProjectKey>/memory ("default").
//
// The local settings file sits in the repository, so teammem is stricter
// with it than Claude Code (trust.go): it is ignored, as if it set nothing,
// when reached through a symlink, tracked by git, or in a project the user
// never trusted in Claude Code; a directory it names is refused (no
// override, as for an invalid value) when it is or contains the home
// directory, lies in a hidden directory of the home other than Claude's
// config home, or already holds files that are not memory files. Each
// refusal adds a warning to the Location.
func Resolve(o Options) (Location, error) {
	cwd := o.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Location{}, fmt.Errorf("resolve memory dir: working directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return Location{}, fmt.Errorf("resolve memory dir: %w", err)
	}
	home := o.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	_, configSet := lookupEnv(o.Getenv, "CLAUDE_CONFIG_DIR")
	if home == "" && !configSet {
		return Location{}, errors.New("resolve memory dir: no home directory; set HOME or CLAUDE_CONFIG_DIR")
	}

	var loc Location
	loc.ProjectRoot = cwd
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		loc.ProjectRoot = real
	}
	loc.ProjectRoot = norm.NFC.String(loc.ProjectRoot)
	// A relative (even empty) config home is relative to the process's
	// working directory in Claude Code, which is the project root.
	loc.ConfigHome = norm.NFC.String(resolvePath(loc.ProjectRoot, ConfigHome(o.Getenv, home)))
	keyPath := loc.ProjectRoot
	if root, ok := FindCanonicalGitRoot(loc.ProjectRoot); ok {
		loc.GitRoot, keyPath = root, root
	}
	projectDir := ProjectDir(loc.ConfigHome, keyPath)
	loc.ProjectKey = filepath.Base(projectDir)
	loc.TranscriptDir = norm.NFC.String(ProjectDir(loc.ConfigHome, loc.ProjectRoot))

	loc.MemoryDir, loc.Source, loc.Warnings = overrideDir(o, loc, cwd, home)
	if loc.MemoryDir == "" {
		loc.MemoryDir, loc.Source = norm.NFC.String(filepath.Join(projectDir, "memory")), SourceDefault
	}
	for i, w := range loc.Warnings {
		loc.Warnings[i] = w + "; using " + loc.MemoryDir + " (" + loc.Source + ")"
	}
	loc.TeamDir = filepath.Join(loc.MemoryDir, "team")
	return loc, nil
}

// overrideDir returns the memory dir chosen by rules 1–3 of Resolve, or ""
// when none applies, and the warnings of what it refused.
func overrideDir(o Options, loc Location, cwd, home string) (dir, source string, warnings []string) {
	if o.Dir != "" {
		d := o.Dir
		if strings.HasPrefix(d, "~/") && home != "" {
			d = filepath.Join(home, d[2:])
		}
		return norm.NFC.String(resolvePath(cwd, d)), SourceFlag, nil
	}
	if v, ok := lookupEnv(o.Getenv, "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"); ok {
		if p, ok := validateMemoryPath(v, false, home); ok {
			return p, SourceCowork, nil
		}
	}
	policy := o.policyFile
	if policy == "" {
		policy = policySettingsPath()
	}
	sources := []struct{ name, file string }{
		{"policy", policy},
		{"local", filepath.Join(loc.ProjectRoot, ".claude", "settings.local.json")},
		{"user", filepath.Join(loc.ConfigHome, "settings.json")},
	}
	for _, s := range sources {
		raw, defined := autoMemoryDirectory(s.file)
		if !defined {
			continue
		}
		local := s.name == "local" // the one settings file inside the repository
		if local {
			if why := localSettingsRefusal(s.file, loc, trustFile(o.Getenv, home, loc.ConfigHome)); why != "" {
				warnings = append(warnings, fmt.Sprintf("autoMemoryDirectory in %s ignored: %s", s.file, why))
				continue
			}
		}
		p, ok := validateMemoryPath(raw, true, home)
		if !ok {
			return "", "", warnings
		}
		if local {
			if why := repoDirRefusal(p, home, loc.ConfigHome); why != "" {
				return "", "", append(warnings, fmt.Sprintf("memory dir %s from autoMemoryDirectory in %s refused: %s", p, s.file, why))
			}
		}
		return p, SourceSettingsPrefix + s.name, warnings
	}
	return "", "", warnings
}

// policySettingsPath returns the OS's managed (policy) settings file.
func policySettingsPath() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	default:
		return "/etc/claude-code/managed-settings.json"
	}
}

// autoMemoryDirectory reads the autoMemoryDirectory setting of a settings
// file. It is defined when present and not null; a value that is not a
// string is defined but reads as "", which fails validation. A missing or
// unparsable file defines nothing.
func autoMemoryDirectory(file string) (value string, defined bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	var settings map[string]json.RawMessage
	if json.Unmarshal(b, &settings) != nil {
		return "", false
	}
	raw, ok := settings["autoMemoryDirectory"]
	if !ok || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", true
	}
	return s, true
}

var driveRootRE = regexp.MustCompile(`^[A-Za-z]:$`)

// validateMemoryPath is Claude Code's validateMemoryPath (reference §2.3):
// it returns the normalised override without trailing separators, or false
// for a value that must not be used: empty, a bare or escaping "~",
// relative, shorter than 3 characters, a drive root, a UNC path, or holding
// a NUL byte.
func validateMemoryPath(raw string, expandTilde bool, home string) (string, bool) {
	if raw == "" {
		return "", false
	}
	candidate := raw
	if expandTilde && (strings.HasPrefix(raw, "~/") || strings.HasPrefix(raw, `~\`)) {
		rest := raw[2:]
		if n := filepath.Clean(rest); n == "." || n == ".." || home == "" {
			return "", false // would be $HOME itself or its parent
		}
		candidate = filepath.Join(home, rest)
	}
	normalized := strings.TrimRight(filepath.Clean(candidate), `/\`)
	switch {
	case !filepath.IsAbs(normalized),
		len(utf16.Encode([]rune(normalized))) < 3,
		driveRootRE.MatchString(normalized),
		strings.HasPrefix(normalized, `\\`), strings.HasPrefix(normalized, "//"),
		strings.ContainsRune(normalized, 0):
		return "", false
	}
	return norm.NFC.String(normalized), true
}
