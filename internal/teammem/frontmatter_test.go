package teammem

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/fixtures"
)

// testdataMemdir is the repository's own memory directory: an index mixing prose sections
// with links, some dangling, one file linked twice and one by [[wiki-link]], and topic files
// of all four types in the top-level and the nested "metadata:" frontmatter forms, with
// quoted descriptions, one description that needs the YAML repair, and wiki links between
// topics.
var testdataMemdir = filepath.Join("testdata", "memory")

// mustFixtureMemdir returns the real-world memory directory, skipping the test when the
// fixtures are absent (see internal/testing/fixtures).
func mustFixtureMemdir(tb testing.TB) string {
	tb.Helper()
	return fixtures.Path(tb, "memdirs", "4444J99__application-pipeline", ".claude", "memory")
}

// mustTopicFiles reads every file of the memory directory dir, MEMORY.md included.
func mustTopicFiles(tb testing.TB, dir string) []TopicFile {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(names) == 0 {
		tb.Fatalf("no files in %s", dir)
	}
	var out []TopicFile
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, TopicFile{Key: filepath.Base(n), Content: string(b)})
	}
	return out
}

func TestMemoryTypeValid(t *testing.T) {
	for _, typ := range []MemoryType{"user", "feedback", "project", "reference"} {
		if !typ.Valid() {
			t.Errorf("%q not valid", typ)
		}
	}
	for _, typ := range []MemoryType{"", "User", "FEEDBACK", "other", " user", "references"} {
		if typ.Valid() {
			t.Errorf("%q valid", typ)
		}
	}
}

func TestParseFrontmatter(t *testing.T) {
	cases := []struct {
		name, text                string
		ok, repaired, err         bool
		fmName, description, body string
		typ                       MemoryType
	}{
		{name: "top-level form",
			text: "---\nname: Fix bases\ndescription: Fix the base, never the output\ntype: feedback\n---\n\nBody **Why:** x\n",
			ok:   true, fmName: "Fix bases", description: "Fix the base, never the output", typ: MemoryFeedback, body: "Body **Why:** x\n"},
		{name: "nested metadata form with extra keys",
			text: "---\nname: Handoff\ndescription: \"Write a handoff: always\"\nmetadata:\n  type: feedback\n  node_type: memory\n  originSessionId: 0a1b2c3d-4e5f\n  modified: 2026-03-20\n---\nSee [[feedback_other]].\n",
			ok:   true, fmName: "Handoff", description: "Write a handoff: always", typ: MemoryFeedback, body: "See [[feedback_other]].\n"},
		{name: "name and description only nested",
			text: "---\nmetadata:\n  name: N\n  description: D\n  type: reference\n---\nb",
			ok:   true, fmName: "N", description: "D", typ: MemoryReference, body: "b"},
		{name: "top-level type wins even when invalid",
			text: "---\ntype: Feedback\nmetadata:\n  type: feedback\n---\n",
			ok:   true},
		{name: "single-quoted description",
			text: "---\ndescription: 'a # b: c'\ntype: user\n---\n",
			ok:   true, description: "a # b: c", typ: MemoryUser},
		{name: "repaired: colon-space and wiki link",
			text: "---\nname: Loops\ndescription: Energy in → output: see [[loops]] & more\ntype: project\n---\nbody",
			ok:   true, repaired: true, fmName: "Loops", description: "Energy in → output: see [[loops]] & more", typ: MemoryProject, body: "body"},
		{name: "repaired: leading @ and backslash",
			text: "---\ndescription: @home \\ \"x\"\n---\n",
			ok:   true, repaired: true, description: `@home \ "x"`},
		{name: "not repairable",
			text: "---\nname: \"unterminated\ntype: user\n---\nbody",
			ok:   true, err: true, body: "body"},
		{name: "not a mapping",
			text: "---\n- user\n- feedback\n---\nbody",
			ok:   true, err: true, body: "body"},
		{name: "empty block",
			text: "---\n---\nbody", ok: true, body: "body"},
		{name: "invalid type ignored, file still used",
			text: "---\nname: n\ntype: note\n---\nb", ok: true, fmName: "n", body: "b"},
		{name: "empty and null description are absent",
			text: "---\ndescription: \"\"\nname: ~\n---\n", ok: true},
		{name: "non-string scalars are text",
			text: "---\nname: 42\ndescription: 2026-03-15\ntype: true\n---\n", ok: true, fmName: "42", description: "2026-03-15"},
		{name: "CRLF",
			text: "---\r\nname: a\r\ntype: user\r\n---\r\nbody\r\n", ok: true, fmName: "a", typ: MemoryUser, body: "body\r\n"},
		{name: "unicode whitespace after the fence",
			text: "---\u00a0\u3000\nname: a\n---\u2003\nbody", ok: true, fmName: "a", body: "body"},
		{name: "closing fence mid-line ends the block",
			text: "---\nname: a---b\n---\n", ok: true, fmName: "a", body: "b\n---\n"},
		{name: "no closing fence",
			text: "---\nname: a\ntype: user\n", body: "---\nname: a\ntype: user\n"},
		{name: "not at byte 0",
			text: "\n---\nname: a\n---\n", body: "\n---\nname: a\n---\n"},
		{name: "BOM before the fence",
			text: "\uFEFF---\nname: a\n---\n", body: "\uFEFF---\nname: a\n---\n"},
		{name: "four dashes",
			text: "----\nname: a\n---\n", body: "----\nname: a\n---\n"},
		{name: "no frontmatter", text: "# Title\n", body: "# Title\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fm, body, ok := ParseFrontmatter(c.text)
			if ok != c.ok || body != c.body {
				t.Fatalf("ok, body = %v, %q; want %v, %q", ok, body, c.ok, c.body)
			}
			if fm.Name != c.fmName || fm.Description != c.description || fm.Type != c.typ {
				t.Errorf("fields = %q, %q, %q; want %q, %q, %q", fm.Name, fm.Description, fm.Type, c.fmName, c.description, c.typ)
			}
			if fm.Repaired != c.repaired || (fm.Err != nil) != c.err {
				t.Errorf("repaired, err = %v, %v; want %v, err %v", fm.Repaired, fm.Err, c.repaired, c.err)
			}
		})
	}
}

