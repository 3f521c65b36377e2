package poison

import (
	"regexp"
	"strings"
)

var (
	// base64RE: standard or URL-safe alphabet, padding allowed.
	base64RE = regexp.MustCompile(`[A-Za-z0-9+/_-]{120,}={0,2}`)
	hexRE    = regexp.MustCompile(`\b[0-9a-fA-F]{160,}\b`)
)

// blobEntropy is the least Shannon entropy (bits per character) of a
// base64 run; random base64 has close to 6, identifiers and paths far less.
const blobEntropy = 4.5

func checkBlob(d *doc) []hit {
	var out []hit
	for i, line := range d.lines {
		if hexRE.MatchString(line) {
			out = append(out, hit{line: i + 1})
			continue
		}
		for _, m := range base64RE.FindAllString(line, -1) {
			if looksBase64(m) {
				out = append(out, hit{line: i + 1})
				break
			}
		}
	}
	return out
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
