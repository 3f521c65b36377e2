package poison

import (
	"strings"
	"unicode/utf8"
)

// isInvisible reports whether r is a zero-width or invisible format character.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200D, r >= 0x2060 && r <= 0x2064, r == 0xFEFF, r == 0x180E:
		return true
	}
	return false
}

func isBidi(r rune) bool { return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) }

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// blackFlag starts an emoji tag sequence (a subdivision flag such as
// England's): U+1F3F4, tag letters or digits, U+E007F.
const blackFlag = 0x1F3F4

func checkInvisible(d *doc) []hit {
	return runeHits(d, func(line string, i int, r rune) bool {
		if !isInvisible(r) {
			return false
		}
		if r == 0xFEFF && i == 0 && line == d.lines[0] {
			return false // a byte order mark
		}
		if r == 0x200C || r == 0x200D {
			// A joiner between two non-ASCII characters shapes emoji or
			// script (Persian, Indic); next to ASCII it only hides.
			prev, _ := utf8.DecodeLastRuneInString(line[:i])
			next, _ := utf8.DecodeRuneInString(line[i+utf8.RuneLen(r):])
			return prev < 0x80 || next < 0x80
		}
		return true
	})
}

func checkBidi(d *doc) []hit {
	return runeHits(d, func(_ string, _ int, r rune) bool { return isBidi(r) })
}

func checkTags(d *doc) []hit {
	var out []hit
	for n, line := range d.lines {
		// Tag characters are U+E0000–U+E007F: F3 A0 in UTF-8.
		if d.ascii[n] || !strings.Contains(line, "\xf3\xa0") || wellFormedTagsOnly(line) {
			continue
		}
		for _, r := range line {
			if isTag(r) {
				out = append(out, hit{line: n + 1})
				break
			}
		}
	}
	return out
}

// wellFormedTagsOnly reports whether every tag character of line belongs to
// an emoji tag sequence: U+1F3F4, then 1–7 tags for lowercase letters or
// digits, then CANCEL TAG.
func wellFormedTagsOnly(line string) bool {
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		if !isTag(rs[i]) {
			continue
		}
		if i == 0 || rs[i-1] != blackFlag {
			return false
		}
		j := i
		for j < len(rs) && isTag(rs[j]) && rs[j] != 0xE007F {
			t := rs[j] - 0xE0000
			if !(t >= 'a' && t <= 'z') && !(t >= '0' && t <= '9') {
				return false
			}
			j++
		}
		if j == i || j-i > 7 || j >= len(rs) || rs[j] != 0xE007F {
			return false
		}
		i = j
	}
	return true
}

// runeHits returns one hit per line holding a rune bad says is bad.
func runeHits(d *doc, bad func(line string, i int, r rune) bool) []hit {
	var out []hit
	for n, line := range d.lines {
		if d.ascii[n] {
			continue
		}
		for i, r := range line {
			if bad(line, i, r) {
				out = append(out, hit{line: n + 1})
				break
			}
		}
	}
	return out
}
