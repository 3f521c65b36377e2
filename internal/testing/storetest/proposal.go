package storetest

import (
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// testVersionFindings: a version keeps the poisoning findings it was
// written with, and redaction erases them with the content.
func testVersionFindings(t *testing.T, b *bundle) {
	sp := b.space(t, "acme/findings")
	found := []teammem.PoisonFinding{{Path: "a.md", RuleID: "agent-override", Label: "l", Line: 2, Excerpt: "ignore previous instructions"}}
	c := write("a.md", "one\nignore previous instructions")
	c.Findings = found
	sp = b.apply(t, sp, c)
	sp = b.apply(t, sp, write("a.md", "clean"))
	hist := must[[]teammem.EntryVersion](t)(b.store.EntryHistory(b.ctx, b.org.ID, sp.ID, "a.md"))
	if len(hist) != 2 || len(hist[0].Findings) != 0 || len(hist[1].Findings) != 1 || hist[1].Findings[0] != found[0] {
		t.Fatalf("history findings = %+v, want none on v2 and %v on v1", hist, found)
	}
	v := must[teammem.EntryVersion](t)(b.store.EntryVersionGet(b.ctx, b.org.ID, sp.ID, "a.md", hist[1].Version))
	if len(v.Findings) != 1 {
		t.Fatalf("version findings = %+v", v.Findings)
	}
	if _, _, err := b.store.VersionRedact(b.ctx, b.org.ID, sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: v.Version, By: b.owner.ID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	v = must[teammem.EntryVersion](t)(b.store.EntryVersionGet(b.ctx, b.org.ID, sp.ID, "a.md", v.Version))
	if len(v.Findings) != 0 {
		t.Fatalf("a redacted version keeps findings %+v; their excerpts are content", v.Findings)
	}
}

// testProposals: create, get, list (without content, filtered, tenant
// bound) and decide once.
func testProposals(t *testing.T, b *bundle) {
	base := "sha256:00"
	p := teammem.Proposal{Repo: "acme/app", Scope: teammem.ScopeTeam, AuthorID: b.member.ID, ClientID: "laptop", API: "v1",
		Reason: teammem.HeldTeamWrites, Changes: []teammem.ProposedChange{
			{Key: "a.md", Op: teammem.OpWrite, Content: "hello", Base: ""},
			{Key: "b.md", Op: teammem.OpDelete, Base: base},
		},
		Findings: []teammem.PoisonFinding{{Path: "a.md", RuleID: "fetch-exec", Label: "x", Line: 1}}}
	got := must[teammem.Proposal](t)(b.store.ProposalCreate(b.ctx, b.org.ID, p))
	if got.ID == 0 || got.Status != teammem.ProposalPending || got.Author != b.member.Handle || got.CreatedAt.IsZero() ||
		len(got.Changes) != 2 || got.Changes[0].Content != "hello" || got.Changes[1].Base != base || len(got.Findings) != 1 {
		t.Fatalf("created %+v", got)
	}
	other := must[teammem.Proposal](t)(b.store.ProposalCreate(b.ctx, b.org.ID, teammem.Proposal{Repo: "acme/other", Scope: teammem.ScopeTeam,
		AuthorID: b.owner.ID, Changes: []teammem.ProposedChange{{Key: "c.md", Op: teammem.OpWrite, Content: "x"}}}))

	list := must[[]teammem.Proposal](t)(b.store.ProposalList(b.ctx, b.org.ID, teammem.ProposalFilter{}))
	if len(list) != 2 || list[0].ID != other.ID || list[1].Changes[0].Content != "" || list[1].Changes[0].Key != "a.md" || list[1].Changes[1].Base != base {
		t.Fatalf("list = %+v, want newest first without content", list)
	}
	mine := must[[]teammem.Proposal](t)(b.store.ProposalList(b.ctx, b.org.ID, teammem.ProposalFilter{AuthorID: b.member.ID, Status: teammem.ProposalPending, Repo: "acme/app"}))
	if len(mine) != 1 || mine[0].ID != got.ID {
		t.Fatalf("filtered list = %+v", mine)
	}

	stranger := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "stranger", Name: "S"}))
	_, err := b.store.ProposalGet(b.ctx, stranger.ID, got.ID)
	wantCode(t, err, teammem.ENotFound)
	_, err = b.store.ProposalDecide(b.ctx, stranger.ID, got.ID, teammem.ProposalDecideParams{Status: teammem.ProposalRejected, At: time.Now()})
	wantCode(t, err, teammem.ENotFound)

	d := must[teammem.Proposal](t)(b.store.ProposalDecide(b.ctx, b.org.ID, got.ID,
		teammem.ProposalDecideParams{Status: teammem.ProposalRejected, By: b.owner.ID, At: time.Now(), Note: "no"}))
	if d.Status != teammem.ProposalRejected || d.DecidedAt == nil || d.DecidedBy != b.owner.Handle || d.Note != "no" {
		t.Fatalf("decided %+v", d)
	}
	_, err = b.store.ProposalDecide(b.ctx, b.org.ID, got.ID, teammem.ProposalDecideParams{Status: teammem.ProposalApproved, By: b.owner.ID, At: time.Now()})
	wantCode(t, err, teammem.EConflict)
	if n := len(must[[]teammem.Proposal](t)(b.store.ProposalList(b.ctx, b.org.ID, teammem.ProposalFilter{Status: teammem.ProposalPending}))); n != 1 {
		t.Fatalf("%d pending, want 1", n)
	}
}
