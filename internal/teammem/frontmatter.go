package teammem

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MemoryType is the closed taxonomy Claude Code files memories under
// (reference §2.7).
type MemoryType string

// The memory types, in the order a rendered index lists them.
const (
	MemoryUser      MemoryType = "user"
	MemoryFeedback  MemoryType = "feedback"
	MemoryProject   MemoryType = "project"
	MemoryReference MemoryType = "reference"
)

// Valid reports whether t is exactly one of the four memory types; the
// comparison is case-sensitive, as in the client.
func (t MemoryType) Valid() bool {
	switch t {
	case MemoryUser, MemoryFeedback, MemoryProject, MemoryReference:
		return true
	}
	return false
}

// Frontmatter is what a memory file's leading YAML block says about it.
// Name, Description and Type are empty when absent or unusable; Raw holds
// the whole parsed mapping for callers that need other keys.
type Frontmatter struct {
	Name        string
	Description string
	Type        MemoryType
	Raw         map[string]any
	// Repaired reports whether the block only parsed after the retry that
	// quotes problematic values.
	Repaired bool
	// Err is set when a block was present but yielded no mapping: the YAML
	// failed twice or its top level is not a mapping. The client then uses
	// the file with empty frontmatter; a linter reports Err.
	Err error
}

// jsSpace is the set JavaScript's \s and String.prototype.trim agree on:
// Unicode White_Space except U+0085, plus U+FEFF. It is spelled out because
// Go's \s is ASCII-only and strings.TrimSpace keeps U+FEFF.
const jsSpace = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

var (
	// frontmatterRE is the client's /^---\s*\n([\s\S]*?)---\s*\n?/ with the
	// JavaScript whitespace class. Without (?m), ^ is byte 0 of the text.
	frontmatterRE = regexp.MustCompile(`^---[` + jsSpace + `]*\n((?s:.)*?)---[` + jsSpace + `]*\n?`)
	// simpleLineRE is /^([a-zA-Z_-]+):\s+(.+)$/ applied to one line; the
	// value class excludes what JavaScript's "." does not match.
	simpleLineRE = regexp.MustCompile(`^([a-zA-Z_-]+):[` + jsSpace + `]+([^\n\r\x{2028}\x{2029}]+)$`)
)

// ParseFrontmatter splits text into its frontmatter and body the way the
// client does (reference §2.8). ok reports whether text starts with a
// frontmatter block; when it does not, body is text and fm is zero. A block
// that does not parse still yields ok, a body and empty fields, with fm.Err
// set. Besides the top-level keys, the nested form `metadata: {type: ...}`
// seen in the wild is read for type, name and description when the
// top-level key is missing. ParseFrontmatter never panics.
func ParseFrontmatter(text string) (fm Frontmatter, body string, ok bool) {
	m := frontmatterRE.FindStringSubmatchIndex(text)
	if m == nil {
		return Frontmatter{}, text, false
	}
	body = text[m[1]:]
	block := text[m[2]:m[3]]
	raw, err := decodeYAMLMapping(block)
	// Like the client, only a YAML error earns the retry; a list or scalar
	// that parsed is simply ignored.
	if err != nil && !errors.Is(err, errNotMapping) {
		repaired := quoteProblematicLines(block)
		if raw, err = decodeYAMLMapping(repaired); err == nil {
			fm.Repaired = true
		}
	}
	if err != nil {
		fm.Err = err
		return fm, body, true
	}
	fm.Raw = raw
	fm.fill(raw)
	return fm, body, true
}

// fill sets the memory-relevant fields from a parsed mapping.
func (fm *Frontmatter) fill(raw map[string]any) {
	meta, _ := asMapping(raw["metadata"])
	pick := func(key string) any {
		if v, present := raw[key]; present && v != nil {
			return v
		}
		return meta[key]
	}
	fm.Name = scalarString(pick("name"))
	fm.Description = scalarString(pick("description"))
	if s, isString := pick("type").(string); isString && MemoryType(s).Valid() {
		fm.Type = MemoryType(s)
	}
}

// errNotMapping marks a block whose YAML parsed but is a list or a scalar.
var errNotMapping = errors.New("frontmatter is not a YAML mapping")

// decodeYAMLMapping parses block as YAML. An empty document gives a nil map
// and no error; anything but a mapping gives errNotMapping.
func decodeYAMLMapping(block string) (m map[string]any, err error) {
	defer func() {
		// yaml.v3 has panicked on hostile input in the past; a memory file
		// must never take a server down.
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("frontmatter YAML: %v", r)
		}
	}()
	var v any
	if err := yaml.Unmarshal([]byte(block), &v); err != nil {
		return nil, fmt.Errorf("frontmatter YAML: %w", err)
	}
	if v == nil {
		return nil, nil
	}
	m, ok := asMapping(v)
	if !ok {
		return nil, errNotMapping
	}
	return m, nil
}