func TestQuoteProblematicLines(t *testing.T) {
	cases := map[string]string{
		`description: say "hi" [x] \ back`: `description: "say \"hi\" [x] \\ back"`,
		"name: a: b":                       `name: "a: b"`,
		"name: 100%":                       `name: "100%"`,
		"name: plain text":                 "name: plain text",
		"name: 'a: b'":                     "name: 'a: b'",
		`name: "a: b"`:                     `name: "a: b"`,
		"  nested: a: b":                   "  nested: a: b", // indented: not a simple line
		"key.with.dots: a: b":              "key.with.dots: a: b",
		"name: a: b\r":                     "name: a: b\r", // JavaScript's "." stops at \r
		"name:a: b":                        "name:a: b",    // no space after the key
	}
	for in, want := range cases {
		if got := quoteProblematicLines(in); got != want {
			t.Errorf("quoteProblematicLines(%q) = %q; want %q", in, got, want)
		}
	}
	got := quoteProblematicLines("name: x\ndescription: [a]\n")
	if want := "name: x\ndescription: \"[a]\"\n"; got != want {
		t.Errorf("multi-line: %q; want %q", got, want)
	}
}

func TestHeaderLines(t *testing.T) {
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, fmt.Sprint("l", i))
	}
	if got, want := HeaderLines(strings.Join(lines, "\n")), strings.Join(lines[:30], "\n"); got != want {
		t.Errorf("cut: %q; want %q", got, want)
	}
	if got := HeaderLines("\uFEFF---\r\ntype: user\r\n---\r\n"); got != "---\ntype: user\n---\n" {
		t.Errorf("BOM and CR: %q", got)
	}
	// The scan reads 30 lines, so a fence closing on line 31 is no frontmatter.
	front := func(closeAt int) string {
		l := []string{"---", "type: user"}
		for len(l) < closeAt-1 {
			l = append(l, "# filler")
		}
		return strings.Join(append(l, "---", "body"), "\n")
	}
	if h := ParseHeader("a.md", time.Time{}, front(30)); h.Type != MemoryUser {
		t.Errorf("closing fence on line 30: type %q", h.Type)
	}
	if h := ParseHeader("a.md", time.Time{}, front(31)); h.Type != "" {
		t.Errorf("closing fence on line 31: type %q", h.Type)
	}
}

func TestIsTopicFile(t *testing.T) {
	for rel, want := range map[string]bool{
		"user_role.md": true, "team/a.md": true, "MEMORY.md": false, "team/MEMORY.md": false,
		"notes.txt": false, "a.MD": false, "memory.md": true,
	} {
		if IsTopicFile(rel) != want {
			t.Errorf("IsTopicFile(%q) = %v", rel, !want)
		}
	}
}

func TestFormatManifest(t *testing.T) {
	at := time.Date(2026, 3, 15, 10, 0, 0, 123_999_999, time.FixedZone("CET", 3600))
	got := FormatManifest([]MemoryHeader{
		{Filename: "feedback_testing.md", Mtime: at, Description: "Run the tests", Type: MemoryFeedback},
		{Filename: "team/notes.md", Mtime: at},
		{Filename: "b.md", Mtime: at, Type: MemoryUser},
	})
	want := "- [feedback] feedback_testing.md (2026-03-15T09:00:00.123Z): Run the tests\n" +
		"- team/notes.md (2026-03-15T09:00:00.123Z)\n" +
		"- [user] b.md (2026-03-15T09:00:00.123Z)"
	if got != want {
		t.Errorf("FormatManifest:\n%s\nwant\n%s", got, want)
	}
	if FormatManifest(nil) != "" {
		t.Error("empty manifest not empty")
	}
}

