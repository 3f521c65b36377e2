// Package ahocorasick finds every occurrence of many words in one pass over
// a text: a deterministic Aho–Corasick automaton over byte classes, a table
// lookup per byte however many words there are. The poisoning checks and
// the secret scanner's rule prefilter both match with it.
package ahocorasick

import "fmt"

// Automaton is built once by New and is safe for concurrent use.
type Automaton struct {
	class   [256]uint8
	classes int
	shift   uint      // rows of next are 1<<shift wide, at least classes
	next    []uint16  // next[state<<shift|class[b]]: the state after byte b
	out     [][]int32 // out[state]: the ids of the words that end there, its suffixes' included
	hit     []bool    // hit[state]: out[state] is not empty
}

// Start is the state before any byte.
const Start int32 = 0

// MaxStates bounds the automaton, whose transitions are 16 bits wide: the
// words may hold about that many bytes.
const MaxStates = 1 << 16

// New returns the automaton of words; a word's id is its index. With
// foldASCII set, ASCII letters match either case (the words may be written
// in either). Empty words never match. It panics past MaxStates: the words
// are a program's own, not its input.
func New(words []string, foldASCII bool) *Automaton {
	a := &Automaton{classes: 1} // class 0: a byte no word holds
	key := func(b byte) byte {
		if foldASCII && 'a' <= b && b <= 'z' {
			return b - 'a' + 'A'
		}
		return b
	}
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if k := key(w[i]); a.class[k] == 0 {
				a.class[k] = uint8(a.classes)
				a.classes++
			}
		}
	}
	if foldASCII {
		for b := 'a'; b <= 'z'; b++ {
			a.class[b] = a.class[b-'a'+'A']
		}
	}
	a.link(a.trie(words))
	return a
}

// trie adds every word to a trie whose missing edges are -1.
func (a *Automaton) trie(words []string) []int32 {
	next := a.edges()
	a.out = [][]int32{nil}
	for id, w := range words {
		if w == "" {
			continue
		}
		s := Start
		for i := 0; i < len(w); i++ {
			c := int(s)*a.classes + int(a.class[w[i]])
			if next[c] < 0 {
				next[c] = int32(len(a.out))
				next = append(next, a.edges()...)
				a.out = append(a.out, nil)
			}
			s = next[c]
		}
		a.out[s] = append(a.out[s], int32(id))
	}
	if len(a.out) > MaxStates {
		panic(fmt.Sprintf("ahocorasick: %d states, at most %d", len(a.out), MaxStates))
	}
	return next
}

func (a *Automaton) edges() []int32 {
	e := make([]int32, a.classes)
	for i := range e {
		e[i] = -1
	}
	return e
}

// link makes the trie deterministic, breadth first: a missing edge goes
// where the longest proper suffix's goes, and a state's words include its
// longest proper suffix's.
func (a *Automaton) link(next []int32) {
	fail := make([]int32, len(a.out))
	var queue []int32
	for c := 0; c < a.classes; c++ {
		if t := next[c]; t < 0 {
			next[c] = Start
		} else {
			queue = append(queue, t)
		}
	}
	order := []int32{Start} // the states breadth first
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		order = append(order, s)
		if f := a.out[fail[s]]; len(f) > 0 {
			a.out[s] = append(a.out[s][:len(a.out[s]):len(a.out[s])], f...)
		}
		for c := 0; c < a.classes; c++ {
			i := int(s)*a.classes + c
			f := next[int(fail[s])*a.classes+c]
			if t := next[i]; t < 0 {
				next[i] = f
			} else {
				fail[t] = f
				queue = append(queue, t)
			}
		}
	}
	// Renumbered breadth first, the shallow states a text mostly stays in
	// share the first rows of the table, which then stay in cache.
	number := make([]int32, len(order))
	for i, s := range order {
		number[s] = int32(i)
	}
	// Rows a power of two wide spare a multiplication per byte.
	for 1<<a.shift < a.classes {
		a.shift++
	}
	a.next = make([]uint16, len(order)<<a.shift)
	out := make([][]int32, len(a.out))
	for i, s := range order {
		out[i] = a.out[s]
		for c := 0; c < a.classes; c++ {
			a.next[i<<a.shift|c] = uint16(number[next[int(s)*a.classes+c]])
		}
	}
	a.out = out
	a.hit = make([]bool, len(a.out))
	for s, o := range a.out {
		a.hit[s] = len(o) > 0
	}
}

// Step returns the state after byte b in state s.
func (a *Automaton) Step(s int32, b byte) int32 {
	return int32(a.next[uint32(s)<<a.shift|uint32(a.class[b])])
}

// Walk steps a through text from state s and returns the state it ends
// in, setting the bit of every state passed in which words end in seen (a
// bitset of at least States() bits, 64 a word).
func Walk[T ~string | ~[]byte](a *Automaton, s int32, text T, seen []uint64) int32 {
	next, class, shift, hits := a.next, &a.class, a.shift, a.hit
	u := uint32(s)
	for i := 0; i < len(text); i++ {
		u = uint32(next[u<<shift|uint32(class[text[i]])])
		if hits[u] {
			seen[u/64] |= 1 << (u % 64)
		}
	}
	return int32(u)
}

// Out returns the ids of the words that end in state s; callers must not
// change it.
func (a *Automaton) Out(s int32) []int32 { return a.out[s] }

// States returns the number of states; they are numbered from Start.
func (a *Automaton) States() int { return len(a.out) }
