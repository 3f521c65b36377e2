package httpapi

import (
	"errors"
	"regexp"
	"strings"
	"sync"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// Scanner adapts the shared secret scanner to the domain's SecretScanner,
// compiling each org's allowlist once per distinct setting.
type Scanner struct {
	ready   chan struct{} // closed once scanner or err is set
	scanner *secretscan.Scanner
	err     error
	mu      sync.Mutex
	allow   map[int64]compiledAllowlist
}

type compiledAllowlist struct {
	fingerprint string
	list        *secretscan.Allowlist
}

// NewScanner wraps sc.
func NewScanner(sc *secretscan.Scanner) *Scanner {
	s := &Scanner{ready: make(chan struct{}), scanner: sc, allow: map[int64]compiledAllowlist{}}
	close(s.ready)
	return s
}

// NewScannerAsync compiles the rules with build in the background, so the
// server can listen (and answer health checks and pulls) meanwhile. Scans
// wait for it; Ready says when it is done.
func NewScannerAsync(build func() (*secretscan.Scanner, error)) *Scanner {
	s := &Scanner{ready: make(chan struct{}), allow: map[int64]compiledAllowlist{}}
	go func() {
		defer close(s.ready)
		s.scanner, s.err = build()
	}()
	return s
}

// ruleScannerUnavailable is the rule id of the one finding ScanEntry reports
// for any content when the rules failed to compile.
const ruleScannerUnavailable = "scanner-unavailable"

// errScannerBuilding is Ready's answer while the rules compile.
var errScannerBuilding = errors.New("the secret scanner is still compiling its rules")

// Ready returns nil once the scanner can scan, and why not otherwise.
func (s *Scanner) Ready() error {
	select {
	case <-s.ready:
		return s.err
	default:
		return errScannerBuilding
	}
}

// Wait blocks until the scanner is built and returns the build's error.
func (s *Scanner) Wait() error {
	<-s.ready
	return s.err
}

// ScanEntry scans one entry with the org's allowlist applied. Should the
// rules have failed to compile, every entry is reported as a finding: no
// content the server could not scan is ever stored.
func (s *Scanner) ScanEntry(org teammem.Org, key, content string) []teammem.SkippedSecret {
	if s.Wait() != nil {
		return []teammem.SkippedSecret{{Path: key, RuleID: ruleScannerUnavailable, Label: "secret scanner unavailable", Line: 1}}
	}
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

// secretFields spells, for error messages, the fields RefuseSecret checks;
// the error's details name them by these keys.
var secretFields = map[string]string{
	"name":   "the key name",
	"repo":   "the repo slug",
	"client": "the client name (the X-Teammem-Client header, else User-Agent)",
}

// RefuseSecret returns an invalid error when value, something the server
// stores and shows besides entry content (a key name, a repo slug, a client
// name: field is one of "name", "repo", "client"), holds a secret as sc
// finds them for org, and nil otherwise or when sc is nil. The entry scan
// never reads these values, yet they are listed to admins, kept in every
// version's history and written to the audit log, so a token pasted into
// one would be shared as surely as one in an entry. The error names the
// field and the rule, never the value. teammem-server admin create-key
// refuses key names with it too.
func RefuseSecret(sc teammem.SecretScanner, org teammem.Org, field, value string) error {
	if sc == nil || value == "" {
		return nil
	}
	found := sc.ScanEntry(org, field, value)
	if len(found) == 0 {
		return nil
	}
	f := found[0]
	if f.RuleID == ruleScannerUnavailable {
		// Not the caller's fault, and nothing unscanned is stored either.
		return teammem.Errorf(teammem.EUnavailable, "the secret scanner is unavailable, so %s cannot be checked", secretFields[field])
	}
	return teammem.Errorf(teammem.EInvalid, "%s holds what looks like a secret (%s); use one without it", secretFields[field], f.Label).
		WithDetails(map[string]any{"field": field, "rule_id": f.RuleID, "label": f.Label})
}

// refuseSecret is RefuseSecret with the server's scanner.
func (s *Server) refuseSecret(org teammem.Org, field, value string) error {
	return RefuseSecret(s.writer.Scanner, org, field, value)
}

// refuseWriteSecrets refuses a write whose client name holds a secret, or
// whose repo slug does when the write would create the repo: the one is
// stored with every entry version written, the other names the repo for
// good. An existing repo was checked when it was created. A refused client
// name fails the write rather than being replaced, so that a client sending
// one learns it at once.
func (s *Server) refuseWriteSecrets(sr *spaceReq, clientID string) error {
	if sr.repo.ID == 0 {
		if err := s.refuseSecret(sr.p.Org, "repo", sr.slug); err != nil {
			return err
		}
	}
	return s.refuseSecret(sr.p.Org, "client", clientID)
}
