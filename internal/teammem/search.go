package teammem

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Search (issue 25 point 4). Both drivers index the words of an entry's
// key and content, a word being a run of letters and digits, compared
// without regard to case, with no stemming: the same words match on SQLite
// (FTS5's unicode61 tokenizer) and on Postgres (the 'simple' configuration
// over the text cut at every other character). A query is a list of such
// words, all of which an entry must hold; a word written with a trailing
// "*" matches every word it begins.

// Query bounds.
const (
	SearchMaxQuery = 256 // bytes of a query
	SearchMaxTerms = 16
)

// SearchTerm is one word of a query: Text in lower case, and Prefix when
// it matches every word it begins.
type SearchTerm struct {
	Text   string
	Prefix bool
}

// SearchFilter is one search of an org: Terms (at least one), over the
// team spaces of every repo and the personal spaces of UserID, narrowed to
// RepoID and Scope when set.
type SearchFilter struct {
	Terms  []SearchTerm
	UserID int64
	RepoID int64 // 0: every repo of the org
	Scope  Scope // "": both
	Limit  int
	Offset int
}

// SearchRow is one entry a search found. Score is higher for a better
// match, comparable only within one search.
type SearchRow struct {
	Repo      string
	Scope     Scope
	Key       string
	Content   string
	Score     float64
	UpdatedAt time.Time
	UpdatedBy string // the author's handle, "" when unknown
}

// ParseSearchQuery returns the terms of q: EInvalid for an empty query, one
// with no word, or one past the bounds.
func ParseSearchQuery(q string) ([]SearchTerm, error) {
	if len(q) > SearchMaxQuery {
		return nil, Errorf(EInvalid, "the query is %d bytes long; at most %d are allowed", len(q), SearchMaxQuery)
	}
	if !utf8.ValidString(q) {
		return nil, Errorf(EInvalid, "the query is not valid UTF-8")
	}
	var terms []SearchTerm
	seen := map[SearchTerm]bool{}
	rest := q
	for rest != "" {
		i := strings.IndexFunc(rest, isWordRune)
		if i < 0 {
			break
		}
		rest = rest[i:]
		j := strings.IndexFunc(rest, func(r rune) bool { return !isWordRune(r) })
		if j < 0 {
			j = len(rest)
		}
		t := SearchTerm{Text: strings.ToLower(rest[:j]), Prefix: strings.HasPrefix(rest[j:], "*")}
		rest = rest[j:]
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	switch {
	case len(terms) == 0 && strings.TrimSpace(q) == "":
		return nil, Errorf(EInvalid, "the query is empty: give q one or more words")
	case len(terms) == 0:
		return nil, Errorf(EInvalid, "the query has no word to search for (letters or digits)")
	case len(terms) > SearchMaxTerms:
		return nil, Errorf(EInvalid, "the query has %d words; at most %d are allowed", len(terms), SearchMaxTerms)
	}
	return terms, nil
}

// isWordRune reports whether r belongs to a word: a letter or a digit.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// matches reports whether the word w (in any case) is matched by one of terms.
func matches(w string, terms []SearchTerm) bool {
	lw := strings.ToLower(w)
	for _, t := range terms {
		if lw == t.Text || t.Prefix && strings.HasPrefix(lw, t.Text) {
			return true
		}
	}
	return false
}

// Snippet is a one-line excerpt of content of at most max runes around
// the first word terms match, every matched word in it wrapped in open and
// close, and "…" where it cuts the text. Without a match in content (the
// key matched) it is the text's beginning.
func Snippet(content string, terms []SearchTerm, max int, open, close string) string {
	type word struct{ start, end int } // rune offsets in text
	text := []rune(strings.Join(strings.Fields(content), " "))
	var words []word
	first := -1
	for i := 0; i < len(text); {
		if !isWordRune(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isWordRune(text[j]) {
			j++
		}
		if matches(string(text[i:j]), terms) {
			if first < 0 {
				first = len(words)
			}
			words = append(words, word{i, j})
		}
		i = j
	}
	// Room for the text: max less the marks and ellipses it may carry.
	marks := utf8.RuneCountInString(open) + utf8.RuneCountInString(close)
	start := 0
	if first >= 0 && words[first].start > max/4 {
		start = words[first].start - max/4
		for start < words[first].start && isWordRune(text[start]) && start > 0 && isWordRune(text[start-1]) {
			start++ // not in the middle of a word
		}
	}
	var b strings.Builder
	n := 0 // runes written
	if start > 0 {
		b.WriteString("…")
		n++
	}
	w := 0
	for w < len(words) && words[w].start < start {
		w++
	}
	cut := false
	for i := start; i < len(text) && !cut; {
		if w < len(words) && words[w].start == i {
			wd := words[w]
			need := marks + wd.end - wd.start
			if cut = n+need+1 > max; cut {
				break
			}
			b.WriteString(open)
			b.WriteString(string(text[wd.start:wd.end]))
			b.WriteString(close)
			n += need
			i = wd.end
			w++
			continue
		}
		if cut = n+2 > max; cut { // keep room for the ellipsis
			break
		}
		b.WriteRune(text[i])
		n++
		i++
	}
	if cut {
		b.WriteString("…")
	}
	return b.String()
}
