package teammem

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// SessionNotesMaxBytes caps one upload of session-memory notes.
const SessionNotesMaxBytes = 64 << 10

// SessionMaterialMaxBytes caps the text SessionMaterial returns.
const SessionMaterialMaxBytes = 200 << 10

// sessionMaterialPage is how many versions SessionMaterial reads at once.
const sessionMaterialPage = 100

// SessionNotesCheck applies the rules of a notes upload to content before
// anything is stored: EInvalid when it is empty or not UTF-8, ETooLarge
// beyond SessionNotesMaxBytes, ESecretDetected (details "rule_ids", never
// the secret) when sc finds a secret in it for org, EUnavailable when the
// scanner cannot tell. A nil sc scans nothing.
func SessionNotesCheck(sc SecretScanner, org Org, content string) error {
	switch {
	case content == "":
		return Errorf(EInvalid, "content must not be empty")
	case len(content) > SessionNotesMaxBytes:
		return Errorf(ETooLarge, "session notes are %d bytes; at most %d (64 KiB) are accepted", len(content), SessionNotesMaxBytes).
			WithDetails(map[string]any{"max_bytes": SessionNotesMaxBytes})
	case !utf8.ValidString(content):
		return Errorf(EInvalid, "content must be valid UTF-8")
	case sc == nil:
		return nil
	}
	rules, err := secretRules(sc, org, "session-notes.md", content, "the notes")
	if err != nil || len(rules) == 0 {
		return err
	}
	return Errorf(ESecretDetected, "the notes contain what looks like a secret (rules: %s); nothing was stored", strings.Join(rules, ", ")).
		WithReason(ReasonSecretDetected).WithDetails(map[string]any{"rule_ids": rules})
}

// secretRules returns the sorted, distinct ids of the rules sc finds in
// content (scanned as the file name) for org; EUnavailable, naming what,
// when the scanner cannot tell.
func secretRules(sc SecretScanner, org Org, name, content, what string) ([]string, error) {
	var rules []string
	for _, f := range sc.ScanEntry(org, name, content) {
		if f.RuleID == RuleScannerUnavailable {
			return nil, Errorf(EUnavailable, "the secret scanner is unavailable, so %s cannot be checked", what)
		}
		if !slices.Contains(rules, f.RuleID) {
			rules = append(rules, f.RuleID)
		}
	}
	slices.Sort(rules)
	return rules, nil
}

// SessionMaterial returns, as text for a model, what the session id (a
// sesn_ id) left in the org's team spaces: the notes it uploaded, then the
// versions it wrote (path, operation and content), oldest first, at most
// SessionMaterialMaxBytes in all (the rest is cut, and says so). Personal
// spaces are left out: a dream of team memory must not read what a user
// kept to themselves. ENotFound when id is malformed or teammem knows
// nothing of the session in the org's team spaces.
func SessionMaterial(ctx context.Context, st SessionStore, orgID int64, id string) (string, error) {
	cc, err := SessionClaudeCodeID(id)
	if err != nil {
		return "", Errorf(ENotFound, "session not found")
	}
	notes, err := st.SessionNotesList(ctx, orgID, cc)
	if err != nil {
		return "", err
	}
	f := SessionVersionsFilter{TeamOnly: true, Limit: sessionMaterialPage}
	versions, err := st.SessionVersionsList(ctx, orgID, cc, f)
	if err != nil {
		return "", err
	}
	if len(notes) == 0 && len(versions) == 0 {
		return "", Errorf(ENotFound, "session not found")
	}
	m := material{max: SessionMaterialMaxBytes}
	m.add(fmt.Sprintf("# Session %s (Claude Code session %s)\n", id, cc))
	for _, n := range notes {
		m.add(fmt.Sprintf("\n## Session notes\n\n%s\n", n.Content))
	}
	if len(versions) > 0 {
		m.add("\n## Memories the session wrote\n")
	}
	// Pages of versions until the budget is spent: a long session's
	// history is never read whole.
	for len(versions) > 0 && !m.full {
		for _, v := range versions {
			m.addVersion(v)
		}
		if len(versions) < f.Limit {
			break
		}
		f.AfterID = versions[len(versions)-1].ID
		if versions, err = st.SessionVersionsList(ctx, orgID, cc, f); err != nil {
			return "", err
		}
	}
	return m.String(), nil
}

// addVersion adds one version: its path, operation and content.
func (m *material) addVersion(v EntryVersion) {
	switch {
	case v.Op == OpDelete:
		m.add(fmt.Sprintf("\n### %s (deleted)\n", v.Key))
	case v.Redacted():
		m.add(fmt.Sprintf("\n### %s (content redacted)\n", v.Key))
	default:
		m.add(fmt.Sprintf("\n### %s (%s)\n\n%s\n", v.Key, v.Op, v.Content))
	}
}

// material is text cut at max bytes on a rune boundary.
type material struct {
	strings.Builder
	max  int
	full bool
}

const materialCut = "\n[… the rest of the session's material was left out: too long]\n"

func (m *material) add(s string) {
	if m.full {
		return
	}
	room := m.max - len(materialCut) - m.Len()
	if len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		m.WriteString(s[:max(room, 0)])
		m.WriteString(materialCut)
		m.full = true
		return
	}
	m.WriteString(s)
}
