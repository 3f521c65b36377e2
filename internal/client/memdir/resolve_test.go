package memdir

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// resolveBundle is a home, a repository with a worktree, and the settings
// files Resolve reads, all in one temp dir.
type resolveBundle struct {
	tmp, home, repo, sub, wt, policy string
}

func setupResolve(t *testing.T) resolveBundle {
	t.Helper()
	tmp := RealTempDir(t)
	b := resolveBundle{
		tmp:    tmp,
		home:   filepath.Join(tmp, "home"),
		repo:   filepath.Join(tmp, "src", "my-app"),
		wt:     filepath.Join(tmp, "src", "my-app-feature"),
		policy: filepath.Join(tmp, "etc", "managed-settings.json"),
	}
	b.sub = filepath.Join(b.repo, "pkg", "api")
	MustMkdir(t, b.home)
	MustRepo(t, b.repo)
	MustMkdir(t, b.sub)
	MustGit(t, b.repo, "worktree", "add", "-q", "-b", "feature", b.wt)
	// The user trusted the checkout in Claude Code, as anyone using it has.
	MustWrite(t, b.trustFile(), `{"projects": {"`+b.repo+`": {"hasTrustDialogAccepted": true}}}`)
	return b
}

// trustFile is where Claude Code records trusted projects, for this home.
func (b resolveBundle) trustFile() string { return filepath.Join(b.home, ".claude.json") }

