package secretscan

import (
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/detect/codec"

	"github.com/teammem/teammem/internal/ahocorasick"
)

// The prefilter hands gitleaks only the rules that can match. It finds
// every rule's needs (needs.go) and keywords in one Aho–Corasick pass over
// the text; the rules whose needs are all met make up the detector the text
// is scanned with (one detector per distinct set of rules, kept), and text
// no rule can match is not scanned at all. A detector of fewer rules finds
// exactly what the full one finds, because every rule left out would have
// found nothing: its regex cannot match, or gitleaks would not have run it
// (no keyword), or it matches file paths only and memory text has none.
//
// Decoding is the exception: gitleaks scans what it decodes (base64, hex,
// percent and \u escapes) with every rule, so text with anything to decode
// goes to the full detector.

// ruleSet is a set of rules, by index in prefilter.rules.
type ruleSet [4]uint64

const maxRules = len(ruleSet{}) * 64

func (s *ruleSet) add(i int)       { s[i/64] |= 1 << (i % 64) }
func (s ruleSet) has(i int) bool   { return s[i/64]&(1<<(i%64)) != 0 }
func (s ruleSet) empty() bool      { return s == ruleSet{} }
func (s *ruleSet) union(o ruleSet) { s[0] |= o[0]; s[1] |= o[1]; s[2] |= o[2]; s[3] |= o[3] }

// prefilter is built once per Scanner from its config.
type prefilter struct {
	cfg   config.Config
	rules []string // rule ids, sorted
	// needs[i] are the ids of rule i's needs (all must be met); a rule that
	// can never fire on memory text is in none of the candidates.
	needs    [][]int32
	never    ruleSet
	required []ruleSet // rules each rule's multi-part findings look up
	ac       *ahocorasick.Automaton
	// meets[state] are the needs met when a string ends in that state.
	meets [][]int32
	nNeed int
	// asciiNeeds: no need holds a rune past ASCII.
	asciiNeeds bool

	mu        sync.Mutex
	detectors map[ruleSet]*detect.Detector
}

// maxDetectors bounds the kept detectors; past it they are built afresh.
const maxDetectors = 512

// newPrefilter analyses cfg's rules, or returns nil when there are too many
// to track (every scan then uses the full detector).
func newPrefilter(cfg config.Config) *prefilter {
	p := &prefilter{cfg: cfg, rules: slices.Sorted(maps.Keys(cfg.Rules)), detectors: map[ruleSet]*detect.Detector{}}
	if len(p.rules) > maxRules {
		return nil
	}
	index := map[string]int{}
	for i, id := range p.rules {
		index[id] = i
	}
	words := map[string]int32{} // string → id
	var list []string
	var wordNeeds [][]int32       // string id → need ids
	needIDs := map[string]int32{} // a need's strings, joined → its id: rules share equal needs
	p.needs = make([][]int32, len(p.rules))
	p.required = make([]ruleSet, len(p.rules))
	for i, id := range p.rules {
		r := cfg.Rules[id]
		for _, req := range r.RequiredRules {
			if j, ok := index[req.RuleID]; ok {
				p.required[i].add(j)
			}
		}
		needs, ok := ruleNeeds(r)
		if !ok {
			p.never.add(i)
			continue
		}
		for _, n := range needs {
			key := strings.Join(n, "\x00")
			nid, seen := needIDs[key]
			p.needs[i] = append(p.needs[i], nid)
			if seen {
				continue
			}
			nid = int32(p.nNeed)
			p.nNeed++
			needIDs[key] = nid
			p.needs[i][len(p.needs[i])-1] = nid
			for _, s := range n {
				w, seen := words[s]
				if !seen {
					w = int32(len(list))
					words[s] = w
					list = append(list, s)
					wordNeeds = append(wordNeeds, nil)
				}
				wordNeeds[w] = append(wordNeeds[w], nid)
			}
		}
	}
	p.ac = ahocorasick.New(list, true)
	p.asciiNeeds = ascii(strings.Join(list, ""))
	p.meets = make([][]int32, p.ac.States())
	for s := range p.meets {
		var ns []int32
		for _, w := range p.ac.Out(int32(s)) {
			ns = append(ns, wordNeeds[w]...)
		}
		slices.Sort(ns)
		p.meets[s] = slices.Compact(ns)
	}
	return p
}

// ruleNeeds returns what a finding of r needs in the text: its regex's
// needs and one of its keywords. It returns false for a rule that never
// reports a finding on text without a file path.
func ruleNeeds(r config.Rule) ([]need, bool) {
	if r.Regex == nil || r.SkipReport || (r.Path != nil && !r.Path.MatchString("")) {
		return nil, false
	}
	needs, _ := regexNeeds(r.Regex.String())
	if len(r.Keywords) > 0 {
		var kw need
		for _, k := range r.Keywords {
			kw = append(kw, canonString(k))
		}
		needs = append(needs, cut(union(nil, kw)))
	}
	return needs, true
}

