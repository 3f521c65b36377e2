package poison

import (
	"math"
	"net/url"
	"regexp"
	"strings"
)

var (
	urlRE = regexp.MustCompile("(?i)\\bhttps?://[^\\s>\"'`)\\]]+")
	// mdImageRE: an image the renderer fetches without a click, with a query.
	mdImageRE = regexp.MustCompile(`!\[[^\]]*\]\(\s*<?https?://[^)\s]*\?[^)\s]+`)
	// templatedRE: a value for the agent to fill in.
	templatedRE = regexp.MustCompile(`^<|\$\{|\{\{|\$\(|\$[A-Za-z_]|<[A-Za-z_][A-Za-z0-9_ -]*>|%[sv]|\{[A-Za-z_][A-Za-z0-9_]*\}`)
	// exfilHosts are request collectors and tunnels.
	exfilHosts = []string{"webhook.site", "requestbin", "pipedream.net", "ngrok.io", "ngrok-free.app", "ngrok.app",
		"burpcollaborator.net", "oastify.com", "interact.sh", "oast.fun", "oast.pro", "canarytokens.com", "hookbin.com", "beeceptor.com"}
)

// Thresholds of a query value that carries data.
const (
	longValue     = 64  // characters, decoded
	entropicValue = 24  // characters, decoded, when also high-entropy
	entropyBits   = 4.0 // Shannon bits per character
)

func checkURLData(d *doc) []hit {
	var out []hit
	for i, line := range d.lines {
		if !hasHTTP(line) {
			continue
		}
		if mdImageRE.MatchString(line) {
			out = append(out, hit{line: i + 1})
			continue
		}
		for _, raw := range urlRE.FindAllString(line, -1) {
			if urlCarriesData(raw) {
				out = append(out, hit{line: i + 1})
				break
			}
		}
	}
	return out
}

// hasHTTP reports whether line holds "http" in any case, which every URL
// urlRE finds starts with.
func hasHTTP(line string) bool {
	for i := 0; i+4 <= len(line); i++ {
		if line[i]|0x20 == 'h' && line[i+1]|0x20 == 't' && line[i+2]|0x20 == 't' && line[i+3]|0x20 == 'p' {
			return true
		}
	}
	return false
}

// urlCarriesData reports whether a URL's query holds a long, high-entropy
// or templated value, or the URL goes to a request collector with a query.
func urlCarriesData(raw string) bool {
	qi := strings.IndexByte(raw, '?')
	if qi < 0 {
		return false
	}
	rawQuery := strings.TrimRight(raw[qi+1:], ".,;:!")
	if rawQuery == "" {
		return false
	}
	if u, err := url.Parse(raw); err == nil {
		host := strings.ToLower(u.Hostname())
		for _, h := range exfilHosts {
			if host == h || strings.HasSuffix(host, "."+h) || strings.Contains(host, h) {
				return true
			}
		}
	}
	for _, pair := range strings.Split(rawQuery, "&") {
		_, v, _ := strings.Cut(pair, "=")
		if dec, err := url.QueryUnescape(v); err == nil {
			v = dec
		}
		if templatedRE.MatchString(v) {
			return true
		}
		if len(v) >= longValue || (len(v) >= entropicValue && hasLetterAndDigit(v) && entropy(v) >= entropyBits) {
			return true
		}
	}
	return false
}

func hasLetterAndDigit(s string) bool {
	letter, digit := false, false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