func (b resolveBundle) options(cwd string, env map[string]string) Options {
	return Options{Cwd: cwd, Home: b.home, Getenv: func(k string) string { return env[k] }, policyFile: b.policy}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	b := setupResolve(t)
	claude := filepath.Join(b.home, ".claude")
	defaultMem := filepath.Join(claude, "projects", SanitizePath(b.repo), "memory")

	loc, err := Resolve(b.options(b.sub, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Location{
		ConfigHome:    claude,
		ProjectRoot:   b.sub,
		GitRoot:       b.repo,
		ProjectKey:    SanitizePath(b.repo),
		MemoryDir:     defaultMem,
		TeamDir:       filepath.Join(defaultMem, "team"),
		TranscriptDir: filepath.Join(claude, "projects", SanitizePath(b.sub)),
		Source:        SourceDefault,
	}
	if !reflect.DeepEqual(loc, want) {
		t.Errorf("default location:\n got %+v\nwant %+v", loc, want)
	}

	// A linked worktree shares the main tree's memory, not its transcripts.
	wtLoc, err := Resolve(b.options(b.wt, nil))
	if err != nil {
		t.Fatal(err)
	}
	if wtLoc.MemoryDir != defaultMem || wtLoc.GitRoot != b.repo || wtLoc.TranscriptDir != filepath.Join(claude, "projects", SanitizePath(b.wt)) {
		t.Errorf("worktree location: %+v", wtLoc)
	}

	// A symlinked working directory resolves to its real path.
	link := filepath.Join(b.tmp, "link-to-app")
	MustSymlink(t, b.repo, link)
	if l, err := Resolve(b.options(link, nil)); err != nil || l.ProjectRoot != b.repo || l.MemoryDir != defaultMem {
		t.Errorf("symlinked cwd: %+v, %v", l, err)
	}

	// CLAUDE_CONFIG_DIR moves everything.
	cfg := filepath.Join(b.tmp, "cfg")
	l, err := Resolve(b.options(b.repo, map[string]string{"CLAUDE_CONFIG_DIR": cfg}))
	if err != nil || l.ConfigHome != cfg || l.MemoryDir != filepath.Join(cfg, "projects", SanitizePath(b.repo), "memory") {
		t.Errorf("CLAUDE_CONFIG_DIR: %+v, %v", l, err)
	}
}

func TestResolveOutsideRepository(t *testing.T) {
	t.Parallel()
	tmp := RealTempDir(t)
	if _, inRepo := FindGitRoot(tmp); inRepo {
		t.Skip("the temp dir is inside a git repository")
	}
	dir := filepath.Join(tmp, "notes")
	MustMkdir(t, dir)
	l, err := Resolve(Options{Cwd: dir, Home: tmp, Getenv: func(string) string { return "" }, policyFile: filepath.Join(tmp, "none")})
	if err != nil || l.GitRoot != "" || l.ProjectKey != SanitizePath(dir) ||
		l.MemoryDir != filepath.Join(tmp, ".claude", "projects", SanitizePath(dir), "memory") {
		t.Errorf("outside a repository: %+v, %v", l, err)
	}
}

// overrideCase is one row of TestResolveOverrides, built from its bundle.
type overrideCase struct {
	name    string
	env     map[string]string
	files   map[string]string // settings file (or any other file) → content
	links   map[string]string // symlink → target
	tracked bool              // commit the local settings file
	dir     string            // Options.Dir
	want    string            // MemoryDir
	source  string
	warn    string // a substring of the one warning expected; "" expects none
}

func overrideCases(b resolveBundle) []overrideCase {
	defaultMem := filepath.Join(b.home, ".claude", "projects", SanitizePath(b.repo), "memory")
	cowork := filepath.Join(b.tmp, "cowork")
	userFile := filepath.Join(b.home, ".claude", "settings.json")
	localFile := filepath.Join(b.repo, ".claude", "settings.local.json")
	projectFile := filepath.Join(b.repo, ".claude", "settings.json")
	setting := func(v string) string { return `{"theme": "dark", "autoMemoryDirectory": ` + v + `}` }
	env := func(v string) map[string]string { return map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": v} }
	return []overrideCase{
		{name: "Dir wins over everything", dir: "notes/mem", env: env(cowork),
			files: map[string]string{b.policy: setting(`"/policy/mem"`)},
			want:  filepath.Join(b.repo, "notes", "mem"), source: SourceFlag},
		{name: "Dir with ~/", dir: "~/m", want: filepath.Join(b.home, "m"), source: SourceFlag},
		{name: "cowork override", env: env(cowork + "/"),
			files: map[string]string{userFile: setting(`"/user/mem"`)}, want: cowork, source: SourceCowork},
		{name: "cowork override is not tilde-expanded", env: env("~/mem"), want: defaultMem, source: SourceDefault},
		{name: "invalid cowork override falls through to settings", env: env("rel"),
			files: map[string]string{userFile: setting(`"/user/mem"`)}, want: "/user/mem", source: "settings:user"},
		{name: "user settings with ~/", files: map[string]string{userFile: setting(`"~/memories/app"`)},
			want: filepath.Join(b.home, "memories", "app"), source: "settings:user"},
		{name: "project settings ignored", files: map[string]string{projectFile: setting(`"/project/mem"`)},
			want: defaultMem, source: SourceDefault},
		{name: "local beats user", files: map[string]string{localFile: setting(`"/local/mem"`), userFile: setting(`"/user/mem"`)},
			want: "/local/mem", source: "settings:local"},
		{name: "policy beats local", files: map[string]string{b.policy: setting(`"/policy/mem/"`), localFile: setting(`"/local/mem"`)},
			want: "/policy/mem", source: "settings:policy"},
		{name: "null is undefined", files: map[string]string{b.policy: setting(`null`), userFile: setting(`"/user/mem"`)},
			want: "/user/mem", source: "settings:user"},
		{name: "unparsable file is undefined", files: map[string]string{localFile: `{"autoMemoryDirectory": `, userFile: setting(`"/user/mem"`)},
			want: "/user/mem", source: "settings:user"},
		{name: "invalid first value stops the search", files: map[string]string{localFile: setting(`"relative/mem"`), userFile: setting(`"/user/mem"`)},
			want: defaultMem, source: SourceDefault},
		{name: "non-string value is invalid", files: map[string]string{userFile: setting(`42`)}, want: defaultMem, source: SourceDefault},
		{name: "bare ~", files: map[string]string{userFile: setting(`"~"`)}, want: defaultMem, source: SourceDefault},
		{name: "~/..", files: map[string]string{userFile: setting(`"~/.."`)}, want: defaultMem, source: SourceDefault},
		{name: "~/ alone", files: map[string]string{userFile: setting(`"~/"`)}, want: defaultMem, source: SourceDefault},
		{name: "too short", files: map[string]string{userFile: setting(`"/a"`)}, want: defaultMem, source: SourceDefault},
		{name: "root", files: map[string]string{userFile: setting(`"/"`)}, want: defaultMem, source: SourceDefault},
		{name: "NUL", files: map[string]string{userFile: setting(`"/mem\u0000x"`)}, want: defaultMem, source: SourceDefault},
	}
}

// repoControlledCases are the rules for the local settings file, which
// sits in the repository (issue 10 point 6).
func repoControlledCases(b resolveBundle) []overrideCase {
	defaultMem := filepath.Join(b.home, ".claude", "projects", SanitizePath(b.repo), "memory")
	userFile := filepath.Join(b.home, ".claude", "settings.json")
	localFile := filepath.Join(b.repo, ".claude", "settings.local.json")
	other := filepath.Join(b.tmp, "other")
	local := func(dir string) map[string]string {
		return map[string]string{localFile: `{"autoMemoryDirectory": "` + dir + `"}`}
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	return []overrideCase{
		{name: "tracked local settings ignored", files: with(local(other), filepath.Join(other, "notes.md"), "x"), tracked: true,
			want: defaultMem, source: SourceDefault, warn: "git tracks the file"},
		{name: "tracked local settings fall through to user settings", tracked: true,
			files: with(local(other), userFile, `{"autoMemoryDirectory": "/user/mem"}`),
			want:  "/user/mem", source: "settings:user", warn: "git tracks the file"},
		{name: "untrusted project", files: with(local(other), b.trustFile(), `{"projects": {}}`),
			want: defaultMem, source: SourceDefault, warn: "not trusted this project"},
		{name: "trust declined", files: with(local(other), b.trustFile(), `{"projects": {"`+b.repo+`": {"hasTrustDialogAccepted": false}}}`),
			want: defaultMem, source: SourceDefault, warn: "not trusted"},
		{name: "no trust file", files: with(local(other), b.trustFile(), `not json`), want: defaultMem, source: SourceDefault, warn: "not trusted"},
		{name: "trust of a parent directory counts", files: with(local(other), b.trustFile(), `{"projects": {"`+b.tmp+`": {"hasTrustDialogAccepted": true}}}`),
			want: other, source: "settings:local"},
		{name: "trust file under CLAUDE_CONFIG_DIR", env: map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(b.tmp, "cfg")},
			files: with(local(other), filepath.Join(b.tmp, "cfg", ".claude.json"), `{"projects": {"`+b.repo+`": {"hasTrustDialogAccepted": true}}}`),
			want:  other, source: "settings:local"},
		{name: "CLAUDE_CONFIG_DIR without its own trust file", env: map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(b.tmp, "cfg")},
			files: local(other), want: filepath.Join(b.tmp, "cfg", "projects", SanitizePath(b.repo), "memory"), source: SourceDefault, warn: "not trusted"},
		{name: "settings file reached through a symlink", files: map[string]string{filepath.Join(b.tmp, "elsewhere.json"): `{"autoMemoryDirectory": "` + other + `"}`},
			links: map[string]string{localFile: filepath.Join(b.tmp, "elsewhere.json")},
			want:  defaultMem, source: SourceDefault, warn: "through a symlink"},
		{name: "home directory", files: local(b.home), want: defaultMem, source: SourceDefault, warn: "your home directory"},
		{name: "parent of home", files: local(filepath.Dir(b.home)), want: defaultMem, source: SourceDefault, warn: "your home directory"},
		{name: "~/.ssh", files: local("~/.ssh"), want: defaultMem, source: SourceDefault, warn: "hidden directory of your home"},
		{name: "below ~/.config", files: local("~/.config/autostart/mem"), want: defaultMem, source: SourceDefault, warn: filepath.Join(b.home, ".config")},
		{name: "symlink into ~/.ssh", files: with(local(filepath.Join(b.tmp, "innocent")), filepath.Join(b.home, ".ssh", "config"), "Host *"), links: map[string]string{filepath.Join(b.tmp, "innocent"): filepath.Join(b.home, ".ssh")},
			want: defaultMem, source: SourceDefault, warn: "through a symlink"},
		{name: "Claude's config home is allowed", files: local("~/.claude/memories/app"), want: filepath.Join(b.home, ".claude", "memories", "app"), source: "settings:local"},
		{name: "hidden dir inside the config home", files: local("~/.claude/.hidden/mem"), want: defaultMem, source: SourceDefault, warn: "hidden directory"},
		{name: "dir with a foreign file", files: with(local(other), filepath.Join(other, "a.md"), "m", filepath.Join(other, "sub", "id_ed25519"), "key"),
			want: defaultMem, source: SourceDefault, warn: "already holds sub/id_ed25519"},
		{name: "dir with a symlink", files: local(other), links: map[string]string{filepath.Join(other, "x.md"): b.home},
			want: defaultMem, source: SourceDefault, warn: "already holds x.md"},
		{name: "dir of memory files", want: other, source: "settings:local", files: with(local(other),
			filepath.Join(other, "MEMORY.md"), "i", filepath.Join(other, "team", "t.md"), "t", filepath.Join(other, "logs", "2026", "01", "2026-01-02.md"), "l",
			filepath.Join(other, ".consolidate-lock"), "1", filepath.Join(other, "team", "proj", ".memory-sync"), "{}",
			filepath.Join(other, "team", "proj", "data.json"), "{}", filepath.Join(other, "NOTES.MD"), "n")},
		{name: "store file types only inside a store", files: with(local(other), filepath.Join(other, "data.json"), "{}"),
			want: defaultMem, source: SourceDefault, warn: "already holds data.json"},
		{name: "a file, not a directory", files: with(local(other), other, "x"), want: defaultMem, source: SourceDefault, warn: "cannot check"},
		// The user's own settings are theirs to point anywhere.
		{name: "user settings may name a hidden dir", files: map[string]string{userFile: `{"autoMemoryDirectory": "~/.mem"}`},
			want: filepath.Join(b.home, ".mem"), source: "settings:user"},
	}
}

func TestResolveOverrides(t *testing.T) {
	t.Parallel()
	runOverrideCases(t, overrideCases)
}

func TestResolveRepositoryControlled(t *testing.T) {
	t.Parallel()
	runOverrideCases(t, repoControlledCases)
}

// runOverrideCases runs each case on a bundle of its own.
func runOverrideCases(t *testing.T, cases func(resolveBundle) []overrideCase) {
	for i, c := range cases(resolveBundle{}) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupResolve(t) // each case writes its own settings files
			tt := cases(b)[i]
			for f, content := range tt.files {
				MustWrite(t, f, content)
			}
			for link, target := range tt.links {
				MustMkdir(t, filepath.Dir(link))
				MustSymlink(t, target, link)
			}
			if tt.tracked {
				MustGit(t, b.repo, "add", "-f", ".claude/settings.local.json")
				MustGit(t, b.repo, "commit", "-q", "-m", "settings")
			}
			o := b.options(b.repo, tt.env)
			o.Dir = tt.dir
			l, err := Resolve(o)
			if err != nil {
				t.Fatal(err)
			}
			if l.MemoryDir != tt.want || l.Source != tt.source || l.TeamDir != filepath.Join(tt.want, "team") {
				t.Errorf("MemoryDir = %q (%s), want %q (%s); warnings %q", l.MemoryDir, l.Source, tt.want, tt.source, l.Warnings)
			}
			switch {
			case tt.warn == "" && len(l.Warnings) > 0:
				t.Errorf("unexpected warnings %q", l.Warnings)
			case tt.warn != "" && (len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], tt.warn)):
				t.Errorf("warnings = %q, want one with %q", l.Warnings, tt.warn)
			case tt.warn != "" && !strings.HasSuffix(l.Warnings[0], "; using "+tt.want+" ("+tt.source+")"):
				t.Errorf("warning %q does not name the directory used", l.Warnings[0])
			}
		})
	}
}

func TestValidateMemoryPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw    string
		expand bool
		want   string // "" means rejected
	}{
		{"/abs/mem", false, "/abs/mem"},
		{"/abs/mem///", true, "/abs/mem"},
		{"/abs/./x/../mem", false, "/abs/mem"},
		{"/ab", false, "/ab"},
		{"/a", false, ""},
		{"", true, ""},
		{"relative", true, ""},
		{"~/mem", false, ""},
		{"~/mem", true, "/home/u/mem"},
		{`~\mem`, true, "/home/u/mem"},
		{"~/a/../..", true, ""},
		{"~/../other", true, "/home/other"},
		{"~", true, ""},
		{"//server/share", false, "/server/share"}, // cleaned to one slash, as Node's normalize does
		{"/nul\x00", false, ""},
		{"/cafe\u0301", false, "/caf\u00e9"},
	}
	for _, tt := range tests {
		got, ok := validateMemoryPath(tt.raw, tt.expand, "/home/u")
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("validateMemoryPath(%q, %v) = %q, %v; want %q", tt.raw, tt.expand, got, ok, tt.want)
		}
	}
}