// asMapping returns v as a string-keyed map. yaml.v3 produces
// map[any]any when a key is not a string; such keys are stringified, as
// JavaScript object keys would be.
func asMapping(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			m[fmt.Sprint(k)] = val
		}
		return m, true
	}
	return nil, false
}

// scalarString renders a YAML scalar as text; lists, mappings and null give
// "", which callers treat as absent.
func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(t)
	case time.Time:
		// yaml.v3 resolves timestamps the client's YAML 1.2 parser keeps
		// as text; give back the common date-only spelling.
		if t.Equal(t.Truncate(24 * time.Hour)) {
			return t.Format(time.DateOnly)
		}
		return t.Format(time.RFC3339Nano)
	}
	return ""
}

// quoteProblematicLines is the client's one repair attempt: every simple
// `key: value` line whose unquoted value holds a YAML indicator is rewritten
// with the value double-quoted. The reference's "`": "`" sequence is read as
// the JavaScript string ": " (colon, space), the cause of the common
// "mapping values are not allowed" error.
func quoteProblematicLines(block string) string {
	lines := strings.Split(block, "\n")
	for i, line := range lines {
		m := simpleLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key, value := m[1], m[2]
		if isQuoted(value) || (!strings.ContainsAny(value, "{}[]*&#!|>%@`") && !strings.Contains(value, ": ")) {
			continue
		}
		escaped := strings.ReplaceAll(strings.ReplaceAll(value, `\`, `\\`), `"`, `\"`)
		lines[i] = key + `: "` + escaped + `"`
	}
	return strings.Join(lines, "\n")
}

// isQuoted reports whether value starts and ends with the same quote
// character; like the client, a lone `"` counts.
func isQuoted(value string) bool {
	for _, q := range []string{`"`, `'`} {
		if strings.HasPrefix(value, q) && strings.HasSuffix(value, q) {
			return true
		}
	}
	return false
}

// Memory scan limits (reference §2.9).
const (
	// FrontmatterMaxLines is how many leading lines of a topic file the scan
	// reads; a block closing after it counts as no frontmatter.
	FrontmatterMaxLines = 30
	// MaxMemoryFiles caps the scan result, newest first.
	MaxMemoryFiles = 200
)

// MemoryHeader is one topic file as the memory scan reports it.
type MemoryHeader struct {
	Filename    string // path relative to the memory directory, with "/"
	Mtime       time.Time
	Description string // empty when absent
	Type        MemoryType
}

// IsTopicFile reports whether the scan considers rel (a relative path with
// "/" separators): it ends in ".md" and its base name is not MEMORY.md.
func IsTopicFile(rel string) bool {
	return strings.HasSuffix(rel, ".md") && path.Base(rel) != IndexName
}

// HeaderLines returns the part of a file the scan parses: a leading BOM
// removed, at most the first FrontmatterMaxLines lines, each without a
// trailing "\r", joined by "\n". content may be the whole file or just its
// beginning.
func HeaderLines(content string) string {
	content = strings.TrimPrefix(content, "\uFEFF")
	lines := strings.SplitN(content, "\n", FrontmatterMaxLines+1)
	if len(lines) > FrontmatterMaxLines {
		lines = lines[:FrontmatterMaxLines]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return strings.Join(lines, "\n")
}

// ParseHeader builds the scan record for the topic file filename modified at
// mtime from its content (or the beginning of it), which it cuts with
// HeaderLines before parsing the frontmatter.
func ParseHeader(filename string, mtime time.Time, content string) MemoryHeader {
	fm, _, _ := ParseFrontmatter(HeaderLines(content))
	return MemoryHeader{Filename: filename, Mtime: mtime, Description: fm.Description, Type: fm.Type}
}

// RecentHeaders returns headers sorted newest first (ties keep their order)
// and capped at MaxMemoryFiles. headers is not modified.
func RecentHeaders(headers []MemoryHeader) []MemoryHeader {
	out := slices.Clone(headers)
	slices.SortStableFunc(out, func(a, b MemoryHeader) int { return b.Mtime.Compare(a.Mtime) })
	if len(out) > MaxMemoryFiles {
		out = out[:MaxMemoryFiles]
	}
	return out
}

// FormatManifest renders headers one per line as the client's memory
// manifest: "- [type] filename (2026-03-15T10:00:00.000Z): description",
// the type and description parts only when present.
func FormatManifest(headers []MemoryHeader) string {
	lines := make([]string, len(headers))
	for i, h := range headers {
		var b strings.Builder
		b.WriteString("- ")
		if h.Type != "" {
			b.WriteString("[" + string(h.Type) + "] ")
		}
		// JavaScript's toISOString: UTC, milliseconds truncated, "Z".
		b.WriteString(h.Filename + " (" + h.Mtime.UTC().Format("2006-01-02T15:04:05.000Z") + ")")
		if h.Description != "" {
			b.WriteString(": " + h.Description)
		}
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n")
}
