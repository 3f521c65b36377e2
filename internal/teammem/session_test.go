package teammem_test

import (
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

func TestSessionIDMapping(t *testing.T) {
	const cc = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	const id = "sesn_0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d"
	for _, in := range []string{cc, strings.ToUpper(cc), strings.ReplaceAll(cc, "-", "")} {
		if got, err := teammem.SessionPublicID(in); err != nil || got != id {
			t.Errorf("SessionPublicID(%q) = %q, %v; want %q", in, got, err, id)
		}
	}
	if got, err := teammem.SessionClaudeCodeID(id); err != nil || got != cc {
		t.Errorf("SessionClaudeCodeID = %q, %v", got, err)
	}
	for _, bad := range []string{"", "not-a-uuid", cc + "0", "0a1b2c3d4e5f-4a6b-8c7d-9e0f1a2b3c4d-", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4g"} {
		if _, err := teammem.SessionPublicID(bad); teammem.ErrorCode(err) != teammem.EInvalid {
			t.Errorf("SessionPublicID(%q) = %v, want invalid", bad, err)
		}
	}
	for _, bad := range []string{"", "sesn_", strings.ToUpper(id), "sess_0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d", id + "0", id[:len(id)-1],
		"sesn_" + cc, "sesn_0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4g", "sesn_0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4D"} {
		if _, err := teammem.SessionClaudeCodeID(bad); teammem.ErrorCode(err) != teammem.EInvalid {
			t.Errorf("SessionClaudeCodeID(%q) = %v, want invalid", bad, err)
		}
	}
}

// fixedScanner finds one secret in any content holding "SECRET".
type fixedScanner struct{}

func (fixedScanner) ScanEntry(_ teammem.Org, key, content string) []teammem.SkippedSecret {
	if strings.Contains(content, "SECRET") {
		return []teammem.SkippedSecret{{Path: key, RuleID: "test-rule", Label: "Test", Line: 1}}
	}
	return nil
}

func TestSessionNotesCheck(t *testing.T) {
	for _, c := range []struct {
		content, code string
	}{
		{"ok notes", ""},
		{"", teammem.EInvalid},
		{"\xff", teammem.EInvalid},
		{strings.Repeat("x", teammem.SessionNotesMaxBytes), ""},
		{strings.Repeat("x", teammem.SessionNotesMaxBytes+1), teammem.ETooLarge},
		{"a SECRET here", teammem.ESecretDetected},
	} {
		err := teammem.SessionNotesCheck(fixedScanner{}, teammem.Org{}, c.content)
		if teammem.ErrorCode(err) != c.code && !(c.code == "" && err == nil) {
			t.Errorf("SessionNotesCheck(%.20q) = %v, want %q", c.content, err, c.code)
		}
	}
	err := teammem.SessionNotesCheck(fixedScanner{}, teammem.Org{}, "a SECRET here")
	if rules, _ := teammem.ErrorDetails(err)["rule_ids"].([]string); len(rules) != 1 || rules[0] != "test-rule" || strings.Contains(teammem.ErrorMessage(err), "SECRET") {
		t.Errorf("refusal = %v (%v)", err, teammem.ErrorDetails(err))
	}
}
