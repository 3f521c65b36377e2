// Package poisontest makes the adversarial input the poisoning checks'
// linearity is measured on: text built to make a line-by-line regex, an
// anchored search from every keyword, a pairing of two ends or a
// normaliser do more than a constant amount of work per byte. The
// package's benchmark and linearity test and the bench's poisoning row
// (cmd/bench) all read it from here.
package poisontest

import (
	"fmt"
	"strings"
)

// Kind is one shape of adversarial input: a name for reports and a
// generator of about n bytes.
type Kind struct {
	Name string
	Make func(n int) string
}

// repeat returns unit repeated to about n bytes, then tail.
func repeat(unit string, n int, tail string) string {
	return strings.Repeat(unit, max(1, (n-len(tail))/len(unit))) + tail
}

// Kinds are every shape, each aimed at one way a rule could turn
// superlinear.
var Kinds = []Kind{
	// A fetch word over and over on one line, a pipe and a non-shell at the
	// end: an anchored search from each "curl" reads to the pipe.
	{"fetch words then pipe", func(n int) string { return repeat("curl x ", n, "| y sh") }},
	// "iex" many times and a download word that is not a word on its own.
	{"iex then no download", func(n int) string { return repeat("iex ", n, "xiwr") }},
	// Every qualifier before every verb: a pairing of the two ends that
	// tries each pair is quadratic.
	{"qualifiers before verbs", func(n int) string {
		return repeat("without asking ", n/2, "") + repeat(" run", n/2, "")
	}},
	// Near-matches of an override, one after the other on one line.
	{"override near-matches", func(n int) string { return repeat("ignore all previous instruct ", n, "") }},
	// Near-matches of a concealment.
	{"concealment near-matches", func(n int) string { return repeat("do not tell the users_ ", n, "") }},
	// Partial keywords of every family on short lines.
	{"partial keywords", func(n int) string {
		return repeat("ignor previou instructio disregar syste promp curl wge | s conceal fro use\n", n, "")
	}},
	// Letters spaced out, for a run that never ends in a phrase.
	{"spaced letters", func(n int) string { return repeat("i g n o r e p r e v i o u ", n, "") }},
	// A keyword, a long run of spaces and tabs, and the next keyword.
	{"pathological spacing", func(n int) string {
		return repeat("ignore"+strings.Repeat(" \t", 500)+"previous"+strings.Repeat(" ", 1000)+"x\n", n, "")
	}},
	// Quotes and backslashes inside words and line continuations.
	{"shell quoting", func(n int) string { return repeat("c'u'r'l' -o x \\\n", n, "") }},
	// Markdown emphasis and zero-width characters between letters.
	{"emphasis and invisibles", func(n int) string { return repeat("**ig**\u200bno*re* _pre_vi\u200dous ", n, "") }},
	// Homoglyphs on one long line, never a phrase: the non-ASCII path.
	{"homoglyph near-matches", func(n int) string { return repeat("іgnore prevіous іnstructіon ", n, "") }},
	// Downloads to many files and executions of other files.
	{"downloads and runs of other files", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "curl -o a%d.sh https://x.example/%d && sh b%d.sh\n", i, i, i)
		}
		return b.String()
	}},
	// A run verb and a qualifier just past the gap, over and over.
	{"run gap just too long", func(n int) string {
		return repeat("run "+strings.Repeat("x", 121)+" without asking ", n, "")
	}},
}

// Adversarial returns about n bytes made of every Kind in turn.
func Adversarial(n int) string {
	var b strings.Builder
	for _, k := range Kinds {
		b.WriteString(k.Make(n / len(Kinds)))
		b.WriteByte('\n')
	}
	return b.String()
}
