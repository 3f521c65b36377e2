package teammem

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormatFileSize(t *testing.T) {
	cases := map[int]string{
		0:                 "0 bytes",
		1023:              "1023 bytes",
		1024:              "1KB",
		1280:              "1.3KB", // 1.25: toFixed rounds the tie up, Go's %.1f would not
		1536:              "1.5KB",
		25000:             "24.4KB",
		29999:             "29.3KB",
		1<<20 - 1:         "1024KB", // rounds to 1024.0 but stays in KB, as in the client
		1 << 20:           "1MB",
		1310720:           "1.3MB",
		1<<30 + 1<<29:     "1.5GB",
		5 * (1 << 30) / 4: "1.3GB",
	}
	for n, want := range cases {
		if got := FormatFileSize(n); got != want {
			t.Errorf("FormatFileSize(%d) = %q; want %q", n, got, want)
		}
	}
}

// warning is the text TruncateIndex appends for reason.
func warning(reason string) string {
	return "\n\n> WARNING: MEMORY.md is " + reason + ". " + indexAdvice
}

// numbered returns n lines "line000", "line001", …, each padded with "x"
// to width characters, joined by "\n".
func numbered(n, width int) string {
	lines := make([]string, n)
	for i := range lines {
		l := fmt.Sprintf("line%03d", i)
		lines[i] = l + strings.Repeat("x", width-len(l))
	}
	return strings.Join(lines, "\n")
}

