package main

import (
	"math/rand/v2"
	"strings"
)

// words is the vocabulary of generated memory text: ordinary engineering
// prose, with some of the keywords (api, key, token, secret, auth) that
// make gitleaks run its regexes, as real memory files do.
var words = strings.Fields(`the a we use run tests build deploy service database migration index query cache
	pull push sync client server repo branch review commit flaky retry timeout config env staging production
	api key token secret auth login user team memory file note remember prefer avoid always never because
	when after before should must go make lint format check ci pipeline docker compose postgres sqlite
	handler route request response error log metric alert dashboard owner member latency throughput`)

// prose returns about n bytes of Markdown-like text: a title, then lines of
// words, from a generator seeded with seed, so the same seed gives the same
// text.
func prose(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x7465616d))
	var b strings.Builder
	b.Grow(n + 80)
	b.WriteString("# Notes ")
	b.WriteString(words[r.IntN(len(words))])
	b.WriteString("\n\n")
	line := 0
	for b.Len() < n {
		w := words[r.IntN(len(words))]
		if line == 0 {
			b.WriteString("- ")
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		line += len(w) + 1
		if line > 70+r.IntN(40) {
			b.WriteString(".\n")
			line = 0
		}
	}
	s := b.String()
	if len(s) > n {
		s = s[:n]
	}
	return s + "\n"
}
