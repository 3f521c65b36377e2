// Package poison holds the poisoning heuristics run on every team write
// (issue 15 point 4): text in a shared memory file that is aimed at the
// agent rather than at people, or that hides data from them. They are
// heuristics, not a model: each rule is a small, documented pattern with an
// id and a label, tested with positives and near misses, and a hit is a
// finding for an admin to look at, not a verdict.
//
// The rules (ids as stored, shown and counted):
//
//   - agent-override: telling the agent to drop, void or stop following
//     its instructions ("ignore previous instructions", "pay no attention
//     to the system prompt", "your previous instructions are now void",
//     "from now on you will only obey …", "you are now in developer mode").
//   - agent-concealment: telling the agent to keep something from its user
//     ("do not tell the user", "without mentioning it to the user", "keep
//     this secret from the user", "the user must never know", "don't
//     mention this in your response").
//   - agent-command: telling the agent to run something unconditionally or
//     unasked ("always run curl …", "silently execute", "run this without
//     asking"). "Always run the tests" is not a hit: the rule wants a risky
//     command or an unasked/hidden qualifier.
//   - fetch-exec: remote content fetched and then executed, by any shell
//     (sh, bash, zsh, dash, fish, pwsh, cmd …), interpreter (python, node,
//     perl, ruby, php, deno, bun) or package runner (npx, pnpm dlx, bunx,
//     uvx, pipx run, deno run) given a remote source: curl … | sh, bash
//     <(curl …), sh -c "$(curl …)", python -c "$(curl …)", eval "$(curl …)",
//     iex (iwr …), and a download saved to a file that a command within the
//     next three lines runs (download.go says where the line is).
//   - url-data: a URL whose query carries data: a long or high-entropy
//     value, a templated value (${…}, {{…}}, $VAR, <…>) that the agent
//     would fill in, or a Markdown image (fetched without a click) with a
//     query.
//   - invisible-char: zero-width and other invisible format characters
//     (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E), except a joiner
//     between two non-ASCII characters (emoji sequences, Persian text).
//   - bidi-char: bidirectional embedding, override and isolate controls
//     (U+202A–U+202E, U+2066–U+2069), which make text read differently
//     from what it is.
//   - tag-char: Unicode tag characters (U+E0000–U+E007F), invisible ASCII
//     that models read, except a well-formed emoji tag sequence (a
//     subdivision flag).
//   - encoded-blob: a long base64 (120+ characters, mixed case and digits)
//     or hex (160+ digits) run; hashes (up to SHA-512's 128 hex digits) are
//     not hits.
//   - description-mismatch: a topic file whose frontmatter description
//     shares no words with its name and body, or names a memory type other
//     than its type: the index shows the description, the agent reads the
//     body.
//
// The instruction rules and fetch-exec read the content normalised
// (normalize.go): compatibility forms, accents, lookalike letters of other
// scripts and invisible characters folded away, Markdown emphasis and
// marks inside words dropped, spaced letters and a paragraph's lines
// joined (instructions), quotes inside words dropped and continued lines
// joined (shell). Every rule is linear in its input
// (TestRulesLinearOnAdversarialInput).
//
// Findings carry rule, label and line; an excerpt only for rules whose
// match is instruction text, never for those whose match may be data
// (url-data, encoded-blob) nor for invisible characters.
package poison

import (
	"sort"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// Rule is one heuristic: an id, a label for people, and the check.
type Rule struct {
	ID    string
	Label string
	// Excerpt reports whether the matched text may be shown (it is
	// instruction text, not possibly data).
	Excerpt bool
	check   func(d *doc) []hit
}

// hit is one match of a rule: a 1-based line and the matched text.
type hit struct {
	line int
	text string
}

// doc is an entry's content prepared once for every rule.
type doc struct {
	key       string
	content   string
	lines     []string
	lineStart []int  // the offset of each line in content
	ascii     []bool // lines holding no byte ≥ 0x80, which no character rule can hit
	text      *view  // the instruction rules' view (normalize.go)
	shell     *view  // the shell rules' view
}

// newDoc prepares content for the rules.
func newDoc(key, content string) *doc {
	d := &doc{key: key, content: content, lines: strings.Split(content, "\n")}
	d.ascii = make([]bool, len(d.lines))
	d.lineStart = make([]int, len(d.lines))
	off := 0
	for i, l := range d.lines {
		d.ascii[i] = isASCII(l)
		d.lineStart[i] = off
		off += len(l) + 1
	}
	d.text, d.shell = newViews(content, d.lineStart)
	return d
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// viewHit is the hit of bytes [a, b) of line i of v: the original line
// the match starts on and the original text it covers.
func (d *doc) viewHit(v *view, i, a, b int) hit {
	from, to := v.origin(i, a), int(v.src[v.start[i]+b])
	if to < from {
		to = from
	}
	line := sort.Search(len(d.lineStart), func(k int) bool { return d.lineStart[k] > from })
	return hit{line: line, text: d.content[from:to]}
}

// Rules returns every rule, in the order they run.
func Rules() []Rule { return rules }

// Checker runs every rule; its zero value is ready to use. It implements
// teammem.PoisonChecker.
type Checker struct{}

// maxExcerpt bounds an excerpt, in runes.
const maxExcerpt = 80

// CheckEntry returns the findings of every rule in content, ordered by
// line then rule. A key is a path; the content is the whole file.
func (Checker) CheckEntry(key, content string) []teammem.PoisonFinding {
	d := newDoc(key, content)
	var out []teammem.PoisonFinding
	for _, r := range rules {
		seen := map[int]bool{}
		for _, h := range r.check(d) {
			if seen[h.line] {
				continue // one finding per rule and line
			}
			seen[h.line] = true
			f := teammem.PoisonFinding{Path: key, RuleID: r.ID, Label: r.Label, Line: h.line}
			if r.Excerpt {
				f.Excerpt = excerpt(h.text)
			}
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// excerpt trims and bounds matched text for display.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxExcerpt {
		s = string(r[:maxExcerpt-1]) + "…"
	}
	return s
}

var rules = []Rule{
	{ID: "agent-override", Label: "tells the agent to drop its instructions", Excerpt: true, check: checkOverride},
	{ID: "agent-concealment", Label: "tells the agent to hide something from its user", Excerpt: true, check: checkConcealment},
	{ID: "agent-command", Label: "tells the agent to run something unasked", Excerpt: true, check: checkCommand},
	{ID: "fetch-exec", Label: "downloads and executes code in one command", Excerpt: true, check: checkFetchExec},
	{ID: "url-data", Label: "URL whose query carries data", check: checkURLData},
	{ID: "invisible-char", Label: "invisible characters", check: checkInvisible},
	{ID: "bidi-char", Label: "bidirectional control characters", check: checkBidi},
	{ID: "tag-char", Label: "Unicode tag characters (invisible text)", check: checkTags},
	{ID: "encoded-blob", Label: "long base64 or hex blob", check: checkBlob},
	{ID: "description-mismatch", Label: "frontmatter description does not match the body or type", check: checkDescription},
}
