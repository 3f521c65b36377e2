package poison

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The instruction and shell rules read a normalised view of the content
// (issue 21 point 8), so that writing a phrase some other way does not
// hide it:
//
//   - folding, in both views: NFKD compatibility decomposition (fullwidth
//     and mathematical letters, ligatures, the Kelvin sign), combining marks
//     dropped (accents), letters of other scripts that look Latin mapped to
//     it (confusables.go), invisible format characters (zero-width, bidi,
//     tag, soft hyphen) dropped, other spaces made ' ', and lower case;
//   - the text view (instructions) also drops Markdown emphasis and code
//     marks (* _ ~ `), drops - . ' between two letters ("ig-nore",
//     "ign.ore", "don't"), joins letters spaced one apart ("i g n o r e"),
//     and joins the lines of a paragraph, so a line break inside a phrase
//     does not split it (a blank line, a list item, a heading, a quote, a
//     table row or a code fence starts a new one);
//   - the shell view (downloads run) also drops quotes, backslashes and
//     carets between two letters (c'u'rl, c\url, c^url: the shell reads
//     curl) and joins a line ending in a backslash to the next.
//
// Every byte of a view keeps the offset in the content it came from, so a
// finding reports the line, and shows the text, of the original.

// view is the content as one family of rules reads it.
type view struct {
	text  string     // the normalised content, logical lines separated by '\n'
	src   []int32    // src[i] is the offset in the content of text[i]; src[len(text)] = len(content)
	lines []string   // text split at '\n'
	start []int      // start[i] is the offset of lines[i] in text
	ascii []bool     // lines holding no byte ≥ 0x80
	words []wordMask // the prefilter words each line holds
}

// viewMode says which view to build.
type viewMode int

const (
	textView viewMode = iota
	shellView
)

// newViews builds the text and the shell view of content; lineStart holds
// the offset of each original line. Both share one folding.
func newViews(content string, lineStart []int) (text, shell *view) {
	b, src := fold(content)
	tb, tsrc := slices.Clone(b), slices.Clone(src)
	return newView(content, lineStart, textView, tb, tsrc), newView(content, lineStart, shellView, b, src)
}

// newView builds the view of content in mode from its folding b, src,
// which it takes over.
func newView(content string, lineStart []int, mode viewMode, b []byte, src []int32) *view {
	join := joins(content, lineStart, mode)
	line := 0
	for k, c := range b {
		// fold keeps every line break of the content, and makes no other.
		if c == '\n' {
			if join[line] {
				b[k] = ' '
			}
			line++
		}
	}
	if mode == textView {
		b, src = dropMarks(b, src)
		b, src = joinSpacedLetters(b, src)
	} else {
		b, src = dropShellQuotes(b, src)
	}
	v := &view{text: string(b), src: append(src, int32(len(content)))}
	v.lines = strings.Split(v.text, "\n")
	v.start = make([]int, len(v.lines))
	v.ascii = make([]bool, len(v.lines))
	off := 0
	for i, l := range v.lines {
		v.start[i] = off
		v.ascii[i] = isASCII(l)
		off += len(l) + 1
	}
	v.words = prefilter().lineWords(v.text, len(v.lines))
	return v
}

// may reports whether line i of v holds a word of every group of r's
// prefilter.
func (v *view) may(i int, r *lineRE) bool { return v.words[i].holdsAll(r.masks) }

// origin returns the offset in the content of byte off of line i.
func (v *view) origin(i, off int) int { return int(v.src[v.start[i]+off]) }

// joins returns, for each original line, whether the view joins it to the
// next: the line break becomes a space.
func joins(content string, lineStart []int, mode viewMode) []bool {
	out := make([]bool, len(lineStart))
	for i := 0; i+1 < len(lineStart); i++ {
		cur, next := content[lineStart[i]:lineStart[i+1]-1], lineOf(content, lineStart, i+1)
		if mode == shellView {
			out[i] = strings.HasSuffix(strings.TrimRight(cur, "\r"), "\\")
			continue
		}
		// A list item, heading or quote continues on an indented or
		// plain next line; only the next line's start ends it.
		out[i] = strings.TrimSpace(cur) != "" && !isFence(cur) && !startsBlock(next)
	}
	return out
}

func isFence(line string) bool {
	t := strings.TrimLeft(line, " \t")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") || strings.TrimSpace(t) == "---"
}

func lineOf(content string, lineStart []int, i int) string {
	if i+1 < len(lineStart) {
		return content[lineStart[i] : lineStart[i+1]-1]
	}
	return content[lineStart[i]:]
}

