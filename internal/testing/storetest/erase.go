package storetest

import (
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// erasureFixture is a space with two versions of a.md, the first one's
// content held by an approved, a rejected and a pending proposal, and
// proposals that hold other content or belong to another repo.
type erasureFixture struct {
	sp                          teammem.Space
	approved, rejected, pending teammem.Proposal
	otherContent, otherRepo     teammem.Proposal
}

const erasedContent = "leaked personal data ERASE-ME-4f1c\n"

func (b *bundle) erasureFixture(t *testing.T) erasureFixture {
	t.Helper()
	var f erasureFixture
	f.sp = b.space(t, "acme/erase")
	b.space(t, "acme/elsewhere")
	propose := func(repo string, changes ...teammem.ProposedChange) teammem.Proposal {
		return must[teammem.Proposal](t)(b.store.ProposalCreate(b.ctx, b.org.ID, teammem.Proposal{Repo: repo, Scope: teammem.ScopeTeam,
			AuthorID: b.member.ID, Reason: teammem.HeldPoisoning, Changes: changes,
			Findings: []teammem.PoisonFinding{{Path: "a.md", RuleID: "r", Label: "l", Line: 1, Excerpt: "ERASE-ME-4f1c"}}}))
	}
	held := teammem.ProposedChange{Key: "a.md", Op: teammem.OpWrite, Content: erasedContent}
	keep := teammem.ProposedChange{Key: "b.md", Op: teammem.OpWrite, Content: "kept"}
	f.approved = propose("acme/erase", held, keep)
	f.sp = b.apply(t, f.sp, write("a.md", erasedContent))
	must[teammem.Proposal](t)(b.store.ProposalDecide(b.ctx, b.org.ID, f.approved.ID, teammem.ProposalDecideParams{Status: teammem.ProposalApproved, By: b.owner.ID, At: time.Now()}))
	f.rejected = propose("acme/erase", held)
	must[teammem.Proposal](t)(b.store.ProposalDecide(b.ctx, b.org.ID, f.rejected.ID, teammem.ProposalDecideParams{Status: teammem.ProposalRejected, By: b.owner.ID, At: time.Now()}))
	f.pending = propose("acme/erase", held)
	f.otherContent = propose("acme/erase", teammem.ProposedChange{Key: "a.md", Op: teammem.OpWrite, Content: "something else"})
	f.otherRepo = propose("acme/elsewhere", held)
	f.sp = b.apply(t, f.sp, write("a.md", "nothing to see\n"))
	return f
}

// wantErased checks which proposals still hold their content.
func (b *bundle) wantErased(t *testing.T, erased, kept []teammem.Proposal) {
	t.Helper()
	for _, p := range erased {
		got := must[teammem.Proposal](t)(b.store.ProposalGet(b.ctx, b.org.ID, p.ID))
		for _, c := range got.Changes {
			if c.Key == "a.md" && c.Content != "" {
				t.Errorf("proposal %d (%s) still holds the erased content %q", p.ID, got.Status, c.Content)
			}
		}
		for _, f := range got.Findings {
			if f.Excerpt != "" {
				t.Errorf("proposal %d keeps the finding excerpt %q of erased content", p.ID, f.Excerpt)
			}
		}
	}
	for _, p := range kept {
		got := must[teammem.Proposal](t)(b.store.ProposalGet(b.ctx, b.org.ID, p.ID))
		if got.Changes[0].Content != p.Changes[0].Content {
			t.Errorf("proposal %d lost content it did not share with the erased version: %+v", p.ID, got.Changes)
		}
	}
}

// testRedactErasesProposals: redacting a version erases the same content
// of the same entry from every proposal of its space, whatever its status,
// and nothing else.
func testRedactErasesProposals(t *testing.T, b *bundle) {
	f := b.erasureFixture(t)
	if _, _, err := b.store.VersionRedact(b.ctx, b.org.ID, f.sp.ID, teammem.VersionRedactParams{Key: "a.md", Version: 1, By: b.owner.ID, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b.wantErased(t, []teammem.Proposal{f.approved, f.rejected, f.pending}, []teammem.Proposal{f.otherContent, f.otherRepo})
	// The approved proposal's other change was not that content.
	if got := must[teammem.Proposal](t)(b.store.ProposalGet(b.ctx, b.org.ID, f.approved.ID)); got.Changes[1].Content != "kept" {
		t.Errorf("b.md of the approved proposal = %+v", got.Changes[1])
	}
}

// testPurgeErasesProposals: purging a space's history erases the content
// of every proposal of the space, and of no other.
func testPurgeErasesProposals(t *testing.T, b *bundle) {
	f := b.erasureFixture(t)
	must[int](t)(b.store.SpaceVersionsPurge(b.ctx, b.org.ID, f.sp.ID))
	b.wantErased(t, []teammem.Proposal{f.approved, f.rejected, f.pending, f.otherContent}, []teammem.Proposal{f.otherRepo})
}

// testPurgeErasesSessionNotes: purging a team space's history deletes the
// session notes uploaded for it and no other space's; purging a user's
// personal space deletes every note that user uploaded, and nobody else's.
func testPurgeErasesSessionNotes(t *testing.T, b *bundle) {
	team, other := b.space(t, "acme/notes"), b.space(t, "acme/other")
	repo := must[teammem.Repo](t)(b.store.RepoGet(b.ctx, b.org.ID, "acme/notes"))
	mine := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: b.member.ID}))
	put := func(session string, sp teammem.Space, uploader int64) {
		must[teammem.SessionNotes](t)(b.store.SessionNotesPut(b.ctx, b.org.ID, teammem.SessionNotesPutParams{
			ClaudeCodeSessionID: session, SpaceID: sp.ID, UploaderID: uploader, Content: erasedContent}))
	}
	put(sessA, team, b.owner.ID)
	put(sessB, other, b.member.ID)
	put(sessC, other, b.owner.ID)
	count := func(session string) int {
		return len(must[[]teammem.SessionNotes](t)(b.store.SessionNotesList(b.ctx, b.org.ID, session)))
	}
	must[int](t)(b.store.SpaceVersionsPurge(b.ctx, b.org.ID, team.ID))
	if a, bb, c := count(sessA), count(sessB), count(sessC); a != 0 || bb != 1 || c != 1 {
		t.Fatalf("after the team purge: notes of A %d (want 0), B %d, C %d (want 1 each)", a, bb, c)
	}
	must[int](t)(b.store.SpaceVersionsPurge(b.ctx, b.org.ID, mine.ID))
	if bb, c := count(sessB), count(sessC); bb != 0 || c != 1 {
		t.Fatalf("after the member's personal purge: their notes B %d (want 0), the owner's C %d (want 1)", bb, c)
	}
	// Another org's purge of a space id it does not own erases nothing.
	must[int](t)(b.store.SpaceVersionsPurge(b.ctx, 999999, other.ID))
	if c := count(sessC); c != 1 {
		t.Fatalf("another org's purge erased this org's notes: %d left", c)
	}
}
