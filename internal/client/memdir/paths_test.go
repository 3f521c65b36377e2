package memdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestSanitizePath(t *testing.T) {
	t.Parallel()
	long := ("/home/dev/" + strings.Repeat("very-long-directory-name/", 10))[:250]
	longSanitized := strings.ReplaceAll(long, "/", "-")
	emoji := "/home/dev/" + strings.Repeat("😀", 100) + "/x" // 212 UTF-16 units
	tests := []struct {
		name, in, want string
	}{
		{"unix path", "/Users/foo/my-project", "-Users-foo-my-project"},
		{"windows path", `C:\x`, "C--x"},
		{"fixture project dir", "/Users/chip/dev/ai-music", "-Users-chip-dev-ai-music"},
		{"dots and underscores", "/a/b.c_d e", "-a-b-c-d-e"},
		{"BMP non-ASCII is one hyphen", "/tmp/café", "-tmp-caf-"},
		{"decomposed accent is two units", "/tmp/cafe\u0301", "-tmp-cafe-"},
		{"CJK is one hyphen each", "/项目", "---"},
		{"astral (emoji) is two hyphens", "/a/😀", "-a---"},
		{"empty", "", ""},
		{"exactly 200 kept", "/" + strings.Repeat("a", 199), "-" + strings.Repeat("a", 199)},
		{"250 chars: 200 + hash", long, longSanitized[:200] + "-s0559a"},
		{"astral counted in UTF-16 units", emoji, "-home-dev-" + strings.Repeat("-", 190) + "-5z3n4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := SanitizePath(tt.in); got != tt.want {
				t.Errorf("SanitizePath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestJavaHashAbs(t *testing.T) {
	t.Parallel()
	tests := map[string]int64{
		"":      0,
		"hello": 99162322,
		// Its String.hashCode is math.MinInt32; JavaScript's Math.abs gives 2^31.
		"polygenelubricants": 2147483648,
	}
	for in, want := range tests {
		if got := javaHashAbs(utf16.Encode([]rune(in))); got != want {
			t.Errorf("javaHashAbs(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestConfigHome(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"default", nil, "/home/u/.claude"},
		{"CLAUDE_CONFIG_DIR", map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/claude"}, "/cfg/claude"},
		{"NFC", map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/cafe\u0301"}, "/cfg/caf\u00e9"},
	}
	for _, tt := range tests {
		if got := ConfigHome(env(tt.env), "/home/u"); got != tt.want {
			t.Errorf("%s: ConfigHome = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A defined but empty CLAUDE_CONFIG_DIR is used as is when reading the
// process environment (nil getenv). Not parallel: it sets the environment.
func TestConfigHomeDefinedEmpty(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	if got := ConfigHome(nil, "/home/u"); got != "" {
		t.Errorf("ConfigHome = %q, want the empty string", got)
	}
	os.Unsetenv("CLAUDE_CONFIG_DIR") // t.Setenv restores the old value after the test
	if got := ConfigHome(nil, "/home/u"); got != "/home/u/.claude" {
		t.Errorf("ConfigHome without the variable = %q", got)
	}
}

func TestProjectDir(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	projects := filepath.Join(cfg, "projects")
	long := "/srv/" + strings.Repeat("deeply/nested/", 20) + "repo"
	key := SanitizePath(long)
	bunDir := key[:MaxSanitizedLength] + "-1x2y3z4w5v" // as the Bun-built CLI would name it
	MustMkdir(t, filepath.Join(projects, bunDir))
	MustMkdir(t, filepath.Join(projects, "-short-project"))
	MustWrite(t, filepath.Join(projects, key[:MaxSanitizedLength]+"-0file"), "not a dir")

	other := "/other/" + strings.Repeat("x", 300)
	tests := []struct {
		name, key, want string
	}{
		{"short path is exact", "/short/project", filepath.Join(projects, "-short-project")},
		{"short path, missing dir, still exact", "/missing", filepath.Join(projects, "-missing")},
		{"long path found by prefix", long, filepath.Join(projects, bunDir)},
		{"sanitized key found by prefix", key, filepath.Join(projects, bunDir)},
		{"long path without a match is exact", other, filepath.Join(projects, SanitizePath(other))},
	}
	for _, tt := range tests {
		if got := ProjectDir(cfg, tt.key); got != tt.want {
			t.Errorf("%s: ProjectDir = %q, want %q", tt.name, got, tt.want)
		}
	}

	// Once the exact directory exists it wins over a prefix match.
	MustMkdir(t, filepath.Join(projects, key))
	if got := ProjectDir(cfg, long); got != filepath.Join(projects, key) {
		t.Errorf("exact dir not preferred: %q", got)
	}
}

// MustMkdir creates a directory and its parents.
func MustMkdir(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
}

// MustWrite writes a file, creating its parents.
func MustWrite(tb testing.TB, path, content string) {
	tb.Helper()
	MustMkdir(tb, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// MustSymlink creates link pointing at target.
func MustSymlink(tb testing.TB, target, link string) {
	tb.Helper()
	MustMkdir(tb, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		tb.Fatal(err)
	}
}