func TestRecentHeaders(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var in []MemoryHeader
	for i := range 250 {
		in = append(in, MemoryHeader{Filename: fmt.Sprintf("f%03d.md", i), Mtime: base.Add(time.Duration(i%125) * time.Minute)})
	}
	got := RecentHeaders(in)
	if len(got) != MaxMemoryFiles {
		t.Fatalf("len = %d", len(got))
	}
	// Newest first; equal mtimes keep input order (f124 before f249).
	if got[0].Filename != "f124.md" || got[1].Filename != "f249.md" || got[2].Filename != "f123.md" {
		t.Errorf("order starts %s %s %s", got[0].Filename, got[1].Filename, got[2].Filename)
	}
	if in[0].Filename != "f000.md" {
		t.Error("input modified")
	}
}

// topicWant is what the topic files of a memory directory parse to.
type topicWant struct {
	counts   map[MemoryType]int
	repaired string // the one file whose frontmatter needs the YAML repair
	nested   int    // files with the type nested under metadata:
	// manifest is a line FormatManifest must render for the files at mtime 0.
	manifest string
}

func TestTestdataTopicFiles(t *testing.T) {
	checkTopicFiles(t, mustTopicFiles(t, testdataMemdir), topicWant{
		counts:   map[MemoryType]int{MemoryFeedback: 4, MemoryProject: 3, MemoryReference: 1, MemoryUser: 1},
		repaired: "feedback_fix_the_generator.md", // "not its output: files" in an unquoted description
		nested:   2,
		manifest: "- [user] user_role.md (1970-01-01T00:00:00.000Z): Backend developer, six years of Go, first month on the billing service",
	})
}

// TestFixtureTopicFiles parses every topic file of the real memory dir the
// way the scan does.
func TestFixtureTopicFiles(t *testing.T) {
	checkTopicFiles(t, mustTopicFiles(t, mustFixtureMemdir(t)), topicWant{
		counts:   map[MemoryType]int{MemoryFeedback: 18, MemoryProject: 9, MemoryReference: 1, MemoryUser: 1},
		repaired: "feedback_cover_letter_quality.md", // "standards: NYC" in an unquoted description
		manifest: "- [user] user_engineering_timeline.md (1970-01-01T00:00:00.000Z): User's first website built 2011",
	})
}

// checkTopicFiles parses the topic files among files: each has a name, a description, a
// body and the type its file name starts with, and its header agrees with its frontmatter.
func checkTopicFiles(t *testing.T, files []TopicFile, want topicWant) {
	t.Helper()
	counts := map[MemoryType]int{}
	nested := 0
	var headers []MemoryHeader
	for _, tf := range files {
		if !IsTopicFile(tf.Key) {
			continue
		}
		fm, body, ok := ParseFrontmatter(tf.Content)
		if !ok || fm.Err != nil || fm.Name == "" || fm.Description == "" || body == "" {
			t.Errorf("%s: ok %v err %v name %q description %q", tf.Key, ok, fm.Err, fm.Name, fm.Description)
		}
		if fm.Repaired != (tf.Key == want.repaired) {
			t.Errorf("%s: repaired %v", tf.Key, fm.Repaired)
		}
		if !strings.HasPrefix(tf.Key, string(fm.Type)+"_") {
			t.Errorf("%s: type %q does not match the file name", tf.Key, fm.Type)
		}
		if _, top := fm.Raw["type"]; !top {
			nested++
		}
		h := ParseHeader(tf.Key, time.UnixMilli(0), tf.Content)
		if h.Type != fm.Type || h.Description != fm.Description {
			t.Errorf("%s: header %+v disagrees with frontmatter", tf.Key, h)
		}
		counts[fm.Type]++
		headers = append(headers, h)
	}
	if fmt.Sprint(counts) != fmt.Sprint(want.counts) || nested != want.nested {
		t.Errorf("types = %v, %d nested; want %v, %d", counts, nested, want.counts, want.nested)
	}
	manifest := FormatManifest(headers)
	if !strings.Contains(manifest, "\n"+want.manifest) {
		t.Errorf("manifest lacks %q:\n%s", want.manifest, manifest)
	}
}

// FuzzParseFrontmatter checks ParseFrontmatter never panics and keeps its
// split consistent.
func FuzzParseFrontmatter(f *testing.F) {
	for _, s := range []string{
		"", "---\n---\n", "---\nname: a\ntype: user\n---\nbody",
		"---\ndescription: a: b [[c]]\n---\n", "---\n- x\n---\n", "---\na: &x [*x, *x]\n---\n",
		"---\nmetadata:\n  type: project\n---\n", "---\r\nname: \"x\r\n---\r\n", "---\n\xff: \xfe\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fm, body, ok := ParseFrontmatter(text)
		if !ok && (body != text || fm.Raw != nil || fm.Name != "") {
			t.Fatalf("no frontmatter but body %q fm %+v", body, fm)
		}
		if ok && (!strings.HasPrefix(text, "---") || !strings.HasSuffix(text, body)) {
			t.Fatalf("body %q is not a suffix of %q", body, text)
		}
		if fm.Type != "" && !fm.Type.Valid() {
			t.Fatalf("type %q", fm.Type)
		}
		if fm.Err != nil && fm.Raw != nil {
			t.Fatal("both Err and Raw")
		}
	})
}
