package teammem

import (
	"cmp"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// MEMORY.md limits (reference §2.5, design §6).
const (
	// IndexName is the base name of a memory directory's index file.
	IndexName = "MEMORY.md"
	// MaxIndexLines is how many lines of MEMORY.md the client loads.
	MaxIndexLines = 200
	// MaxIndexBytes caps the loaded MEMORY.md. Despite the name it counts
	// UTF-16 code units (JavaScript string length), not UTF-8 bytes.
	MaxIndexBytes = 25000
	// MaxIndexLineChars is the length, in UTF-16 code units, every line of a
	// rendered index stays under.
	MaxIndexLineChars = 150
)

// Truncation is the MEMORY.md text the client would load and what was cut.
// LineCount and ByteCount describe the trimmed input, ByteCount in UTF-16
// code units; the flags say which limit the input exceeded.
type Truncation struct {
	Content        string
	LineCount      int
	ByteCount      int
	LinesTruncated bool
	BytesTruncated bool
}

// Truncated reports whether any limit was hit.
func (t Truncation) Truncated() bool { return t.LinesTruncated || t.BytesTruncated }

// indexAdvice follows the warning's reason; the wording is teammem's own.
const indexAdvice = "Only the beginning of the file was loaded, so keep each index entry to a single line " +
	"of under about 200 characters and move the details into topic files."

// TruncateIndex applies the client's MEMORY.md limits (reference §2.5): trim
// with JavaScript semantics, keep the first MaxIndexLines lines, then cut at
// the last newline within MaxIndexBytes UTF-16 units (or at that length when
// there is none, never inside a surrogate pair), then append a warning
// naming the limit. Text within both limits is returned trimmed and without
// warning. Invalid UTF-8 is first replaced with U+FFFD, as a decoder would.
func TruncateIndex(raw string) Truncation {
	t := trimJS(strings.ToValidUTF8(raw, "\uFFFD"))
	tr := Truncation{
		Content:   t,
		LineCount: strings.Count(t, "\n") + 1,
		ByteCount: utf16Len(t),
	}
	tr.LinesTruncated = tr.LineCount > MaxIndexLines
	tr.BytesTruncated = tr.ByteCount > MaxIndexBytes
	if !tr.Truncated() {
		return tr
	}
	out := t
	if tr.LinesTruncated {
		out = firstLines(t, MaxIndexLines)
	}
	if utf16Len(out) > MaxIndexBytes {
		out = out[:indexCut(out, MaxIndexBytes)]
	}
	tr.Content = out + "\n\n> WARNING: " + IndexName + " is " + tr.reason() + ". " + indexAdvice
	return tr
}

// reason words the limit that was hit, exactly as the client does.
func (t Truncation) reason() string {
	switch {
	case t.LinesTruncated && t.BytesTruncated:
		return fmt.Sprintf("%d lines and %s", t.LineCount, FormatFileSize(t.ByteCount))
	case t.LinesTruncated:
		return fmt.Sprintf("%d lines (limit: %d)", t.LineCount, MaxIndexLines)
	}
	return fmt.Sprintf("%s (limit: %s) — index entries are too long",
		FormatFileSize(t.ByteCount), FormatFileSize(MaxIndexBytes))
}

// firstLines returns the first n "\n"-separated lines of s, joined.
func firstLines(s string, n int) string {
	at := 0
	for range n {
		i := strings.IndexByte(s[at:], '\n')
		if i < 0 {
			return s
		}
		at += i + 1
	}
	return s[:at-1]
}

// indexCut returns the byte offset to cut s at: the last "\n" starting at a
// UTF-16 index ≤ limit (JavaScript lastIndexOf("\n", limit)) when it is past
// the start, otherwise the longest prefix of at most limit units that ends
// on a rune boundary.
func indexCut(s string, limit int) int {
	units, lastNL, fits := 0, -1, 0
	for i, r := range s {
		if units > limit {
			break
		}
		if r == '\n' {
			lastNL = i
		}
		units += runeUnits(r)
		if units <= limit {
			fits = i + utf8.RuneLen(r)
		}
	}
	if lastNL > 0 {
		return lastNL
	}
	return fits
}

// FormatFileSize renders a size the way the client's formatFileSize does:
// "N bytes" below 1024, else KB, MB or GB with one decimal (rounded half up,
// like JavaScript's toFixed) and a trailing ".0" dropped: 25000 → "24.4KB".
func FormatFileSize(n int) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	unit, div := "KB", 1<<10
	if n >= 1<<20 {
		unit, div = "MB", 1<<20
	}
	if n >= 1<<30 {
		unit, div = "GB", 1<<30
	}
	// n/div is exact in a float64, so toFixed(1) is half-up rounding of
	// the exact quotient; integers avoid Go's half-to-even.
	q, r, d := int64(n/div), int64(n%div), int64(div)
	tenths := q*10 + (20*r+d)/(2*d)
	if tenths%10 == 0 {
		return fmt.Sprintf("%d%s", tenths/10, unit)
	}
	return fmt.Sprintf("%d.%d%s", tenths/10, tenths%10, unit)
}

