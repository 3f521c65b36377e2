package secretscan

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Claude Code scans memory with JavaScript regular expressions, where \s
// also matches the vertical tab, every Unicode space separator, U+2028,
// U+2029 and U+FEFF. Compiled by Go (RE2), gitleaks' rules read \s as
// [\t\n\f\r ] only, and many of them demand such a boundary after the token
// (`(?:[\x60'"\s;]|\\[nr]|$)`): a token followed by a no-break space ends
// where Claude Code sees it end, yet gitleaks reports nothing. Separately,
// characters that render as nothing (zero-width space, joiners, soft hyphen,
// U+FEFF) dropped inside a token hide it from every rule while the text
// still reads, and copies, as the token.
//
// Rather than fork gitleaks' rules, Scan rewrites the text it hands them,
// in up to two views:
//
//   - the spaced view maps each such space to an ASCII space and U+2028 and
//     U+2029 to a newline, so \s, \b and `.` see the boundaries JavaScript
//     sees;
//   - the stripped view is the spaced view with the invisible characters
//     removed as well, so a token with one inside is whole again.
//
// Each view is scanned and the findings merged. Lines are those of the
// original as git, grep -n and editors count them: by "\n" alone. A U+2028
// or U+2029 ends a line only for the rules (as it does for JavaScript's
// `.`); the line numbers reported skip the breaks it added.
//
// Text that is ASCII without a vertical tab, nearly every memory file, is
// scanned as it is, after one byte loop. Text with other non-ASCII
// characters but none of these is scanned as it is too, after one rune
// loop; gitleaks' findings on it are exactly what they were.
//
// gitleaks decodes base64, hex, percent and \u escapes after the views are
// made, inside its own scan: a Unicode space or invisible character in the
// decoded text is not normalised (the README lists this among the forms not
// caught).

// class is what a rune becomes in the views.
type class uint8

const (
	keep      class = iota // unchanged in both views
	space                  // JavaScript's \s but not RE2's: an ASCII space
	separator              // U+2028, U+2029: a newline that is not a line
	invisible              // renders as nothing: removed in the stripped view
	zwnbsp                 // U+FEFF: a space in the spaced view, removed in the stripped one
)

// classify returns r's class. A U+FEFF at the very start of the text is a
// byte order mark: a space in both views, since at the start removing it
// and turning it into a boundary come to the same, and a BOM alone should
// not cost a second scan.
func classify(r rune, atStart bool) class {
	switch {
	case r < utf8.RuneSelf:
		if r == '\v' {
			return space
		}
		return keep
	case r == 0x2028 || r == 0x2029:
		return separator
	case r == 0xFEFF && atStart:
		return space
	case r == 0xFEFF:
		return zwnbsp
	case plainRange(r):
		return keep
	case r == 0x85 || unicode.Is(unicode.Zs, r):
		// Zs is U+00A0, U+1680, U+2000–U+200A, U+202F, U+205F and U+3000
		// (besides the ASCII space). NEL (U+0085) is not \s in JavaScript,
		// but Unicode counts it as white space and so do readers.
		return space
	case unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point):
		// Unicode's default-ignorable code points, near enough: format
		// characters (U+00AD, U+200B–U+200F, U+202A–U+202E, U+2060–U+2064,
		// bidi isolates, tags), variation selectors, Hangul fillers.
		return invisible
	default:
		return keep
	}
}

// plainRange reports whether r lies in a block of common non-ASCII text
// (Latin letters and accents, Greek to Hebrew, dashes, quotes and bullets,
// arrows and symbols, CJK, emoji) that holds no rune of the other classes,
// so that classify answers for it without the Unicode tables, which cost
// some 40 ns a rune. A test checks every rune of these ranges against them.
func plainRange(r rune) bool {
	return r >= 0xC0 && r < 0x34F || r >= 0x370 && r < 0x600 || r >= 0x2010 && r < 0x2028 ||
		r >= 0x2030 && r < 0x205F || r >= 0x2070 && r < 0x3000 || r > 0x3000 && r < 0x3164 ||
		r > 0x3164 && r < 0xFE00 || r >= 0x1F000 && r < 0xE0000
}

// view is one version of the text that gitleaks scans.
type view struct {
	text string
	// breaks lists, in order, the 0-based line of text that each newline
	// standing for a U+2028 or U+2029 ends.
	breaks []int
}

// line returns the 1-based line of the original text that holds the start
// of line l (0-based, as gitleaks numbers them) of the view.
func (v view) line(l int) int {
	before, _ := slices.BinarySearch(v.breaks, l) // breaks ending lines < l
	return l - before + 1
}

