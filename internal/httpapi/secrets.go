package httpapi

import (
	"regexp"
	"strings"
	"sync"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// Scanner adapts the shared secret scanner to the domain's SecretScanner,
// compiling each org's allowlist once per distinct setting.
type Scanner struct {
	scanner *secretscan.Scanner
	mu      sync.Mutex
	allow   map[int64]compiledAllowlist
}

type compiledAllowlist struct {
	fingerprint string
	list        *secretscan.Allowlist
}

// NewScanner wraps sc.
func NewScanner(sc *secretscan.Scanner) *Scanner {
	return &Scanner{scanner: sc, allow: map[int64]compiledAllowlist{}}
}

// ScanEntry scans one entry with the org's allowlist applied.
func (s *Scanner) ScanEntry(org teammem.Org, key, content string) []teammem.SkippedSecret {
	var out []teammem.SkippedSecret
	for _, f := range s.scanner.Scan(content, s.allowlist(org)) {
		out = append(out, teammem.SkippedSecret{Path: key, RuleID: f.RuleID, Label: f.Label, Line: f.Line})
	}
	return out
}

func (s *Scanner) allowlist(org teammem.Org) *secretscan.Allowlist {
	a := org.Settings.SecretAllowlist
	if len(a.RuleIDs) == 0 && len(a.Regexes) == 0 {
		return nil
	}
	fp := strings.Join(a.RuleIDs, "\x00") + "\x01" + strings.Join(a.Regexes, "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.allow[org.ID]; ok && c.fingerprint == fp {
		return c.list
	}
	list := &secretscan.Allowlist{RuleIDs: a.RuleIDs}
	for _, r := range a.Regexes {
		if re, err := regexp.Compile(r); err == nil { // validated when set
			list.Regexes = append(list.Regexes, re)
		}
	}
	s.allow[org.ID] = compiledAllowlist{fingerprint: fp, list: list}
	return list
}