func TestTruncateIndex(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	emoji := func(n int) string { return strings.Repeat("😀", n) }
	cases := []struct {
		name, raw, content string
		lines, units       int
		lt, bt             bool
	}{
		{name: "empty", raw: "", content: "", lines: 1},
		{name: "JavaScript trim incl. BOM, NBSP, ideographic space",
			raw: "\uFEFF \u00a0\u3000\t\n# Memory\n- [a](a.md)\n\u2028\r\n", content: "# Memory\n- [a](a.md)", lines: 2, units: 20},
		{name: "NEL is not JavaScript whitespace",
			raw: "\u0085x\u0085", content: "\u0085x\u0085", lines: 1, units: 3},
		{name: "CRLF: split on \\n only, \\r counted",
			raw: "a\r\nb\r\n", content: "a\r\nb", lines: 2, units: 4},
		{name: "exactly 200 lines", raw: numbered(200, 9), content: numbered(200, 9), lines: 200, units: 1999},
		{name: "201 lines",
			raw: numbered(201, 9), content: numbered(200, 9) + warning("201 lines (limit: 200)"), lines: 201, units: 2009, lt: true},
		{name: "exactly 25000 units", raw: a(25000), content: a(25000), lines: 1, units: 25000},
		{name: "25001 units, no newline: cut at 25000",
			raw: a(25001), content: a(25000) + warning("24.4KB (limit: 24.4KB) — index entries are too long"), lines: 1, units: 25001, bt: true},
		{name: "bytes only: cut at the last newline within the limit",
			raw: numbered(10, 2999), content: numbered(8, 2999) + warning("29.3KB (limit: 24.4KB) — index entries are too long"),
			lines: 10, units: 29999, bt: true},
		{name: "newline exactly at index 25000 is used",
			raw: a(25000) + "\n" + a(10), content: a(25000) + warning("24.4KB (limit: 24.4KB) — index entries are too long"),
			lines: 2, units: 25011, bt: true},
		{name: "astral characters count 2 units",
			raw: emoji(12500), content: emoji(12500), lines: 1, units: 25000},
		{name: "astral: cut lands on a pair boundary",
			raw: emoji(12501), content: emoji(12500) + warning("24.4KB (limit: 24.4KB) — index entries are too long"), lines: 1, units: 25002, bt: true},
		{name: "astral: a pair straddling the cut is dropped whole",
			raw: "a" + emoji(12500), content: "a" + emoji(12499) + warning("24.4KB (limit: 24.4KB) — index entries are too long"),
			lines: 1, units: 25001, bt: true},
		{name: "both limits, lines cut suffices",
			raw: numbered(300, 100), content: numbered(200, 100) + warning("300 lines and 29.6KB"), lines: 300, units: 30299, lt: true, bt: true},
		{name: "both limits, then a byte cut",
			raw: numbered(250, 200), content: numbered(124, 200) + warning("250 lines and 49.1KB"), lines: 250, units: 50249, lt: true, bt: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := TruncateIndex(c.raw)
			if tr.LineCount != c.lines || tr.LinesTruncated != c.lt || tr.BytesTruncated != c.bt {
				t.Errorf("lines %d lt %v bt %v; want %d %v %v", tr.LineCount, tr.LinesTruncated, tr.BytesTruncated, c.lines, c.lt, c.bt)
			}
			if tr.ByteCount != c.units {
				t.Errorf("units %d; want %d", tr.ByteCount, c.units)
			}
			if tr.Content != c.content {
				t.Errorf("content (%d bytes) ends %q; want (%d bytes) ending %q",
					len(tr.Content), tail(tr.Content), len(c.content), tail(c.content))
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 60 {
		return s[len(s)-60:]
	}
	return s
}

func TestTruncateIndexTestdata(t *testing.T) {
	// 1 373 UTF-8 bytes are 1 347 UTF-16 units once trimmed (the em and en dashes and the
	// arrow are three bytes, one unit).
	checkTruncateIndex(t, testdataMemdir, 28, 1347)
}

func TestTruncateIndexFixture(t *testing.T) {
	// 14 669 UTF-8 bytes are 14 483 UTF-16 units; trimming drops the final "\n".
	checkTruncateIndex(t, mustFixtureMemdir(t), 116, 14482)
}

// checkTruncateIndex checks that the MEMORY.md of dir, of lines lines and units UTF-16 units
// once trimmed, is within the limits and kept whole.
func checkTruncateIndex(t *testing.T, dir string, lines, units int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	tr := TruncateIndex(string(raw))
	if tr.LineCount != lines || tr.ByteCount != units || tr.Truncated() {
		t.Errorf("got lines %d units %d truncated %v; want %d, %d, false", tr.LineCount, tr.ByteCount, tr.Truncated(), lines, units)
	}
	if tr.Content != strings.TrimSuffix(string(raw), "\n") {
		t.Error("content changed")
	}
}

// FuzzTruncateIndex checks TruncateIndex never panics, keeps UTF-8 valid and
// keeps a prefix of the trimmed input within both limits. The input is
// head + unit×reps so that small fuzz values reach the limits.
func FuzzTruncateIndex(f *testing.F) {
	f.Add("", "", uint16(0))
	f.Add(" \uFEFF# x\n", "- [a](a.md)\n", uint16(3))
	f.Add("", "😀", uint16(12501))
	f.Add("a", "😀", uint16(12500))
	f.Add("", "line\n", uint16(250))
	f.Add("\xff", "abc\xfe\n", uint16(7000))
	f.Fuzz(func(t *testing.T, head, unit string, reps uint16) {
		if len(unit)*int(reps) > 200_000 {
			t.Skip("input over 200 KB: too slow to fuzz")
		}
		raw := head + strings.Repeat(unit, int(reps))
		tr := TruncateIndex(raw)
		if !utf8.ValidString(tr.Content) {
			t.Fatal("invalid UTF-8")
		}
		trimmed := trimJS(strings.ToValidUTF8(raw, "\uFFFD"))
		if !tr.Truncated() {
			if tr.Content != trimmed {
				t.Fatal("untruncated content differs from the trimmed input")
			}
			return
		}
		body, w, found := strings.Cut(tr.Content, "\n\n> WARNING: MEMORY.md is ")
		if !found || !strings.HasSuffix(w, indexAdvice) || !strings.HasPrefix(trimmed, body) {
			t.Fatalf("not a prefix plus warning: %q", tail(tr.Content))
		}
		if utf16Len(body) > MaxIndexBytes || strings.Count(body, "\n") >= MaxIndexLines {
			t.Fatalf("kept %d units, %d lines", utf16Len(body), strings.Count(body, "\n")+1)
		}
		if len(tr.Content) > len(trimmed)+len("\n\n> WARNING: MEMORY.md is ")+len(w) {
			t.Fatal("longer than input plus warning")
		}
	})
}

func TestRenderIndex(t *testing.T) {
	topics := []TopicFile{
		{Key: "z_note.md", Content: "no frontmatter"},
		{Key: "feedback_b.md", Content: "---\nname: B rule\ndescription: Do b.\ntype: feedback\n---\n"},
		{Key: "feedback_a.md", Content: "---\nname: \"A [x] rule\"\ndescription: |\n  Do a,\n  then more.\ntype: feedback\n---\n"},
		{Key: "user_role.md", Content: "---\nname: Role\ntype: user\n---\n"},
		{Key: "team/notes (old).md", Content: "---\nmetadata:\n  type: project\n  name: Old # 1\n---\n"},
		{Key: "ref.md", Content: "---\nname: Ref\ndescription: " + strings.Repeat("word ", 60) + "\ntype: reference\n---\n"},
		{Key: "MEMORY.md", Content: "# index"},
		{Key: "team/MEMORY.md", Content: "# index"},
		{Key: "data.json", Content: "{}"},
	}
	want := "## User\n" +
		"- [Role](user_role.md)\n" +
		"\n## Feedback\n" +
		"- [A \\[x\\] rule](feedback_a.md) — Do a, then more.\n" +
		"- [B rule](feedback_b.md) — Do b.\n" +
		"\n## Project\n" +
		"- [Old](team/notes%20%28old%29.md)\n" +
		"\n## Reference\n" +
		"- [Ref](ref.md) — " + strings.TrimSpace(strings.Repeat("word ", 26)) + "…\n" +
		"\n## Other\n" +
		"- [z_note](z_note.md)\n"
	got := RenderIndex(topics)
	if got != want {
		t.Errorf("RenderIndex:\n%s\nwant\n%s", got, want)
	}
	slices.Reverse(topics)
	if RenderIndex(topics) != got {
		t.Error("output depends on input order")
	}
	for _, l := range strings.Split(got, "\n") {
		if utf16Len(l) >= MaxIndexLineChars {
			t.Errorf("line of %d units: %s", utf16Len(l), l)
		}
	}
	if RenderIndex(nil) != "" {
		t.Error("empty input rendered something")
	}
}

func TestRenderIndexClipsLongNames(t *testing.T) {
	name := strings.Repeat("名", 100) + strings.Repeat("😀", 20)
	got := RenderIndex([]TopicFile{{Key: "k.md", Content: "---\nname: " + name + "\ndescription: d\n---\n"}})
	line := strings.Split(got, "\n")[1]
	if n := utf16Len(line); n != MaxIndexLineChars-1 || !strings.HasSuffix(line, "…](k.md)") {
		t.Errorf("line of %d units: %s", n, line)
	}
}

// renderWant is what RenderIndex makes of a memory directory's topic files.
type renderWant struct {
	entries              map[string]int // entries per section
	firstFeedback, users string         // the first Feedback line and the User line
}

func TestRenderIndexTestdata(t *testing.T) {
	checkRenderIndex(t, mustTopicFiles(t, testdataMemdir), renderWant{
		entries: map[string]int{"User": 1, "Feedback": 4, "Project": 3, "Reference": 1},
		// The description is clipped to the line's 150 units at a word boundary.
		firstFeedback: "- [Fix the generator](feedback_fix_the_generator.md) — Fix the generator, not its output: files under gen/ are overwritten by go generate on every…",
		users:         "- [Role and background](user_role.md) — Backend developer, six years of Go, first month on the billing service",
	})
}

func TestRenderIndexFixture(t *testing.T) {
	checkRenderIndex(t, mustTopicFiles(t, mustFixtureMemdir(t)), renderWant{
		entries:       map[string]int{"User": 1, "Feedback": 18, "Project": 9, "Reference": 1},
		firstFeedback: "- [Additive design, never reductive](feedback_additive_design.md) — Each user prompt adds complexity to the design — never simplify, reduce, or…",
		users:         "- [Engineering experience timeline — 15 years](user_engineering_timeline.md) — User's first website built 2011 in collaboration with…",
	})
}

// checkRenderIndex renders an index of topics: sections in type order, entries within the
// line limit, every topic file linked exactly once, nothing truncated.
func checkRenderIndex(t *testing.T, topics []TopicFile, want renderWant) {
	t.Helper()
	got := RenderIndex(topics)
	var sections []string
	entries := map[string][]string{}
	section := ""
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			section = l[3:]
			sections = append(sections, section)
		case strings.HasPrefix(l, "- ["):
			entries[section] = append(entries[section], l)
		case l != "":
			t.Errorf("unexpected line %q", l)
		}
		if utf16Len(l) >= MaxIndexLineChars {
			t.Errorf("line of %d units: %s", utf16Len(l), l)
		}
	}
	if want := []string{"User", "Feedback", "Project", "Reference"}; !slices.Equal(sections, want) {
		t.Errorf("sections %v; want %v", sections, want)
	}
	for s, n := range want.entries {
		if len(entries[s]) != n {
			t.Errorf("%s: %d entries; want %d", s, len(entries[s]), n)
		}
	}
	if len(entries["Feedback"]) == 0 || entries["Feedback"][0] != want.firstFeedback {
		t.Errorf("first feedback line\n%v\nwant\n%s", entries["Feedback"], want.firstFeedback)
	}
	if len(entries["User"]) == 0 || entries["User"][0] != want.users {
		t.Errorf("user line\n%v\nwant\n%s", entries["User"], want.users)
	}
	// Every topic file is linked exactly once, in key order within groups.
	var keys []string
	for _, l := range IndexLinks(got) {
		keys = append(keys, l.Target)
	}
	var wantKeys []string
	for _, tf := range topics {
		if IsTopicFile(tf.Key) {
			wantKeys = append(wantKeys, tf.Key)
		}
	}
	slices.Sort(wantKeys)
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	if !slices.Equal(sorted, wantKeys) {
		t.Errorf("links %v; want %v", keys, wantKeys)
	}
	if tr := TruncateIndex(got); tr.Truncated() {
		t.Errorf("rendered index truncated: %+v", tr)
	}
}

func TestIndexLinks(t *testing.T) {
	index := strings.Join([]string{
		"# Index", // 1
		"- [A](a.md) — see [B](./sub/b.md#part \"title\")",     // 2
		"- [Web](https://example.com/x.md) [Mail](mailto:x@y)", // 3
		"- [Anchor](#top) [Abs](/etc/x.md) [Home](~/x.md)",     // 4
		"- `[code](code.md)` and ``[x](`y`.md)``",              // 5
		"```",                 // 6
		"[fenced](fenced.md)", // 7
		"```",                 // 8
		"- ![img](pic.png) [spaced](<my notes.md>)",          // 9
		"- [enc](my%20notes.md?x=1) [esc](a\\(1\\).md)",      // 10
		"- [[feedback_x]] [[team/y#Heading|Y alias]] ![[z]]", // 11
		"- [[w]](not-a-link.md) [unclosed](u.md",             // 12
		"- [[ ]] [empty]() [dir](./)",                        // 13
	}, "\n")
	want := []IndexLink{
		{Target: "a.md", Text: "A", Line: 2},
		{Target: "sub/b.md", Text: "B", Line: 2},
		{Target: "my notes.md", Text: "spaced", Line: 9},
		{Target: "my notes.md", Text: "enc", Line: 10},
		{Target: "a(1).md", Text: "esc", Line: 10},
		{Target: "feedback_x", Line: 11, Wiki: true},
		{Target: "team/y", Text: "Y alias", Line: 11, Wiki: true},
		{Target: "z", Line: 11, Wiki: true},
		{Target: "w", Line: 12, Wiki: true},
	}
	if got := IndexLinks(index); !slices.Equal(got, want) {
		t.Errorf("IndexLinks:\n%+v\nwant\n%+v", got, want)
	}
}

func TestIndexLinksRoundTrip(t *testing.T) {
	keys := []string{"a b.md", "x(1).md", "p%20q.md", "h#i?.md", "dir/ü.md", `back\slash.md`}
	var topics []TopicFile
	for _, k := range keys {
		topics = append(topics, TopicFile{Key: k})
	}
	var got []string
	for _, l := range IndexLinks(RenderIndex(topics)) {
		got = append(got, l.Target)
	}
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Errorf("round trip %q; want %q", got, keys)
	}
}

