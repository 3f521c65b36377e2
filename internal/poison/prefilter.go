package poison

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The rules' prefilters: every lineRE names groups of words, and a line its
// regex can match holds a word of every group. All the words are found in
// one pass over the lower-cased content by an Aho–Corasick automaton, so a
// check costs a few nanoseconds per byte however many words the rules name,
// and the regexes run only on the few lines that hold their words.

// wordMask is a set of prefilter words, by id.
type wordMask [3]uint64

const maxWords = len(wordMask{}) * 64

func (m *wordMask) add(id int)           { m[id/64] |= 1 << (id % 64) }
func (m wordMask) meets(o wordMask) bool { return m[0]&o[0] != 0 || m[1]&o[1] != 0 }
func (m *wordMask) union(o wordMask)     { m[0] |= o[0]; m[1] |= o[1] }
func (m wordMask) holdsAll(groups []wordMask) bool {
	for _, g := range groups {
		if !m.meets(g) {
			return false
		}
	}
	return true
}

// automaton is a deterministic Aho–Corasick automaton over byte classes:
// next[state*classes+class[b]] is the state after byte b, and out[state]
// the words that end there (its own and those of its suffixes).
type automaton struct {
	class   [256]uint8
	classes int
	next    []int32
	out     []wordMask
}

// prefilterRules lists every lineRE, so that the automaton of all their
// words and each one's masks are built together, once.
func prefilterRules() []*lineRE {
	all := []*lineRE{&concealRE, &commandVerbRE, &unaskedRunRE, &unaskedRunVerb, &unaskedRunQualifier, &riskyRE, &unaskedRE, &httpLine}
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

// httpLine is url-data's prefilter; it has no regex of its own.
var httpLine = lineRE{need: [][]string{{"http"}}}

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
		if r.lead != nil {
			body, ok := strings.CutPrefix(r.re.String(), `(?i)\b`)
			if !ok {
				panic("poison: a lineRE with lead words must start with (?i)\\b: " + r.re.String())
			}
			r.at = regexp.MustCompile(`(?i)\A(?:` + body + `)`)
		}
	}
	if len(words) > maxWords {
		panic(fmt.Sprintf("poison: %d prefilter words, at most %d", len(words), maxWords))
	}
	return newAutomaton(words)
})

func newAutomaton(words []string) *automaton {
	a := &automaton{classes: 1} // class 0: a byte no word holds
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if a.class[w[i]] == 0 {
				a.class[w[i]] = uint8(a.classes)
				a.classes++
			}
		}
	}
	// The trie, with -1 for a missing edge.
	edge := func() []int32 {
		e := make([]int32, a.classes)
		for i := range e {
			e[i] = -1
		}
		return e
	}
	a.next = edge()
	a.out = []wordMask{{}}
	for id, w := range words {
		s := int32(0)
		for i := 0; i < len(w); i++ {
			c := int32(s)*int32(a.classes) + int32(a.class[w[i]])
			if a.next[c] < 0 {
				a.next[c] = int32(len(a.out))
				a.next = append(a.next, edge()...)
				a.out = append(a.out, wordMask{})
			}
			s = a.next[c]
		}
		a.out[s].add(id)
	}
	// Breadth first: a missing edge goes where the longest proper suffix
	// goes, and a state's words include its suffix's.
	fail := make([]int32, len(a.out))
	var queue []int32
	for c := 0; c < a.classes; c++ {
		if t := a.next[c]; t < 0 {
			a.next[c] = 0
		} else {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		a.out[s].union(a.out[fail[s]])
		for c := 0; c < a.classes; c++ {
			i := int(s)*a.classes + c
			f := a.next[int(fail[s])*a.classes+c]
			if t := a.next[i]; t < 0 {
				a.next[i] = f
			} else {
				fail[t] = f
				queue = append(queue, t)
			}
		}
	}
	return a
}

// lineWords returns, for each line of lower (lines end at '\n'), the
// prefilter words it holds.
func (a *automaton) lineWords(lower string, lines int) []wordMask {
	out := make([]wordMask, lines)
	line, s := 0, int32(0)
	for i := 0; i < len(lower); i++ {
		b := lower[i]
		if b == '\n' {
			line++
			s = 0
			continue
		}
		s = a.next[int(s)*a.classes+int(a.class[b])]
		if m := a.out[s]; m != (wordMask{}) {
			out[line].union(m)
		}
	}
	return out
}
