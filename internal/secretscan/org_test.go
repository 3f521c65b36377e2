package secretscan

import (
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestOrgScannerRemembersOnlyCleanValues: a short value found clean is not
// scanned again, while one holding a secret is found every time, and an
// allowlist that drops a finding applies to its own org only.
func TestOrgScannerRemembersOnlyCleanValues(t *testing.T) {
	s := NewOrgScanner(mustScanner(t))
	plain, other := teammem.Org{ID: 1}, teammem.Org{ID: 2}
	token := "ghp_" + "R7kq2Lw9Xz4Nv8Tb3Hs6Jd1Mf5Pc0Ya2Ue7G"
	for range 2 {
		if got := s.ScanEntry(plain, "client", "teammem/1.4 (linux)"); got != nil {
			t.Fatalf("clean client name: %v", got)
		}
		if got := s.ScanEntry(plain, "client", token); len(got) != 1 {
			t.Fatalf("client name holding a token: %v, want one finding each time", got)
		}
	}
	other.Settings.SecretAllowlist = teammem.Allowlist{RuleIDs: []string{"github-pat"}}
	if got := s.ScanEntry(other, "client", token); got != nil {
		t.Fatalf("allowlisted rule: %v", got)
	}
	if got := s.ScanEntry(plain, "client", token); len(got) != 1 {
		t.Fatalf("after another org allowlisted it: %v, want one finding", got)
	}
	if len(s.clean) != 2 {
		t.Errorf("remembered %d values, want 2 (the clean name; the token under the other org's allowlist)", len(s.clean))
	}
}
