package poison

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/teammem/teammem/internal/ahocorasick"
)

// The rules' prefilters: every lineRE names groups of words, and a line its
// regex can match holds a word of every group. All the words are found in
// one pass over the lower-cased content by an Aho–Corasick automaton, so a
// check costs a few nanoseconds per byte however many words the rules name,
// and the regexes run only on the few lines that hold their words.

// wordMask is a set of prefilter words, by id.
type wordMask [4]uint64

const maxWords = len(wordMask{}) * 64

func (m *wordMask) add(id int) { m[id/64] |= 1 << (id % 64) }
func (m *wordMask) meets(o *wordMask) bool {
	return m[0]&o[0] != 0 || m[1]&o[1] != 0 || m[2]&o[2] != 0 || m[3]&o[3] != 0
}
func (m *wordMask) union(o *wordMask) { m[0] |= o[0]; m[1] |= o[1]; m[2] |= o[2]; m[3] |= o[3] }
func (m *wordMask) holdsAll(groups []wordMask) bool {
	for i := range groups {
		if !m.meets(&groups[i]) {
			return false
		}
	}
	return true
}

// automaton finds the prefilter words: ac over the lower-cased content,
// and masks[state] the words that end in each of its states.
type automaton struct {
	ac    *ahocorasick.Automaton
	masks []wordMask
	any   []bool // any[state]: masks[state] holds a word
}

// prefilterRules lists every lineRE, so that the automaton of all their
// words and each one's masks are built together, once.
func prefilterRules() []*lineRE {
	all := []*lineRE{&concealRE, &commandVerbRE, &unaskedRunRE, &unaskedRunVerb, &unaskedRunQualifier, &riskyRE, &unaskedRE, &downloadRE}
	for i := range overrideREs {
		all = append(all, &overrideREs[i])
	}
	for i := range concealOtherREs {
		all = append(all, &concealOtherREs[i])
	}
	for i := range fetchExecREs {
		all = append(all, &fetchExecREs[i])
	}
	return all
}

// prefilter builds the automaton from every rule's words and sets each
// rule's masks.
var prefilter = sync.OnceValue(func() *automaton {
	ids := map[string]int{}
	var words []string
	for _, r := range prefilterRules() {
		r.masks = make([]wordMask, len(r.need))
		for g, group := range r.need {
			for _, w := range group {
				id, ok := ids[w]
				if !ok {
					id = len(words)
					ids[w] = id
					words = append(words, w)
				}
				r.masks[g].add(id)
			}
		}
		// The rules read the views, which are lower case: the regexes are
		// written case-insensitive, for readers and for any other text, and
		// run without the flag, which costs the engine a case fold per rune.
		if src, ok := strings.CutPrefix(r.re.String(), "(?i)"); ok {
			r.re = regexp.MustCompile(src)
		}
		if r.lead != nil {
			body, ok := strings.CutPrefix(r.re.String(), `\b`)
			if !ok {
				panic("poison: a lineRE with lead words must start with (?i)\\b: " + r.re.String())
			}
			r.at = regexp.MustCompile(`\A(?:` + body + `)`)
		}
	}
	if len(words) > maxWords {
		panic(fmt.Sprintf("poison: %d prefilter words, at most %d", len(words), maxWords))
	}
	return newAutomaton(words)
})

func newAutomaton(words []string) *automaton {
	a := &automaton{ac: ahocorasick.New(words, false)}
	a.masks = make([]wordMask, a.ac.States())
	for s := range a.masks {
		for _, id := range a.ac.Out(int32(s)) {
			a.masks[s].add(int(id))
		}
	}
	a.any = make([]bool, len(a.masks))
	for s, m := range a.masks {
		a.any[s] = m != (wordMask{})
	}
	return a
}

// lineWords returns, for each line of lower (lines end at '\n'), the
// prefilter words it holds.
func (a *automaton) lineWords(lower string, lines int) []wordMask {
	out := make([]wordMask, lines)
	line, s := 0, ahocorasick.Start
	for i := 0; i < len(lower); i++ {
		b := lower[i]
		if b == '\n' {
			line++
			s = ahocorasick.Start
			continue
		}
		s = a.ac.Step(s, b)
		if a.any[s] {
			out[line].union(&a.masks[s])
		}
	}
	return out
}
