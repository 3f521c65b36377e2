package secretscan

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a rule's regex needs. gitleaks runs a rule over the whole text as
// soon as one of its keywords appears anywhere in it, and in ordinary notes
// several do ("ey" for JWTs, "s." for Vault tokens, "api", "secret"): a 2 KB
// note cost four passes of RE2 and found nothing. needs derives from the
// regex itself what any match must contain: a few sets of strings, each of
// which the match holds one of. The prefilter (prefilter.go) finds all of
// them in one pass, and a rule whose sets are not all met cannot match.
//
// The analysis only ever weakens what it knows (a part it cannot follow
// needs nothing), so a rule it keeps out truly cannot match: a JWT needs
// ".ey" and a Vault token "s." followed by a letter or digit, which prose
// rarely holds.
//
// Strings are compared in a canonical case: each rune is replaced by the
// smallest rune of its lower case's case-folding orbit (for ASCII, the
// upper case), in the needs as in the text. (?i), which RE2 matches by
// those orbits, is covered, and so are gitleaks' keywords, which it looks
// for in the lower-cased text; case-sensitive parts then need a little less
// than they could.

// need is one set of strings of which a match holds at least one.
type need []string

// Bounds that keep the analysis, and the prefilter's automaton, small.
const (
	maxExact     = 64 // strings in an exact set
	maxClass     = 40 // runes of a character class followed exactly
	maxClassScan = 256
	maxNeeds     = 3 // needs kept per regex, the strongest
	maxNeedBytes = 8
)

// info is what the analysis knows about a part of a regex: when exact is
// set, the part matches exactly the strings of set (canonical); needs holds
// in any case.
type info struct {
	exact bool
	set   []string
	needs []need
}

// regexNeeds returns what every match of the RE2 pattern expr needs, and
// false when the pattern does not parse (it then needs nothing known).
func regexNeeds(expr string) ([]need, bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	in := analyze(re)
	needs := in.needs
	if in.exact {
		needs = append(needs, in.set)
	}
	return strongest(needs), true
}

func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpNoMatch:
		return info{exact: true, set: []string{}}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return info{exact: true, set: []string{""}}
	case syntax.OpLiteral:
		return info{exact: true, set: []string{canonString(string(re.Rune))}}
	case syntax.OpCharClass:
		if set, ok := classSet(re.Rune); ok {
			return info{exact: true, set: set}
		}
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpQuest:
		if in := analyze(re.Sub[0]); in.exact {
			return info{exact: true, set: union(in.set, []string{""})}
		}
	case syntax.OpPlus:
		return repeatInfo(re.Sub[0], 1, -1)
	case syntax.OpRepeat:
		return repeatInfo(re.Sub[0], re.Min, re.Max)
	case syntax.OpAlternate:
		return alternateInfo(re.Sub)
	case syntax.OpConcat:
		return concatInfo(re.Sub)
	}
	// OpAnyChar, OpAnyCharNotNL, OpStar, large classes: anything.
	return info{}
}

// repeatInfo is sub{min,max} (max -1: unbounded): exact when small, else
// what one copy needs when there must be one.
func repeatInfo(sub *syntax.Regexp, min, max int) info {
	in := analyze(sub)
	if min == 0 {
		return info{}
	}
	if in.exact && max == min {
		set := []string{""}
		for range min {
			if set = cross(set, in.set); set == nil {
				break
			}
		}
		if set != nil {
			return info{exact: true, set: set}
		}
	}
	if in.exact {
		return info{needs: []need{in.set}}
	}
	return info{needs: in.needs}
}

// alternateInfo is a|b|…: the union when every branch is exact, else one
// need of a string from each branch's strongest need.
func alternateInfo(subs []*syntax.Regexp) info {
	infos := make([]info, len(subs))
	var set []string
	exact := true
	for i, s := range subs {
		infos[i] = analyze(s)
		exact = exact && infos[i].exact
		set = union(set, infos[i].set)
	}
	if exact && len(set) <= maxExact {
		return info{exact: true, set: set}
	}
	var all need
	for _, in := range infos {
		n := in.needs
		if in.exact {
			n = append(n, in.set)
		}
		best := strongest(n)
		if len(best) == 0 {
			return info{} // a branch that needs nothing
		}
		all = union(all, best[0])
	}
	return info{needs: []need{all}}
}

