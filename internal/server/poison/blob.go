package poison

import (
	"regexp"
	"strings"
)

// base64RE and hexRE define the runs the rule looks at; checkBlob finds
// them with the scans below, which a test holds to these regexes: a
// counted repetition of 120 is a large program for a regex engine, which
// made this rule the slowest per byte on long lines.
var (
	// base64RE: standard or URL-safe alphabet, padding allowed.
	base64RE = regexp.MustCompile(`[A-Za-z0-9+/_-]{120,}={0,2}`)
	hexRE    = regexp.MustCompile(`\b[0-9a-fA-F]{160,}\b`)
)

// Run lengths of base64RE and hexRE.
const (
	minBase64Run = 120
	minHexRun    = 160
)

// blobEntropy is the least Shannon entropy (bits per character) of a
// base64 run; random base64 has close to 6, identifiers and paths far less.
const blobEntropy = 4.5

func checkBlob(d *doc) []hit {
	var out []hit
	for i, line := range d.lines {
		if hasHexWord(line) {
			out = append(out, hit{line: i + 1})
			continue
		}
		for _, m := range base64Runs(line) {
			if looksBase64(m) {
				out = append(out, hit{line: i + 1})
				break
			}
		}
	}
	return out
}

func isBase64Byte(c byte) bool { return isWordByte(c) || c == '+' || c == '/' || c == '-' }

func isHexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// base64Runs returns base64RE's matches in line: every maximal run of the
// alphabet of at least minBase64Run bytes, with up to two '=' after it.
func base64Runs(line string) []string {
	var out []string
	for i := 0; i < len(line); {
		if !isBase64Byte(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && isBase64Byte(line[j]) {
			j++
		}
		if j-i >= minBase64Run {
			for k := 0; k < 2 && j < len(line) && line[j] == '='; k++ {
				j++
			}
			out = append(out, line[i:j])
		}
		i = j
	}
	return out
}

// hasHexWord reports whether hexRE matches line: a word (a maximal run of
// letters, digits and '_') of at least minHexRun bytes, all hex digits.
func hasHexWord(line string) bool {
	for i := 0; i < len(line); {
		if !isWordByte(line[i]) {
			i++
			continue
		}
		j, hex := i, true
		for j < len(line) && isWordByte(line[j]) {
			hex = hex && isHexByte(line[j])
			j++
		}
		if hex && j-i >= minHexRun {
			return true
		}
		i = j
	}
	return false
}

// looksBase64 reports whether a run of the base64 alphabet is encoded data
// rather than a long path or identifier: it mixes upper case, lower case
// and digits, has few separators and a high entropy.
func looksBase64(s string) bool {
	var upper, lower, digit bool
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9':
			digit = true
		}
	}
	seps := strings.Count(s, "/") + strings.Count(s, "-") + strings.Count(s, "_")
	return upper && lower && digit && seps*16 <= len(s) && entropy(s) >= blobEntropy
}
