package memdir

import (
	"path/filepath"
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
	return b
}

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
	if loc != want {
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
	name   string
	env    map[string]string
	files  map[string]string // settings file → content
	dir    string            // Options.Dir
	want   string            // MemoryDir
	source string
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

func TestResolveOverrides(t *testing.T) {
	t.Parallel()
	for i, c := range overrideCases(resolveBundle{}) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setupResolve(t) // each case writes its own settings files
			tt := overrideCases(b)[i]
			for f, content := range tt.files {
				MustWrite(t, f, content)
			}
			o := b.options(b.repo, tt.env)
			o.Dir = tt.dir
			l, err := Resolve(o)
			if err != nil {
				t.Fatal(err)
			}
			if l.MemoryDir != tt.want || l.Source != tt.source || l.TeamDir != filepath.Join(tt.want, "team") {
				t.Errorf("MemoryDir = %q (%s), want %q (%s)", l.MemoryDir, l.Source, tt.want, tt.source)
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
