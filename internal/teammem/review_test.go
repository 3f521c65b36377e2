package teammem

import (
	"strings"
	"testing"
)

// fakePoison flags content holding "EVIL" (a test double for internal/server/poison,
// which this package may not import).
func fakePoison(key, content string) []PoisonFinding {
	if strings.Contains(content, "EVIL") {
		return []PoisonFinding{{Path: key, RuleID: "test-poison", Label: "test", Line: 1}}
	}
	return nil
}

func TestPlanPoisoning(t *testing.T) {
	in := planIn(heads("a.md=old"))
	in.Poison = fakePoison
	req := WriteRequest{Upserts: []Upsert{{Key: "a.md", Content: "EVIL"}, {Key: "b.md", Content: "fine"}}}
	changes, res, err := Plan(req, in)
	if err != nil || len(changes) != 2 || len(res.Findings) != 1 || len(changes[0].Findings) != 1 || changes[1].Findings != nil {
		t.Fatalf("flag: changes %+v res %+v err %v", changes, res, err)
	}
	// A secret-bearing upsert is skipped before the checks: its excerpt
	// could show the secret.
	_, res, _ = Plan(WriteRequest{Upserts: []Upsert{{Key: "c.md", Content: "EVIL SECRET"}}}, in)
	if len(res.Findings) != 0 || len(res.SkippedSecrets) != 1 {
		t.Fatalf("secret entry was checked: %+v", res)
	}
	in.PoisonReject = true
	_, _, err = Plan(req, in)
	if ErrorCode(err) != EInvalid || ErrorReason(err) != ReasonPoisoningDetected {
		t.Fatalf("reject: %v", err)
	}
	if _, _, err = Plan(WriteRequest{Upserts: []Upsert{{Key: "b.md", Content: "fine"}}}, in); err != nil {
		t.Fatalf("reject refused a clean write: %v", err)
	}
}

func TestHoldReason(t *testing.T) {
	member := Principal{User: User{ID: 2, Role: RoleMember}}
	admin := Principal{User: User{ID: 1, Role: RoleAdmin}}
	review := OrgSettings{TeamWrites: TeamWritesReview, TeamWritesRepos: map[string]TeamWritesPolicy{"a/direct": TeamWritesDirect}}
	withOrg := func(p Principal, s OrgSettings) Principal { p.Org.Settings = s; return p }
	for _, c := range []struct {
		name string
		call WriteCall
		l    Limits
		want string
	}{
		{"direct by default", WriteCall{Principal: member, Repo: "a/b", Scope: ScopeTeam}, Limits{Poisoning: PoisoningFlag}, ""},
		{"org review", WriteCall{Principal: withOrg(member, review), Repo: "a/b", Scope: ScopeTeam}, Limits{}, HeldTeamWrites},
		{"repo override", WriteCall{Principal: withOrg(member, review), Repo: "a/direct", Scope: ScopeTeam}, Limits{}, ""},
		{"repo review", WriteCall{Principal: withOrg(member, OrgSettings{TeamWritesRepos: map[string]TeamWritesPolicy{"a/b": TeamWritesReview}}), Repo: "a/b", Scope: ScopeTeam}, Limits{}, HeldTeamWrites},
		{"poisoning review", WriteCall{Principal: member, Repo: "a/b", Scope: ScopeTeam}, Limits{Poisoning: PoisoningReview}, HeldPoisoning},
		{"admin", WriteCall{Principal: withOrg(admin, review), Repo: "a/b", Scope: ScopeTeam}, Limits{Poisoning: PoisoningReview}, ""},
		{"personal", WriteCall{Principal: withOrg(member, review), Repo: "a/b", Scope: ScopePersonal}, Limits{}, ""},
		{"approval", WriteCall{Principal: withOrg(member, review), Repo: "a/b", Scope: ScopeTeam, Approve: &Proposal{}}, Limits{}, ""},
		{"restore", WriteCall{Principal: withOrg(member, review), Repo: "a/b", Scope: ScopeTeam, Request: WriteRequest{Restore: true}}, Limits{}, ""},
	} {
		if got := holdReason(c.call, c.l); got != c.want {
			t.Errorf("%s: holdReason = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestProposalRequestCarriesBases(t *testing.T) {
	p := Proposal{Changes: []ProposedChange{{Key: "a.md", Op: OpWrite, Content: "x", Base: ""}, {Key: "b.md", Op: OpDelete, Base: "sha256:1"}}}
	req := p.Request()
	if len(req.Upserts) != 1 || req.Upserts[0].Base == nil || *req.Upserts[0].Base != "" ||
		len(req.Deletes) != 1 || req.Deletes[0].Base == nil || *req.Deletes[0].Base != "sha256:1" {
		t.Fatalf("request = %+v", req)
	}
	if e := p.HeldError(); e.Code != EInvalid || e.Message != ScreenedMessage {
		t.Fatalf("held error = %+v", e)
	}
}