// isJSSpace reports whether r is whitespace to JavaScript's trim and \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// trimJS is JavaScript's String.prototype.trim.
func trimJS(s string) string { return strings.TrimFunc(s, isJSSpace) }

// runeUnits is the number of UTF-16 code units r encodes to.
func runeUnits(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// utf16Len is JavaScript's string length of s.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += runeUnits(r)
	}
	return n
}

// TopicFile is one memory file of a space, as input to RenderIndex.
type TopicFile struct {
	Key     string // path relative to the space root, "/"-separated
	Content string
}

// indexSections orders the groups of a rendered index; "" collects files
// without a valid type.
var indexSections = []struct {
	typ   MemoryType
	title string
}{
	{MemoryUser, "User"},
	{MemoryFeedback, "Feedback"},
	{MemoryProject, "Project"},
	{MemoryReference, "Reference"},
	{"", "Other"},
}

// RenderIndex writes a MEMORY.md for a space that has none, from its topic
// files' frontmatter: one "## <Type>" section per memory type present (user,
// feedback, project, reference, then Other for untyped files), each listing
// "- [name](key) — description" sorted by key. The name falls back to the
// base name without ".md"; the description part is left out when there is
// none and shortened with "…" so every line stays under MaxIndexLineChars
// (only a key that long on its own can exceed it). Keys failing IsTopicFile
// are skipped. The output is deterministic; callers still apply
// TruncateIndex to it.
func RenderIndex(topics []TopicFile) string {
	groups := map[MemoryType][]indexEntry{}
	for _, tf := range topics {
		if !IsTopicFile(tf.Key) {
			continue
		}
		fm, _, _ := ParseFrontmatter(tf.Content)
		groups[fm.Type] = append(groups[fm.Type], indexEntry{tf.Key, indexLine(tf.Key, fm)})
	}
	var b strings.Builder
	for _, s := range indexSections {
		entries := groups[s.typ]
		if len(entries) == 0 {
			continue
		}
		// The line breaks ties between duplicate keys, so the output does
		// not depend on the input's order.
		slices.SortFunc(entries, func(x, y indexEntry) int {
			return cmp.Or(strings.Compare(x.key, y.key), strings.Compare(x.line, y.line))
		})
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("## " + s.title + "\n")
		for _, e := range entries {
			b.WriteString(e.line + "\n")
		}
	}
	return b.String()
}

// indexEntry is one rendered line of a generated index and its sort key.
type indexEntry struct{ key, line string }

// indexLine renders one entry of a generated index.
func indexLine(key string, fm Frontmatter) string {
	name := collapseSpace(fm.Name)
	if name == "" {
		name = strings.TrimSuffix(path.Base(key), ".md")
	}
	link := "](" + linkTarget(key) + ")"
	budget := MaxIndexLineChars - 1 - utf16Len("- ["+link)
	line := "- [" + clip(name, budget, escapeLinkText) + link
	if desc := collapseSpace(fm.Description); desc != "" {
		if room := MaxIndexLineChars - 1 - utf16Len(line+" — "); room >= 2 {
			line += " — " + clip(desc, room, nil)
		}
	}
	return line
}

// collapseSpace trims s and turns every run of whitespace, newlines
// included, into one space, so a value renders on one line.
func collapseSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, isJSSpace), " ")
}