// startsBlock reports whether line is blank or starts a Markdown block of
// its own: a list item, a heading, a quote, a table row, a fence or a
// thematic break.
func startsBlock(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if t == "" || strings.TrimSpace(t) == "" {
		return true
	}
	switch t[0] {
	case '#', '>', '|':
		return true
	case '-', '*', '+':
		return len(t) == 1 || t[1] == ' ' || t[1] == '\t' || t[1] == t[0]
	case '`', '~':
		return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i < len(t) && (t[i] == '.' || t[i] == ')')
}

// fold folds content rune by rune (see the normalisation notes above).
func fold(content string) ([]byte, []int32) {
	b := make([]byte, 0, len(content))
	src := make([]int32, 0, len(content)+1)
	emit := func(r rune, at int) {
		n := len(b)
		b = utf8.AppendRune(b, r)
		for range len(b) - n {
			src = append(src, int32(at))
		}
	}
	for i := 0; i < len(content); {
		c := content[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			src = append(src, int32(i))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(content[i:])
		if a, ok := foldRune(r); ok {
			if a != 0 {
				emit(a, i)
			}
		} else if d := norm.NFKD.PropertiesString(content[i:]).Decomposition(); d != nil {
			for _, dr := range string(d) {
				if a, ok := foldRune(dr); ok {
					if a != 0 {
						emit(a, i)
					}
				} else {
					emit(unicode.ToLower(dr), i)
				}
			}
		} else {
			emit(unicode.ToLower(r), i)
		}
		i += size
	}
	return b, src
}

// foldRune returns what a single rune folds to without decomposition: an
// ASCII character, or 0 for nothing; ok is false when the rune needs
// decomposing or stays itself.
func foldRune(r rune) (rune, bool) {
	if r < utf8.RuneSelf {
		return unicode.ToLower(r), true
	}
	if a, ok := confusables[r]; ok {
		return rune(a), true
	}
	switch {
	case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), unicode.Is(unicode.Cf, r), isInvisible(r):
		return 0, true
	case unicode.IsSpace(r):
		return ' ', true
	}
	return 0, false
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' }

func isAlnum(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' }

// dropMarks drops Markdown emphasis and code marks everywhere, then
// hyphens, dots and apostrophes between two letters.
func dropMarks(b []byte, src []int32) ([]byte, []int32) {
	w := 0
	for i, c := range b {
		if c == '*' || c == '_' || c == '~' || c == '`' {
			continue
		}
		b[w], src[w] = c, src[i]
		w++
	}
	b, src = b[:w], src[:w]
	w = 0
	for i, c := range b {
		if (c == '-' || c == '.' || c == '\'') && w > 0 && isLetter(b[w-1]) && i+1 < len(b) && isLetter(b[i+1]) {
			continue
		}
		b[w], src[w] = c, src[i]
		w++
	}
	return b[:w], src[:w]
}

// joinSpacedLetters drops the single spaces of a run of three or more
// letters standing alone one space apart ("i g n o r e" is "ignore").
func joinSpacedLetters(b []byte, src []int32) ([]byte, []int32) {
	alone := func(i int) bool {
		return i < len(b) && isLetter(b[i]) && (i == 0 || !isAlnum(b[i-1])) && (i+1 == len(b) || !isAlnum(b[i+1]))
	}
	drop := make([]bool, len(b))
	for i := 0; i < len(b); {
		if !alone(i) {
			i++
			continue
		}
		j := i // the last letter of the run
		for j+2 < len(b) && b[j+1] == ' ' && alone(j+2) {
			j += 2
		}
		if (j-i)/2+1 >= 3 {
			for k := i + 1; k < j; k += 2 {
				drop[k] = true
			}
		}
		i = j + 1
	}
	w := 0
	for i, c := range b {
		if !drop[i] {
			b[w], src[w] = c, src[i]
			w++
		}
	}
	return b[:w], src[:w]
}

// dropShellQuotes drops runs of quotes, backslashes and carets between two
// letters or digits.
func dropShellQuotes(b []byte, src []int32) ([]byte, []int32) {
	quote := func(c byte) bool { return c == '\'' || c == '"' || c == '\\' || c == '^' }
	w := 0
	for i := 0; i < len(b); {
		if !quote(b[i]) {
			b[w], src[w] = b[i], src[i]
			w++
			i++
			continue
		}
		j := i
		for j < len(b) && quote(b[j]) {
			j++
		}
		if w > 0 && isAlnum(b[w-1]) && j < len(b) && isAlnum(b[j]) {
			i = j
			continue
		}
		for ; i < j; i++ {
			b[w], src[w] = b[i], src[i]
			w++
		}
	}
	return b[:w], src[:w]
}
