package ahocorasick

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// found returns the ids of the words a finds in text, by Walk.
func found(a *Automaton, text string) []int32 {
	seen := make([]uint64, (a.States()+63)/64)
	Walk(a, Start, text, seen)
	var ids []int32
	for w, word := range seen {
		for ; word != 0; word &= word - 1 {
			ids = append(ids, a.Out(int32(w*64+bits.TrailingZeros64(word)))...)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// TestFindsWhatIndexFinds: every word the automaton reports occurs in the
// text and every word that occurs is reported, with and without ASCII case
// folding, on random words and texts over a small alphabet (many overlaps).
func TestFindsWhatIndexFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(n int) string {
		const alphabet = "abAB.-é"
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for round := range 300 {
		fold := round%2 == 1
		words := make([]string, 1+r.IntN(40))
		for i := range words {
			words[i] = random(r.IntN(6))
		}
		a := New(words, fold)
		for range 20 {
			text := random(r.IntN(80))
			var want []int32
			for id, w := range words {
				t, w := text, w
				if fold {
					t, w = asciiUpper(t), asciiUpper(w)
				}
				if w != "" && strings.Contains(t, w) {
					want = append(want, int32(id))
				}
			}
			if got := found(a, text); !slices.Equal(got, want) {
				t.Fatalf("words %q (fold %v) in %q: found %v, want %v", words, fold, text, got, want)
			}
		}
	}
}

// TestStepIsWalk: stepping byte by byte ends where Walk does.
func TestStepIsWalk(t *testing.T) {
	a := New([]string{"he", "she", "his", "hers"}, false)
	text := "ushers and this"
	s := Start
	for i := 0; i < len(text); i++ {
		s = a.Step(s, text[i])
	}
	if w := Walk(a, Start, text, make([]uint64, 1)); w != s {
		t.Errorf("Step ends in %d, Walk in %d", s, w)
	}
}

// asciiUpper upper-cases ASCII letters only, leaving every other byte (the
// random texts are not all UTF-8) as it is.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