// linksWant is what IndexLinks finds in a MEMORY.md.
type linksWant struct {
	links, wiki, unique, missing int
	first                        IndexLink
}

func TestIndexLinksTestdata(t *testing.T) {
	// 13 links, one of them [[feedback_small_prs]], to 11 files: the release note is linked
	// twice (once with a fragment) and the small-PRs note also by wiki link. 3 files are
	// missing on purpose; the status page URL and the link in a code span do not count.
	checkIndexLinks(t, testdataMemdir, linksWant{links: 13, wiki: 1, unique: 11, missing: 3,
		first: IndexLink{Target: "user_role.md", Text: "Role and background", Line: 7}})
}

func TestIndexLinksFixture(t *testing.T) {
	// 55 links to 54 files (the freshness gate is linked twice); 25 of those
	// files were left out of the fixture on purpose.
	checkIndexLinks(t, mustFixtureMemdir(t), linksWant{links: 55, unique: 54, missing: 25,
		first: IndexLink{Target: "user_engineering_timeline.md", Text: "Engineering timeline", Line: 4}})
}

// checkIndexLinks reads the links of dir's MEMORY.md, resolving wiki links to .md files the
// way the lint does, and counts those whose file is missing.
func checkIndexLinks(t *testing.T, dir string, want linksWant) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	if err != nil {
		t.Fatal(err)
	}
	links := IndexLinks(string(raw))
	unique := map[string]bool{}
	missing := map[string]bool{}
	wiki := 0
	for _, l := range links {
		target := l.Target
		if l.Wiki {
			wiki++
			target += ".md"
		}
		if !strings.HasSuffix(target, ".md") {
			t.Errorf("unexpected link %+v", l)
		}
		unique[target] = true
		if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
			missing[target] = true
		}
	}
	if len(links) != want.links || wiki != want.wiki || len(unique) != want.unique || len(missing) != want.missing {
		t.Errorf("links %d (%d wiki), unique %d, missing %d; want %d (%d), %d, %d",
			len(links), wiki, len(unique), len(missing), want.links, want.wiki, want.unique, want.missing)
	}
	if len(links) == 0 || links[0] != want.first {
		t.Errorf("links %+v, want the first %+v", links, want.first)
	}
}
