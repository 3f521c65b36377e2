package teammem

import (
	"cmp"
	"slices"
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
	// SearchCandidates bounds the work of one search: when more entries
	// match, the most recently written SearchCandidates of them are ranked
	// and the rest are not found. A query that many entries match is too
	// broad to page through; another word narrows it.
	SearchCandidates = 500
	// SearchTextMax bounds the text of a candidate that ranking reads and
	// snippets come from: its first SearchTextMax characters.
	SearchTextMax = 16 << 10
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
}

// SearchRow is one entry a search found: Text is the first SearchTextMax
// characters of its content. RankSearch sets
// Score, higher for a better match, comparable only within one search.
type SearchRow struct {
	Repo      string
	Scope     Scope
	Key       string
	Text      string
	Score     float64
	UpdatedAt time.Time
	UpdatedBy string // the author's handle, "" when unknown
}

// The ranking's BM25 parameters: how fast a word's repetitions stop
// counting, and how much a long text's length discounts them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// RankSearch scores rows by terms and sorts them best first. The score is
// BM25 over the key and text (every row holds every term, which makes the
// terms' inverse document frequencies alike, so they are left out): a
// term's occurrences count with diminishing returns, discounted in longer
// texts. Ties go to the more recent write, then to repo, scope and key.
// The drivers' indexes pick the rows; the ranking is the same on both.
func RankSearch(rows []SearchRow, terms []SearchTerm) {
	lengths := make([]int, len(rows))
	tfs := make([][]int, len(rows))
	total := 0
	for i, r := range rows {
		tfs[i] = make([]int, len(terms))
		for _, text := range []string{r.Key, r.Text} {
			forWords(text, func(w string) {
				lengths[i]++
				for j, t := range terms {
					// Most words differ from the term in their first byte.
					if c := w[0] | 0x20; t.Text[0] < utf8.RuneSelf && c != t.Text[0] && c != t.Text[0]|0x20 {
						continue
					}
					if termMatches(w, t) {
						tfs[i][j]++
					}
				}
			})
		}
		total += lengths[i]
	}
	avg := 1.0
	if len(rows) > 0 && total > 0 {
		avg = float64(total) / float64(len(rows))
	}
	for i := range rows {
		norm := bm25K1 * (1 - bm25B + bm25B*float64(lengths[i])/avg)
		score := 0.0
		for _, tf := range tfs[i] {
			score += float64(tf) * (bm25K1 + 1) / (float64(tf) + norm)
		}
		rows[i].Score = score
	}
	slices.SortStableFunc(rows, func(a, b SearchRow) int {
		switch {
		case a.Score != b.Score:
			return cmp.Compare(b.Score, a.Score)
		case !a.UpdatedAt.Equal(b.UpdatedAt):
			return b.UpdatedAt.Compare(a.UpdatedAt)
		}
		return cmp.Or(strings.Compare(a.Repo, b.Repo), strings.Compare(string(a.Scope), string(b.Scope)), strings.Compare(a.Key, b.Key))
	})
}

// forWords calls fn with each word of text: each run of letters and
// digits. ASCII bytes are classified without decoding.
func forWords(text string, fn func(string)) {
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		var word bool
		size := 1
		if c < utf8.RuneSelf {
			word = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			word = isWordRune(r)
		}
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			fn(text[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		fn(text[start:])
	}
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
	for _, t := range terms {
		if termMatches(w, t) {
			return true
		}
	}
	return false
}

// termMatches reports whether the word w, in any case, is t's word, or
// begins with it for a prefix term. It compares in place, without a
// lower-case copy of w: ranking looks at every word of a thousand texts.
func termMatches(w string, t SearchTerm) bool {
	if isASCII(t.Text) {
		// An ASCII word folds byte by byte; w's bytes past it decide
		// nothing for a prefix.
		if len(w) < len(t.Text) || !t.Prefix && len(w) != len(t.Text) {
			return false
		}
		for i := 0; i < len(t.Text); i++ {
			c := w[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != t.Text[i] {
				return false
			}
		}
		return true
	}
	if !t.Prefix {
		return strings.EqualFold(w, t.Text)
	}
	n, want := 0, utf8.RuneCountInString(t.Text)
	for i := range w {
		if n == want {
			return strings.EqualFold(w[:i], t.Text)
		}
		n++
	}
	return n == want && strings.EqualFold(w, t.Text)
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
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