// candidates returns the rules that could report a finding in text, and
// false when it cannot tell (the text is not valid UTF-8).
func (p *prefilter) candidates(text string) (ruleSet, bool) {
	passed := make([]uint64, (len(p.meets)+63)/64)
	if ascii(text) {
		ahocorasick.Walk(p.ac, ahocorasick.Start, text, passed)
	} else {
		canon, ok := p.canon(text)
		if !ok {
			return ruleSet{}, false // not UTF-8: RE2 may read it otherwise
		}
		ahocorasick.Walk(p.ac, ahocorasick.Start, canon, passed)
	}
	met := make([]uint64, (p.nNeed+63)/64)
	for w, word := range passed {
		for ; word != 0; word &= word - 1 {
			for _, n := range p.meets[w*64+bits.TrailingZeros64(word)] {
				met[n/64] |= 1 << (n % 64)
			}
		}
	}
	var out ruleSet
	for i, needs := range p.needs {
		if p.never.has(i) {
			continue
		}
		all := true
		for _, n := range needs {
			if met[n/64]&(1<<(n%64)) == 0 {
				all = false
				break
			}
		}
		if all {
			out.add(i)
		}
	}
	return out, true
}

// detectorFor returns the detector of the rules in set and of those their
// multi-part findings look up, for text with nothing to decode, set up as
// like otherwise.
func (p *prefilter) detectorFor(candidates ruleSet, like *detect.Detector) *detect.Detector {
	p.mu.Lock()
	d, ok := p.detectors[candidates]
	p.mu.Unlock()
	if ok {
		return d
	}
	set := candidates
	for i := range p.rules {
		if candidates.has(i) {
			set.union(p.required[i])
		}
	}
	cfg := p.cfg
	cfg.Rules, cfg.Keywords, cfg.OrderedRules = map[string]config.Rule{}, map[string]struct{}{}, nil
	for i, id := range p.rules {
		if set.has(i) {
			r := p.cfg.Rules[id]
			cfg.Rules[id] = r
			cfg.OrderedRules = append(cfg.OrderedRules, id)
			for _, k := range r.Keywords {
				cfg.Keywords[strings.ToLower(k)] = struct{}{}
			}
		}
	}
	d = detect.NewDetector(cfg)
	// Text handed to it has nothing to decode (the decoder found nothing):
	// no decoding pass, which would find nothing again.
	d.MaxDecodeDepth, d.IgnoreGitleaksAllow = 0, like.IgnoreGitleaksAllow
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.detectors) >= maxDetectors {
		clear(p.detectors)
	}
	p.detectors[candidates] = d
	return d
}

// canon returns text in canonical case (see needs.go). When every need is
// ASCII, a rune whose canonical form is not ASCII can be no part of one:
// each becomes the one byte 0x80, which no need holds either, and only the
// few that fold to ASCII (the Kelvin sign, the long s, the dotted capital
// I) are looked up. It returns false for text that is not UTF-8.
func (p *prefilter) canon(text string) ([]byte, bool) {
	out := make([]byte, 0, len(text)+len(text)/2)
	for i := 0; i < len(text); {
		if b := text[i]; b < utf8.RuneSelf {
			out = append(out, b)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			return nil, false
		}
		i += size
		switch c, ok := foldsToASCII()[r]; {
		case ok:
			out = append(out, c)
		case p.asciiNeeds:
			out = append(out, utf8.RuneSelf)
		default:
			out = utf8.AppendRune(out, canonRune(r))
		}
	}
	return out, true
}

// foldsToASCII maps the runes past ASCII whose canonical form is ASCII to
// it. Only runes with a case mapping can fold (unicode.CaseRanges), or be
// in the orbit of an ASCII letter.
var foldsToASCII = sync.OnceValue(func() map[rune]byte {
	m := map[rune]byte{}
	add := func(r rune) {
		if c := canonRune(r); r >= utf8.RuneSelf && c < utf8.RuneSelf {
			m[r] = byte(c)
		}
	}
	for _, cr := range unicode.CaseRanges {
		for r := rune(cr.Lo); r <= rune(cr.Hi); r++ {
			add(r)
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			add(f)
		}
	}
	return m
})

// ascii reports whether text is all ASCII.
func ascii(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// mayDecode reports whether gitleaks' decoder could find anything in text
// to decode. Its four encodings each need one of: a '%' (percent), "U+" or
// a backslash (\u escapes), or a run of 16 characters of [\w/+-] (base64,
// and hex, whose runs are of 32).
func mayDecode(text string) bool {
	run := 0
	for i := 0; i < len(text); i++ {
		switch b := text[i]; {
		case b == '%' || b == '\\' || b == '+' && i > 0 && text[i-1] == 'U':
			return true
		case base64Byte(b):
			if run++; run >= 16 {
				return true
			}
		default:
			run = 0
		}
	}
	return false
}

func base64Byte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '/' || b == '+' || b == '-'
}

// decodes reports whether gitleaks' decoder finds something to decode in
// text.
func decodes(text string) bool {
	if !mayDecode(text) {
		return false
	}
	_, segments := codec.NewDecoder().Decode(text, nil)
	return len(segments) > 0
}