// escapeLinkText renders r inside a markdown link text.
func escapeLinkText(r rune) string {
	if r == '[' || r == ']' || r == '\\' {
		return `\` + string(r)
	}
	return string(r)
}

// clip renders s with render (identity when nil) and, when that exceeds max
// UTF-16 units, keeps the longest prefix that fits with a trailing "…",
// backing up to a word boundary unless that loses more than half. An
// escaped rune is kept or dropped whole.
func clip(s string, max int, render func(rune) string) string {
	var b strings.Builder
	n, cut := 0, 0 // cut: length of b while a "…" still fits after it
	for _, r := range s {
		piece := string(r)
		if render != nil {
			piece = render(r)
		}
		b.WriteString(piece)
		if n += utf16Len(piece); n <= max-1 {
			cut = b.Len()
		}
	}
	if n <= max {
		return b.String()
	}
	kept, rest := b.String()[:cut], b.String()[cut:]
	if r, _ := utf8.DecodeRuneInString(rest); !isJSSpace(r) {
		if i := strings.LastIndexFunc(kept, isJSSpace); i >= len(kept)/2 {
			kept = kept[:i]
		}
	}
	return strings.TrimRightFunc(kept, isJSSpace) + "…"
}

// linkTarget writes key as a markdown link destination, percent-encoding
// the characters that would end or confuse it; IndexLinks decodes them.
func linkTarget(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c <= ' ' || c == 0x7f || strings.IndexByte(`()<>\%#?`, c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// IndexLink is one reference from a MEMORY.md to another memory file.
type IndexLink struct {
	// Target is the referenced path. For markdown links it is relative to
	// the index, percent-decoded, cleaned (no "./") and without "#fragment"
	// or "?query". For wiki links it is the note name as written, without
	// "|alias" or "#heading"; it often lacks ".md".
	Target string
	Text   string // the link text, or the wiki alias when there is one
	Line   int    // 1-based line number in the index
	Wiki   bool   // a [[wiki-link]] rather than a [text](target) link
}

var (
	wikiLinkRE = regexp.MustCompile(`\[\[([^\[\]\n]+)\]\]`)
	// mdLinkRE matches an inline link or image: text with escapes, then a
	// destination in angle brackets or bare, then an optional title.
	mdLinkRE = regexp.MustCompile(`(!?)\[((?:[^\[\]\\\n]|\\.)*)\]\(\s*(?:<([^<>\n]*)>|((?:[^\s()<>\\]|\\.)*))(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)`)
	schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// IndexLinks lists, in order of appearance, the references from index to
// other files: inline markdown links whose target is a relative path (no
// scheme, not absolute or "~/", not a bare "#anchor"; images excluded) and, flagged
// Wiki, [[wiki-links]] (embeds included). Text inside code spans and fenced
// code blocks is ignored. Duplicates are kept; reference-style links are
// not recognised.
func IndexLinks(index string) []IndexLink {
	var links []IndexLink
	fence := ""
	for n, line := range strings.Split(index, "\n") {
		if f := fenceMarker(line); f != "" {
			if fence == "" {
				fence = f
			} else if strings.HasPrefix(f, fence) {
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		links = append(links, lineLinks(blankCodeSpans(line), n+1)...)
	}
	return links
}

// lineLinks finds the links of one line with code spans already blanked.
func lineLinks(line string, n int) []IndexLink {
	var links []IndexLink
	for _, m := range wikiLinkRE.FindAllStringSubmatch(line, -1) {
		target, alias, _ := strings.Cut(m[1], "|")
		target, _, _ = strings.Cut(target, "#")
		if target = strings.TrimSpace(target); target != "" {
			links = append(links, IndexLink{Target: target, Text: strings.TrimSpace(alias), Line: n, Wiki: true})
		}
	}
	// Blank wiki links so "[[a]](b)" is not also read as a markdown link.
	line = wikiLinkRE.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) })
	for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
		if m[1] == "!" {
			continue
		}
		if target, ok := relativeTarget(m[3] + m[4]); ok {
			links = append(links, IndexLink{Target: target, Text: m[2], Line: n})
		}
	}
	return links
}

// relativeTarget normalises a link destination and reports whether it
// points at a relative path.
func relativeTarget(dest string) (string, bool) {
	if dest == "" || strings.IndexByte("#/~", dest[0]) >= 0 || schemeRE.MatchString(dest) {
		return "", false
	}
	dest, _, _ = strings.Cut(dest, "#")
	dest, _, _ = strings.Cut(dest, "?")
	dest = unescapeMarkdown(dest)
	if d, err := url.PathUnescape(dest); err == nil {
		dest = d
	}
	dest = path.Clean(dest)
	return dest, dest != "."
}

// unescapeMarkdown drops the backslash before escaped ASCII punctuation.
func unescapeMarkdown(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fenceMarker returns the ``` or ~~~ run opening line, or "" when line is
// not a code fence.
func fenceMarker(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}

// blankCodeSpans replaces every `code span` of line with spaces. A backtick
// run without a matching closing run is literal text.
func blankCodeSpans(line string) string {
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := i
		for n < len(b) && b[n] == '`' {
			n++
		}
		run := string(b[i:n])
		end := closingRun(string(b[n:]), run)
		if end < 0 {
			i = n
			continue
		}
		for j := i; j < n+end+len(run); j++ {
			b[j] = ' '
		}
		i = n + end + len(run)
	}
	return string(b)
}

// closingRun returns the offset in s of a backtick run exactly as long as
// run, or -1.
func closingRun(s, run string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], run)
		if i < 0 {
			return -1
		}
		at := off + i
		end := at + len(run)
		if (at == 0 || s[at-1] != '`') && (end == len(s) || s[end] != '`') {
			return at
		}
		for end < len(s) && s[end] == '`' {
			end++
		}
		off = end
	}
}
