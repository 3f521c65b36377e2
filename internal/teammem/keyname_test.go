package teammem_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// fakeScanner reports a secret in any text holding "SECRET", or, when
// down, that it cannot scan anything.
type fakeScanner struct{ down bool }

func (s fakeScanner) ScanEntry(_ teammem.Org, key, content string) []teammem.SkippedSecret {
	switch {
	case s.down:
		return []teammem.SkippedSecret{{Path: key, RuleID: teammem.RuleScannerUnavailable, Label: "secret scanner unavailable", Line: 1}}
	case strings.Contains(content, "SECRET"):
		return []teammem.SkippedSecret{{Path: key, RuleID: "fake", Label: "Fake", Line: 1}}
	}
	return nil
}

// TestWriterKeyNames: a key holding a secret skips its file (or, under
// reject, refuses the write) like content does, reported as WithheldKey
// with the key's checksum; a refusal for another reason that would name
// such a key names the rule instead; and a scanner that cannot scan
// withholds nothing (the write fails closed as before).
func TestWriterKeyNames(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	org, err := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	owner := teammem.Principal{Org: org, User: teammem.User{Role: teammem.RoleOwner}}
	write := func(sc teammem.SecretScanner, p teammem.Principal, req teammem.WriteRequest) (teammem.WriteResult, error) {
		w := &teammem.Writer{Store: db, Scanner: sc, Defaults: teammem.DefaultServerDefaults}
		// No client name: its check would refuse every write while the
		// scanner is down, before the entries these cases are about.
		return w.Write(ctx, teammem.WriteCall{Principal: p, Repo: "o/r", Scope: teammem.ScopeTeam, Request: req})
	}
	up := func(key, content string) teammem.WriteRequest {
		return teammem.WriteRequest{Upserts: []teammem.Upsert{{Key: key, Content: content}, {Key: "ok.md", Content: "fine"}}}
	}

	res, err := write(fakeScanner{}, owner, up("SECRET.md", "clean"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 1 || len(res.SkippedSecrets) != 1 {
		t.Fatalf("written %v, skipped %v", res.Written, res.SkippedSecrets)
	}
	if f := res.SkippedSecrets[0]; f.Path != teammem.WithheldKey || f.KeyChecksum != teammem.EntryChecksum("SECRET.md") || f.RuleID != "fake" {
		t.Fatalf("skipped = %+v", f)
	}

	strict := owner
	strict.Org.Settings.SecretPolicy = teammem.SecretPolicyReject
	_, err = write(fakeScanner{}, strict, up("dir/SECRET.md", "clean"))
	if teammem.ErrorCode(err) != teammem.ESecretDetected || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("under reject: %v", err)
	}

	big := strings.Repeat("x", teammem.DefaultServerDefaults.MaxEntryBytes+1)
	_, err = write(fakeScanner{}, owner, up("SECRET.md", big))
	if teammem.ErrorCode(err) != teammem.ETooLarge || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "Fake") {
		t.Fatalf("an oversized entry under a secret name: %v", err)
	}
	if d := teammem.ErrorDetails(err); d["key"] != nil || d["max_entry_bytes"] == nil {
		t.Fatalf("details = %v: the key dropped, the rest kept", d)
	}

	_, err = write(fakeScanner{down: true}, owner, up("a.md", big))
	if teammem.ErrorCode(err) != teammem.ETooLarge || !strings.Contains(err.Error(), `"a.md"`) {
		t.Fatalf("with the scanner down, a refusal is as it was: %v", err)
	}
	res, err = write(fakeScanner{down: true}, owner, up("b.md", "x"))
	// ok.md is stored unchanged since the first write: only b.md is left out.
	if err != nil || len(res.Written) != 0 || len(res.SkippedSecrets) != 1 || res.SkippedSecrets[0].Path != "b.md" {
		t.Fatalf("with the scanner down: %v, %+v", err, res)
	}
}

// TestWithholdKeepsReason: a refusal cleared of the secret its key holds
// is still the same refusal, for the clients and the metrics.
func TestWithholdKeepsReason(t *testing.T) {
	err := teammem.WithholdSecrets(fakeScanner{}, teammem.Org{}, teammem.EntryTooLarge("SECRET.md", 10, 5))
	if d := teammem.ErrorDetails(err); teammem.ErrorReason(err) != teammem.ReasonEntryTooLarge || d["key"] != nil || d["max_entry_bytes"] != 5 {
		t.Fatalf("withheld: %v (%v) %v", err, teammem.ErrorReason(err), d)
	}
}