// views returns the views of content to scan: content itself, or the spaced
// view in its place, and the stripped view when content holds an invisible
// character that may sit inside a token.
func views(content string) []view {
	at := firstSpecial(content)
	if at < 0 {
		return []view{{text: content}}
	}
	spaced, stripped := survey(content, at)
	vs := []view{{text: content}}
	if spaced {
		vs[0] = rewrite(content, at, false)
	}
	if stripped {
		vs = append(vs, rewrite(content, at, true))
	}
	return vs
}

// firstSpecial returns the index of the first byte of content a view could
// change (one past ASCII, or a vertical tab), or -1 if there is none.
func firstSpecial(content string) int {
	if i := skipPlain(content, 0); i < len(content) {
		return i
	}
	return -1
}

// skipPlain returns the index of the first byte at or after i that is past
// ASCII or a vertical tab, or len(s). It tests 32 bytes at a time, as
// utf8.ValidString does, since it runs over every byte of nearly every text
// scanned.
func skipPlain(s string, i int) int {
	t := s[i:]
	for len(t) >= 32 {
		w0, w1, w2, w3 := word(t), word(t[8:]), word(t[16:]), word(t[24:])
		if (w0|w1|w2|w3|hasVT(w0)|hasVT(w1)|hasVT(w2)|hasVT(w3))&highBits != 0 {
			break
		}
		t = t[32:]
	}
	for len(t) >= 8 && (word(t)|hasVT(word(t)))&highBits == 0 {
		t = t[8:]
	}
	for i = len(s) - len(t); i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\v' {
			return i
		}
	}
	return i
}

// highBits has the top bit of each byte of a word set.
const highBits = 0x8080808080808080

// word returns the first eight bytes of s, little-endian.
func word(s string) uint64 {
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasVT returns a word with a high bit set (among others, maybe) if and only
// if a byte of w is a vertical tab: the classic zero-byte test on w with
// every byte xored with '\v'.
func hasVT(w uint64) uint64 {
	const ones, vts = 0x0101010101010101, 0x0b0b0b0b0b0b0b0b
	x := w ^ vts
	return (x - ones) &^ x
}

// survey reports whether content needs the spaced view (it holds a space or
// separator of the class table) and the stripped view (it holds a run of
// invisible characters next to no visible non-ASCII character).
//
// The stripped view is skipped when every run follows or precedes a visible
// non-ASCII character, as in emoji sequences (⚠ U+FE0F, ZWJ between emoji):
// removing the run there only joins that character to its neighbour, and no
// rule's token holds one, so the second scan could find nothing new.
//
// Everything before from is ASCII without a vertical tab.
func survey(content string, from int) (spaced, stripped bool) {
	prevWide := false // the last visible rune was non-ASCII
	for i := from; i < len(content) && !(spaced && stripped); {
		if j := skipPlain(content, i); j > i {
			prevWide = false
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(content[i:])
		cl := classify(r, i == 0)
		if cl != invisible && cl != zwnbsp {
			spaced = spaced || cl == space || cl == separator
			prevWide = cl == keep && r >= utf8.RuneSelf
			i += n
			continue
		}
		// A run of invisible characters: find its end and the rune after.
		j := i
		for j < len(content) {
			r, m := utf8.DecodeRuneInString(content[j:])
			cl := classify(r, false)
			if cl != invisible && cl != zwnbsp {
				nextWide := cl == keep && r >= utf8.RuneSelf
				stripped = stripped || !(prevWide || nextWide)
				break
			}
			spaced = spaced || cl == zwnbsp
			j += m
		}
		if j == len(content) {
			stripped = stripped || !prevWide
		}
		i = j
	}
	return spaced, stripped
}

// rewrite returns the spaced view of content, or the stripped one when
// strip is set. Everything before from is ASCII without a vertical tab, the
// same in every view.
func rewrite(content string, from int, strip bool) view {
	var b strings.Builder
	b.Grow(len(content))
	var breaks []int
	lines, done := strings.Count(content[:from], "\n"), 0 // newlines before i; content[:done] is in b
	put := func(i, n int, repl string) {
		b.WriteString(content[done:i])
		b.WriteString(repl)
		done = i + n
	}
	for i := from; i < len(content); {
		if j := skipPlain(content, i); j > i {
			lines += strings.Count(content[i:j], "\n")
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(content[i:])
		switch cl := classify(r, i == 0); {
		case cl == space, cl == zwnbsp && !strip:
			put(i, n, " ")
		case cl == separator:
			put(i, n, "\n")
			breaks = append(breaks, lines)
			lines++
		case strip && (cl == invisible || cl == zwnbsp):
			put(i, n, "")
		}
		i += n
	}
	b.WriteString(content[done:])
	return view{text: b.String(), breaks: breaks}
}
