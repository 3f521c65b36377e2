package secretscan

import (
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/zricethezav/gitleaks/v8/detect/codec"
)

// generate writes to b a random string meant to match re: a random branch
// of each alternation, a random count of each repeat, a random member of
// each class and, under (?i), a random case of each letter. Empty-width
// assertions are not enforced, so callers check the result with the real
// regex.
func generate(r *rand.Rand, re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				c = randomFold(r, c)
			}
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		i := r.IntN(len(re.Rune)/2) * 2
		lo, hi := re.Rune[i], re.Rune[i+1]
		if hi-lo > 300 {
			hi = lo + 300 // stay near the start of huge ranges, mostly ASCII
		}
		b.WriteRune(lo + rune(r.IntN(int(hi-lo)+1)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteRune(rune(' ' + r.IntN(95)))
	case syntax.OpCapture:
		generate(r, re.Sub[0], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 || hi > lo+3 {
				hi = lo + 3
			}
		}
		for range lo + r.IntN(hi-lo+1) {
			generate(r, re.Sub[0], b)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			generate(r, s, b)
		}
	case syntax.OpAlternate:
		generate(r, re.Sub[r.IntN(len(re.Sub))], b)
	}
}

// randomFold returns a random member of c's case-folding orbit (for 'k'
// and 's', the Kelvin sign and the long s too).
func randomFold(r *rand.Rand, c rune) rune {
	orbit := []rune{c}
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	return orbit[r.IntN(len(orbit))]
}

// contexts are what generated matches are embedded in: nothing, prose, and
// text with non-ASCII letters around.
var contexts = [][2]string{
	{"", ""},
	{"- the deploy notes say: ", " and then\nmore prose follows.\n"},
	{"Überblick — Schlüssel → ", " ✓ İstanbul\n"},
}

// ruleMatches returns, for every rule of s with a regex, texts its regex
// matches, made by generate and embedded in each of contexts.
func ruleMatches(t *testing.T, s *Scanner, perRule int) map[string][]string {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	out := map[string][]string{}
	for id, rule := range s.det.Config.Rules {
		if rule.Regex == nil {
			continue
		}
		re, err := syntax.Parse(rule.Regex.String(), syntax.Perl)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		for range perRule {
			var b strings.Builder
			generate(r, re, &b)
			c := contexts[r.IntN(len(contexts))]
			text := c[0] + b.String() + c[1]
			if rule.Regex.MatchString(text) {
				out[id] = append(out[id], text)
			}
		}
	}
	return out
}

// TestPrefilterKeepsEveryRuleThatMatches: for text that a rule's regex
// matches and that holds one of its keywords (so gitleaks runs it), the
// prefilter keeps the rule, for every rule of the default config.
func TestPrefilterKeepsEveryRuleThatMatches(t *testing.T) {
	s := mustScanner(t)
	if s.pre == nil {
		t.Fatal("no prefilter for the default rules")
	}
	matched := 0
	for id, texts := range ruleMatches(t, s, 60) {
		rule := s.det.Config.Rules[id]
		i, _ := slices.BinarySearch(s.pre.rules, id)
		for _, text := range texts {
			lower := strings.ToLower(text)
			if len(rule.Keywords) > 0 && !slices.ContainsFunc(rule.Keywords, func(k string) bool { return strings.Contains(lower, k) }) {
				continue // gitleaks would not run the rule
			}
			if rule.SkipReport || (rule.Path != nil && !rule.Path.MatchString("")) {
				continue
			}
			matched++
			set, ok := s.pre.candidates(text)
			if !ok || !set.has(i) {
				t.Errorf("%s: its regex matches %q, but the prefilter leaves the rule out", id, text)
			}
		}
	}
	if matched < 5000 {
		t.Fatalf("only %d generated matches: the generator lost its way", matched)
	}
}

// TestPrefilterFindsWhatGitleaksFinds: Scan with the prefilter reports
// exactly what the full detector reports, on the samples, the memory files,
// and generated matches of every rule.
func TestPrefilterFindsWhatGitleaksFinds(t *testing.T) {
	s := mustScanner(t)
	full := &Scanner{det: s.det}
	check := func(t *testing.T, where, text string) {
		t.Helper()
		got, want := s.Scan(text, nil), full.Scan(text, nil)
		if !slices.Equal(got, want) {
			t.Errorf("%s: prefiltered %v, full %v", where, got, want)
		}
	}
	forEachSet(t, func(t *testing.T, set sampleSet) {
		for _, smp := range append(slices.Clone(set.tp), set.fp...) {
			check(t, smp.where, smp.text)
		}
		for path, content := range set.memdir {
			check(t, path, content)
		}
	})
	t.Run("generated", func(t *testing.T) {
		for id, texts := range ruleMatches(t, s, 8) {
			for _, text := range texts {
				check(t, id, text)
			}
		}
	})
}

