package poison

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/teammem"
)

// A description must share at least one word with the file's name and body
// once both have something to compare: the index (and the manifest the
// agent picks files by) shows the description, while the agent acts on
// the body.
const (
	minDescriptionWords = 3  // content words in the description
	minBodyWords        = 12 // content words in the body
	stemLen             = 5  // words match on their first letters
)

// typeClaimRE: a description that opens by naming a memory type.
var typeClaimRE = regexp.MustCompile(`(?i)^\s*\(?(user|feedback|project|reference)\)?\s*(memory\s*)?[:\-–—]`)

func checkDescription(d *doc) []hit {
	if !teammem.IsTopicFile(d.key) {
		return nil
	}
	fm, body, ok := teammem.ParseFrontmatter(d.content)
	if !ok || fm.Err != nil || strings.TrimSpace(fm.Description) == "" {
		return nil
	}
	line := descriptionLine(d.lines)
	if m := typeClaimRE.FindStringSubmatch(fm.Description); m != nil && fm.Type != "" &&
		!strings.EqualFold(m[1], string(fm.Type)) {
		return []hit{{line: line, text: fm.Description}}
	}
	desc := map[string]bool{}
	eachStem(fm.Description, func(stem string) bool { desc[stem] = true; return true })
	if len(desc) < minDescriptionWords {
		return nil
	}
	// The body's stems are read until one is the description's: most files
	// share a word early, and a whole set of the body is never built.
	shared, seen := false, map[string]bool{}
	eachStem(fm.Name+" "+body, func(stem string) bool {
		if desc[stem] {
			shared = true
			return false
		}
		if len(seen) < minBodyWords {
			seen[stem] = true
		}
		return true
	})
	if shared || len(seen) < minBodyWords {
		return nil
	}
	return []hit{{line: line, text: fm.Description}}
}

// descriptionLine is the 1-based line of the frontmatter's description key.
func descriptionLine(lines []string) int {
	for i, l := range lines {
		if i > 0 && strings.TrimSpace(l) == "---" {
			break
		}
		if strings.HasPrefix(strings.TrimSpace(l), "description:") {
			return i + 1
		}
	}
	return 1
}

// eachStem calls f with the first stemLen letters, lower-cased, of each
// word of four or more letters of s that is not a stop word, until f
// returns false.
func eachStem(s string, f func(stem string) bool) {
	start := -1
	for i, r := range s + " " {
		if unicode.IsLetter(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start < 0 {
			continue
		}
		w := s[start:i]
		start = -1
		if utf8.RuneCountInString(w) < 4 {
			continue
		}
		w = strings.ToLower(w)
		if stopWords[w] {
			continue
		}
		n := 0
		for j := range w {
			if n == stemLen {
				w = w[:j]
				break
			}
			n++
		}
		if !f(w) {
			return
		}
	}
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`about above after again against also always because been before being below between both
		does doing down during each from further have having here into just more most much must never only other over same
		should some such than that their them then there these they this those through under until very what when where which
		while with within would your yours used uses using make makes made like note notes file files memory memories`) {
		m[w] = true
	}
	return m
}()