// concatInfo is a b …: adjacent exact parts make a run of strings that must
// appear whole; a repeated exact part ends one run and starts the next with
// its last copy; anything else ends the run and adds its own needs.
func concatInfo(subs []*syntax.Regexp) info {
	var needs []need
	var run []string // the strings the parts since the last break can spell, ending here
	open := false    // run is set
	exact := true
	flush := func() {
		if open {
			needs = append(needs, run)
		}
		run, open = nil, false
	}
	extend := func(set []string) {
		if !open {
			run, open = set, true
			return
		}
		if next := cross(run, set); next != nil {
			run = next
			return
		}
		exact = false
		flush()
		run, open = set, true
	}
	for _, s := range subs {
		in := analyze(s)
		if in.exact {
			extend(in.set)
			continue
		}
		exact = false
		if copy, ok := repeatedExact(s); ok {
			// Its first copy follows the run; its last precedes what follows.
			extend(copy)
			flush()
			run, open = copy, true
			continue
		}
		flush()
		needs = append(needs, in.needs...)
	}
	if exact && open {
		return info{exact: true, set: run}
	}
	flush()
	return info{needs: needs}
}

// repeatedExact returns the exact set of one copy of s when s is a repeat
// of at least one copy of an exact part (x+, x{n,m} with n ≥ 1).
func repeatedExact(s *syntax.Regexp) ([]string, bool) {
	if (s.Op == syntax.OpPlus || (s.Op == syntax.OpRepeat && s.Min >= 1)) && len(s.Sub) == 1 {
		if in := analyze(s.Sub[0]); in.exact {
			return in.set, true
		}
	}
	return nil, false
}

// strongest returns the needs that say most, at most maxNeeds of them,
// their strings cut to maxNeedBytes. It drops those that nearly any text
// meets: a need of nothing, or one met by a single letter, digit or space.
func strongest(needs []need) []need {
	var out []need
	for _, n := range needs {
		if !slices.ContainsFunc(n, common) {
			out = append(out, cut(n))
		}
	}
	slices.SortStableFunc(out, func(a, b need) int { return needScore(b) - needScore(a) })
	return out[:min(len(out), maxNeeds)]
}

// common reports whether s is a string nearly every text holds.
func common(s string) bool {
	if len(s) > 1 {
		return false
	}
	if s == "" {
		return true
	}
	b := s[0]
	return b == ' ' || b == '\t' || b == '\n' || '0' <= b && b <= '9' || 'A' <= b && b <= 'Z' || b == '_'
}

// cut shortens every string of n to at most maxNeedBytes (on a rune
// boundary): a match holding a string holds its prefix.
func cut(n need) need {
	out := make(need, len(n))
	for i, s := range n {
		if len(s) > maxNeedBytes {
			end := maxNeedBytes
			for end > 0 && !utf8.RuneStart(s[end]) {
				end--
			}
			s = s[:end]
		}
		out[i] = s
	}
	return union(nil, out)
}

// needScore ranks a need: its shortest string's length counts most, then
// having fewer strings.
func needScore(n need) int {
	shortest := 1 << 20
	for _, s := range n {
		shortest = min(shortest, len(s))
	}
	if len(n) == 0 {
		return 1 << 30 // met by nothing: the rule cannot match at all
	}
	return shortest*1000 - len(n)
}

// cross returns every a+b, or nil when there would be more than maxExact.
func cross(as, bs []string) []string {
	if len(as)*len(bs) > maxExact {
		return nil
	}
	out := make([]string, 0, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			out = append(out, a+b)
		}
	}
	return union(nil, out)
}

// union returns the distinct strings of a and b, sorted.
func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// classSet returns the canonical runes of a character class, as strings,
// when there are few.
func classSet(ranges []rune) ([]string, bool) {
	n := 0
	for i := 0; i < len(ranges); i += 2 {
		if n += int(ranges[i+1]-ranges[i]) + 1; n > maxClassScan {
			return nil, false
		}
	}
	var set []string
	for i := 0; i < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			set = append(set, string(canonRune(r)))
		}
	}
	set = union(nil, set)
	return set, len(set) <= maxClass
}

// canonRune returns the smallest rune of the case-folding orbit of r's
// lower case.
func canonRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	r = unicode.ToLower(r)
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		low = min(low, f)
	}
	return low
}

// canonString maps every rune of s to canonRune.
func canonString(s string) string {
	return strings.Map(canonRune, s)
}