// TestPrefilterSkipsProse: text no rule can match is not handed to gitleaks,
// although it holds keywords of several rules ("ey", "s.", "api", "secret").
func TestPrefilterSkipsProse(t *testing.T) {
	s := mustScanner(t)
	text := "# Notes\n\n- they keep the api docs and the secret handshake notes in the wiki.\n- ask them.\n"
	if d := s.detector(text); d != nil {
		t.Errorf("prose goes to a detector of %d rules, want none", len(d.Config.Rules))
	}
	withKey := text + "- aws key AKIAIOSFODNN7EXAMPLE\n"
	if d := s.detector(withKey); d == nil || len(d.Config.Rules) >= len(s.det.Config.Rules) {
		t.Errorf("a text with an AWS key goes to %v, want a detector of a few rules", d)
	}
	for _, bad := range []string{"key \xff\xfe", "%41%42 and more"} {
		if d := s.detector(bad); d != s.det {
			t.Errorf("%q: want the full detector (not UTF-8, or something to decode)", bad)
		}
	}
}

// TestMayDecodeCoversTheDecoder: text mayDecode says has nothing to decode
// is text in which gitleaks' decoder finds nothing.
func TestMayDecodeCoversTheDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"%4", "%41", "%4g", "U+0041 ", "u+0041", "\\u0041", "\\\\u0041", "U+", "+", "/", "-", "_", "=", "==",
		"aGVsbG8gd29ybGQh", "aGVsbG8gd29ybGQhIHRoaXMgaXMgYmFzZTY0", "0123456789abcdef", "0123456789abcdef0123456789abcdef",
		"word ", "words. ", "a", "Z", "9", " ", "\n", "é", "→"}
	var texts []string
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	forEachSet(t, func(t *testing.T, set sampleSet) {
		for _, smp := range append(slices.Clone(set.tp), set.fp...) {
			texts = append(texts, smp.text)
		}
		for _, content := range set.memdir {
			texts = append(texts, content)
		}
	})
	skipped := 0
	for _, text := range texts {
		if mayDecode(text) {
			continue
		}
		skipped++
		if _, segments := codec.NewDecoder().Decode(text, nil); len(segments) > 0 {
			t.Errorf("mayDecode(%q) = false, but the decoder finds %d segments", text, len(segments))
		}
	}
	if skipped < 1000 {
		t.Fatalf("only %d texts without anything to decode", skipped)
	}
}

func TestRegexNeeds(t *testing.T) {
	tests := []struct {
		expr string
		want []need // in order of strength
	}{
		{`abc`, []need{{"ABC"}}},
		{`(?i)key|token`, []need{{"KEY", "TOKEN"}}},
		// The letter before ".ey" is the last of the repeat; "EY" and a
		// letter is weaker.
		{`\b(ey[a-z]{3,}\.ey)`, []need{{"A.EY", "B.EY", "C.EY", "D.EY", "E.EY", "F.EY", "G.EY", "H.EY", "I.EY", "J.EY", "K.EY", "L.EY", "M.EY",
			"N.EY", "O.EY", "P.EY", "Q.EY", "R.EY", "S.EY", "T.EY", "U.EY", "V.EY", "W.EY", "X.EY", "Y.EY", "Z.EY"}}},
		{`s\.[a-c0-1]{5}`, []need{{"S.0", "S.1", "S.A", "S.B", "S.C"}}},
		{`x*y?`, nil},
		{`(?:ab|c)d`, []need{{"ABD", "CD"}}},
		{`a.*b`, nil}, // single letters: nearly any text holds them
		{`%%[=:]`, []need{{"%%:", "%%="}}},
		// Parsed as gh(?:p_[0-9]+|o_.+).
		{`(?:ghp_[0-9]+|gho_.+)`, []need{{"GH"}, {"O_", "P_0", "P_1", "P_2", "P_3", "P_4", "P_5", "P_6", "P_7", "P_8", "P_9"}}},
		{`verylongliteral`, []need{{"VERYLONG"}}},
		{`(?:abc){0,3}xyz`, []need{{"XYZ"}}}, // no copy needed
		{`(?:abc){2}`, []need{{"ABCABC"}}},
	}
	for _, tt := range tests {
		got, ok := regexNeeds(tt.expr)
		if !ok {
			t.Errorf("%s: does not parse", tt.expr)
			continue
		}
		if len(got) > len(tt.want) {
			got = got[:len(tt.want)]
		}
		if !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("%s: needs %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// TestCanonRuneFollowsFolding: runes RE2 matches under (?i) (one case
// folding orbit), and a rune and its lower case (gitleaks looks for
// keywords in the lower-cased text), have one canonical form.
func TestCanonRuneFollowsFolding(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unicode.IsPrint(r) && r > 0x7f {
			continue
		}
		c := canonRune(r)
		if a, ok := foldsToASCII()[r]; (c < 0x80 && r >= 0x80) != ok || ok && rune(a) != c {
			t.Errorf("canonRune(%q) = %q, but foldsToASCII has %q, %v", r, c, a, ok)
		}
		if l := canonRune(unicode.ToLower(r)); l != c {
			t.Errorf("canonRune(%q) = %q, but of its lower case %q", r, c, l)
		}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if canonRune(f) != c {
				t.Errorf("canonRune(%q) = %q, but of %q in its orbit %q", r, c, f, canonRune(f))
			}
		}
	}
}
