// Package secretscan finds credentials in text before it is shared.
//
// The teammem server and client both scan memory files with the same rules:
// gitleaks' complete default rule set, compiled once per process. The text
// is normalised first so that they find what Claude Code's own scanner
// finds: Unicode spaces end a token, and invisible characters inside one do
// not hide it (see normalize.go). Findings name the rule and the line, never
// the matched text, so they are safe to log, return to clients and store.
package secretscan

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// maxDecodeDepth is how many rounds of base64, hex, percent and unicode
// decoding gitleaks applies before matching again. It matches the gitleaks
// command line default, so an encoded token is caught as it would be there.
const maxDecodeDepth = 5

// Scanner reports secrets in text. Get it from New; it is safe for
// concurrent use.
type Scanner struct {
	det *detect.Detector
	pre *prefilter // nil: every text goes to det
}

// Allowlist names findings a caller accepts. A nil *Allowlist accepts nothing.
type Allowlist struct {
	// RuleIDs drops every finding of these gitleaks rule ids.
	RuleIDs []string
	// Regexes drops a finding whose matched secret text matches any of them.
	Regexes []*regexp.Regexp
}

// drops reports whether a finding of rule ruleID with matched text secret is
// allowed. The secret is only read here and never kept.
func (a *Allowlist) drops(ruleID, secret string) bool {
	if a == nil {
		return false
	}
	if slices.Contains(a.RuleIDs, ruleID) {
		return true
	}
	return slices.ContainsFunc(a.Regexes, func(re *regexp.Regexp) bool {
		return re.MatchString(secret)
	})
}

// shared holds the process-wide Scanner, built on the first call to New.
var shared struct {
	once sync.Once
	s    *Scanner
	err  error
}

// New returns the process-wide Scanner. The first call compiles gitleaks'
// default rules (about 45 ms with the stdlib regexp engine, 200 ms with
// -tags gore2regex); later calls return the same Scanner at once. The error is that of the first build and cannot occur with
// the embedded rules unless the gitleaks module is broken.
func New() (*Scanner, error) {
	shared.once.Do(func() {
		shared.s, shared.err = build(true)
	})
	return shared.s, shared.err
}

// build compiles gitleaks' embedded default config into a new Scanner,
// without the stop word tries when lean is set.
func build(lean bool) (s *Scanner, err error) {
	// gitleaks logs matched secrets at trace level; a no-op logger makes sure
	// nothing it writes can leak content, whatever level is configured.
	logging.Logger = zerolog.Nop()

	// Translate panics on a rule regexp the engine rejects; report it instead.
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("compile gitleaks rules: %v", r)
		}
	}()

	// A private viper keeps the process-wide one free for other packages.
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("read gitleaks default config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("decode gitleaks default config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("compile gitleaks rules: %w", err)
	}

	if lean {
		dropStopwordTries(&cfg)
	}
	det := detect.NewDetector(cfg)
	det.MaxDecodeDepth = maxDecodeDepth
	// A "gitleaks:allow" comment must not let a secret through to a shared
	// store; callers opt out explicitly with an Allowlist instead.
	det.IgnoreGitleaksAllow = true
	return &Scanner{det: det, pre: newPrefilter(cfg)}, nil
}

// dropStopwordTries rebuilds every allowlist that has stop words without
// its Aho-Corasick trie of them. The generic-api-key rule's ~1,500 stop
// words made an 8.5 MB trie, the largest thing a server holds; without it
// gitleaks checks each stop word with strings.Contains, which gives the same
// answer and runs only for candidate secrets of those rules, never per byte
// scanned. An allowlist of stop words alone keeps its trie: it cannot be
// validated without them.
func dropStopwordTries(cfg *config.Config) {
	rebuild := func(lists []*config.Allowlist) {
		for i, a := range lists {
			if len(a.StopWords) == 0 || len(a.Commits)+len(a.Paths)+len(a.Regexes) == 0 {
				continue
			}
			b := &config.Allowlist{Description: a.Description, MatchCondition: a.MatchCondition, Commits: a.Commits,
				Paths: a.Paths, RegexTarget: a.RegexTarget, Regexes: a.Regexes}
			if err := b.Validate(); err != nil {
				continue // keep the original, which validated
			}
			b.StopWords = a.StopWords // already lower-cased and deduplicated
			lists[i] = b
		}
	}
	for _, r := range cfg.Rules {
		rebuild(r.Allowlists) // shares the map value's backing array
	}
	rebuild(cfg.Allowlists)
}

// Scan returns the distinct (rule id, line) findings in content, sorted by
// line then rule id, minus those allow drops. It returns nil when nothing is
// found. Unicode spaces and line separators end a token as they do for
// Claude Code's scanner, and a token with invisible characters inside (zero
// width, soft hyphen) is found too; lines are the original's, counted by
// "\n".
func (s *Scanner) Scan(content string, allow *Allowlist) []Finding {
	if content == "" {
		return nil
	}
	seen := make(map[Finding]bool)
	var out []Finding
	// Each view is the content as gitleaks would need to see it to find
	// what Claude Code finds (see normalize.go); usually content itself.
	// A token found in two views is one finding: same rule, same line.
	for _, v := range views(content) {
		// One detector serves all goroutines: DetectString only reads the
		// compiled rules and keyword prefilter and adds to an atomic byte
		// count. The detector's unguarded state (its findings slice, commit
		// map) is touched only by gitleaks' own file and git scans, which we
		// never call.
		det := s.detector(v.text)
		if det == nil {
			continue // no rule can match
		}
		for _, gf := range det.DetectString(v.text) {
			// gf carries the secret, the match and the whole line; only the
			// rule id and line number leave this loop.
			if allow.drops(gf.RuleID, gf.Secret) {
				continue
			}
			f := Finding{RuleID: gf.RuleID, Label: Label(gf.RuleID), Line: v.line(gf.StartLine)}
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), strings.Compare(a.RuleID, b.RuleID))
	})
	return out
}

// detector returns the detector of the rules that could find something in
// text (see prefilter.go), or nil when none could.
func (s *Scanner) detector(text string) *detect.Detector {
	if s.pre == nil {
		return s.det
	}
	set, ok := s.pre.candidates(text)
	if !ok || decodes(text) {
		return s.det
	}
	if set.empty() {
		return nil
	}
	return s.pre.detectorFor(set, s.det)
}
