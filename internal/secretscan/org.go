package secretscan

import (
	"errors"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/teammem/teammem/internal/teammem"
)

// OrgScanner adapts the scanner to the domain's SecretScanner, compiling
// each org's allowlist once per distinct setting. It is what the server's
// Writer scans with.
type OrgScanner struct {
	ready   chan struct{} // closed once scanner or err is set
	scanner *Scanner
	err     error
	mu      sync.Mutex
	allow   map[int64]compiledAllowlist
	clean   map[string]bool // short values found clean, by allowlist fingerprint and value
}

type compiledAllowlist struct {
	fingerprint string
	list        *Allowlist
}

// NewOrgScanner wraps sc.
func NewOrgScanner(sc *Scanner) *OrgScanner {
	s := &OrgScanner{ready: make(chan struct{}), scanner: sc, allow: map[int64]compiledAllowlist{}}
	close(s.ready)
	return s
}

// NewOrgScannerAsync compiles the rules with build in the background, so the
// server can listen (and answer health checks and pulls) meanwhile. Scans
// wait for it; Ready says when it is done.
func NewOrgScannerAsync(build func() (*Scanner, error)) *OrgScanner {
	s := &OrgScanner{ready: make(chan struct{}), allow: map[int64]compiledAllowlist{}}
	go func() {
		defer close(s.ready)
		s.scanner, s.err = build()
	}()
	return s
}

// largeScanBytes is the size from which a scan counts as large.
const largeScanBytes = 16 << 10

// largeScans bounds the large scans running at once to all cores but one,
// so small scans (a delta push) always find a core.
var largeScans = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))

// RuleScannerUnavailable is the rule id of the one finding ScanEntry reports
// for any content when the rules failed to compile.
// (teammem.RuleScannerUnavailable, which the write path tells apart from a
// secret in a key).
const RuleScannerUnavailable = teammem.RuleScannerUnavailable

// errScannerBuilding is Ready's answer while the rules compile.
var errScannerBuilding = errors.New("the secret scanner is still compiling its rules")

// Ready returns nil once the scanner can scan, and why not otherwise.
func (s *OrgScanner) Ready() error {
	select {
	case <-s.ready:
		return s.err
	default:
		return errScannerBuilding
	}
}

// Wait blocks until the scanner is built and returns the build's error.
func (s *OrgScanner) Wait() error {
	<-s.ready
	return s.err
}

// ScanEntry scans one entry with the org's allowlist applied. Should the
// rules have failed to compile, every entry is reported as a finding: no
// content the server could not scan is ever stored.
func (s *OrgScanner) ScanEntry(org teammem.Org, key, content string) []teammem.SkippedSecret {
	if s.Wait() != nil {
		return []teammem.SkippedSecret{{Path: key, RuleID: RuleScannerUnavailable, Label: "secret scanner unavailable", Line: 1}}
	}
	if len(content) > largeScanBytes {
		// The RE2 engine runs in WebAssembly, which the Go scheduler cannot
		// preempt: a handful of large scans at once would take every core,
		// and a small write of another org would wait for a core, not for
		// the write lock. Large scans share all but one.
		largeScans <- struct{}{}
		defer func() { <-largeScans }()
	}
	allow, fp := s.allowlist(org)
	short := len(content) <= maxCleanBytes
	if short && s.isClean(fp, content) {
		return nil
	}
	var out []teammem.SkippedSecret
	for _, f := range s.scanner.Scan(content, allow) {
		out = append(out, teammem.SkippedSecret{Path: key, RuleID: f.RuleID, Label: f.Label, Line: f.Line})
	}
	if short && len(out) == 0 {
		s.markClean(fp, content)
	}
	return out
}

// Short values found clean are remembered: every write's client name is
// scanned (it is stored with each version), and a client sends the same
// one every time. A remembered value is no secret, so keeping it in memory
// keeps none.
const (
	maxCleanBytes  = 256
	maxCleanValues = 4096
)

func (s *OrgScanner) isClean(fp, value string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clean[fp+"\x00"+value]
}

func (s *OrgScanner) markClean(fp, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clean == nil || len(s.clean) >= maxCleanValues {
		s.clean = map[string]bool{}
	}
	s.clean[fp+"\x00"+value] = true
}

// allowlist returns the org's compiled allowlist and its fingerprint.
func (s *OrgScanner) allowlist(org teammem.Org) (*Allowlist, string) {
	a := org.Settings.SecretAllowlist
	if len(a.RuleIDs) == 0 && len(a.Regexes) == 0 {
		return nil, ""
	}
	fp := strings.Join(a.RuleIDs, "\x00") + "\x01" + strings.Join(a.Regexes, "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.allow[org.ID]; ok && c.fingerprint == fp {
		return c.list, fp
	}
	list := &Allowlist{RuleIDs: a.RuleIDs}
	for _, r := range a.Regexes {
		if re, err := regexp.Compile(r); err == nil { // validated when set
			list.Regexes = append(list.Regexes, re)
		}
	}
	s.allow[org.ID] = compiledAllowlist{fingerprint: fp, list: list}
	return list, fp
}
