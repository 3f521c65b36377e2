package storetest

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/teammem"
)

// Claude Code session ids the session tests write with.
const (
	sessA = "0a1b2c3d-0000-4000-8000-00000000000a"
	sessB = "0a1b2c3d-0000-4000-8000-00000000000b"
	sessC = "0a1b2c3d-0000-4000-8000-00000000000c"
)

// applyAs commits changes as user from a Claude Code session.
func (b *bundle) applyAs(t *testing.T, sp teammem.Space, user int64, session string, changes ...teammem.EntryChange) {
	t.Helper()
	must[teammem.Space](t)(teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{
		Actor: teammem.Actor{UserID: user, ClientID: "test", SessionID: session},
		Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
			return changes, nil
		}}))
}

// testSessions: sessions come from the versions' provenance and the notes,
// each caller sees only the spaces it may read, pages are newest first,
// notes replace notes, and another org sees nothing.
func testSessions(t *testing.T, b *bundle) {
	team := b.space(t, "o/r")
	repo := must[teammem.Repo](t)(b.store.RepoGet(b.ctx, b.org.ID, "o/r"))
	bobs := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: b.member.ID}))
	b.applyAs(t, team, b.owner.ID, sessA, write("a.md", "from A"))
	b.applyAs(t, bobs, b.member.ID, sessB, write("mine.md", "bob's own"))
	b.applyAs(t, team, b.owner.ID, "not-a-uuid", write("x.md", "unnamed"))
	b.applyAs(t, team, b.member.ID, sessC, write("c.md", "from C"), write("d.md", "more C"))

	alice := teammem.SessionFilter{UserID: b.owner.ID}
	list := must[[]teammem.Session](t)(b.store.SessionsList(b.ctx, b.org.ID, alice))
	if ids := sessionIDs(list); ids != sessC+","+sessA {
		t.Fatalf("alice sees %s, want C then A (B wrote only bob's personal space)", ids)
	}
	if c := list[0]; c.ID != "sesn_0a1b2c3d000040008000"+"00000000000c" || len(c.Spaces) != 1 || c.Spaces[0].Writes != 2 ||
		c.Spaces[0].Repo != "o/r" || c.Spaces[0].Scope != teammem.ScopeTeam || c.NotesUploaded || c.FirstSeen.IsZero() {
		t.Fatalf("session C = %+v", c)
	}
	bob := teammem.SessionFilter{UserID: b.member.ID}
	if ids := sessionIDs(must[[]teammem.Session](t)(b.store.SessionsList(b.ctx, b.org.ID, bob))); ids != sessC+","+sessB+","+sessA {
		t.Fatalf("bob sees %s", ids)
	}
	viewer := teammem.SessionFilter{UserID: -1}
	if ids := sessionIDs(must[[]teammem.Session](t)(b.store.SessionsList(b.ctx, b.org.ID, viewer))); ids != sessC+","+sessA {
		t.Fatalf("a viewer sees %s", ids)
	}

	// Pages: one at a time, the cursor is the last one's position.
	page1 := must[[]teammem.Session](t)(b.store.SessionsList(b.ctx, b.org.ID, teammem.SessionFilter{UserID: b.member.ID, Limit: 2}))
	last := page1[len(page1)-1]
	page2 := must[[]teammem.Session](t)(b.store.SessionsList(b.ctx, b.org.ID, teammem.SessionFilter{UserID: b.member.ID, Limit: 2,
		Before: teammem.SessionCursor{FirstSeen: last.FirstSeen, ClaudeCodeSessionID: last.ClaudeCodeSessionID}}))
	if got := sessionIDs(page1) + "|" + sessionIDs(page2); got != sessC+","+sessB+"|"+sessA {
		t.Fatalf("pages = %s", got)
	}

	// Notes: a session alice cannot see becomes visible once it uploads
	// notes for the team space; a second upload replaces the first.
	must[teammem.SessionNotes](t)(b.store.SessionNotesPut(b.ctx, b.org.ID, teammem.SessionNotesPutParams{
		ClaudeCodeSessionID: sessB, SpaceID: team.ID, UploaderID: b.member.ID, KeyID: "key_1", Content: "first notes"}))
	n := must[teammem.SessionNotes](t)(b.store.SessionNotesPut(b.ctx, b.org.ID, teammem.SessionNotesPutParams{
		ClaudeCodeSessionID: sessB, SpaceID: team.ID, UploaderID: b.member.ID, KeyID: "key_2", Content: "second notes"}))
	if n.Content != "second notes" || n.Size != len("second notes") || n.KeyID != "key_2" || n.Checksum != teammem.EntryChecksum("second notes") {
		t.Fatalf("notes = %+v", n)
	}
	if l := must[[]teammem.SessionNotes](t)(b.store.SessionNotesList(b.ctx, b.org.ID, sessB)); len(l) != 1 || l[0].Content != "second notes" {
		t.Fatalf("notes list = %+v", l)
	}
	got := must[teammem.Session](t)(teammem.SessionGet(b.ctx, b.store, b.org.ID, mustPublic(t, sessB), alice))
	if !got.NotesUploaded || got.NotesSize != int64(len("second notes")) || len(got.Spaces) != 1 || got.Spaces[0].SpaceID != team.ID {
		t.Fatalf("alice's view of B = %+v", got)
	}
	if got := must[teammem.Session](t)(teammem.SessionGet(b.ctx, b.store, b.org.ID, mustPublic(t, sessB), bob)); len(got.Spaces) != 2 {
		t.Fatalf("bob's view of B = %+v", got)
	}

	// Versions: team only leaves bob's personal space out.
	if v := must[[]teammem.EntryVersion](t)(b.store.SessionVersionsList(b.ctx, b.org.ID, sessB, teammem.SessionVersionsFilter{TeamOnly: true})); len(v) != 0 {
		t.Fatalf("B's team versions = %+v", v)
	}
	v := must[[]teammem.EntryVersion](t)(b.store.SessionVersionsList(b.ctx, b.org.ID, sessC, teammem.SessionVersionsFilter{TeamOnly: true}))
	if len(v) != 2 || v[0].Key != "c.md" || v[0].Content != "from C" || v[1].Key != "d.md" {
		t.Fatalf("C's versions = %+v", v)
	}
	text := must[string](t)(teammem.SessionMaterial(b.ctx, b.store, b.org.ID, mustPublic(t, sessB)))
	if !strings.Contains(text, "second notes") || strings.Contains(text, "bob's own") {
		t.Fatalf("B's material leaks the personal space or lacks the notes:\n%s", text)
	}

	// Material pages through a long session's versions and stops at its
	// budget, cut on a line it says so in.
	const long, big = "0a1b2c3d-0000-4000-8000-0000000000dd", "0a1b2c3d-0000-4000-8000-0000000000ee"
	var many, huge []teammem.EntryChange
	for i := range 150 {
		many = append(many, write(fmt.Sprintf("many/%03d.md", i), "small"))
	}
	for i := range 3 {
		huge = append(huge, write(fmt.Sprintf("huge/%d.md", i), strings.Repeat("€", 30<<10)))
	}
	b.applyAs(t, team, b.owner.ID, long, many...)
	b.applyAs(t, team, b.owner.ID, big, huge...)
	if text := must[string](t)(teammem.SessionMaterial(b.ctx, b.store, b.org.ID, mustPublic(t, long))); !strings.Contains(text, "many/149.md") {
		t.Fatalf("a 150-version session's material stops early:\n%.300s", text)
	}
	text = must[string](t)(teammem.SessionMaterial(b.ctx, b.store, b.org.ID, mustPublic(t, big)))
	if len(text) > teammem.SessionMaterialMaxBytes || !strings.Contains(text, "left out") || !utf8.ValidString(text) {
		t.Fatalf("a big session's material: %d bytes, valid UTF-8 %v, cut note %v", len(text), utf8.ValidString(text), strings.Contains(text, "left out"))
	}

	// Another org knows none of it, and cannot put notes in this org's space.
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	if l := must[[]teammem.Session](t)(b.store.SessionsList(b.ctx, other.ID, teammem.SessionFilter{UserID: b.member.ID})); len(l) != 0 {
		t.Fatalf("another org sees %+v", l)
	}
	_, err := b.store.SessionNotesPut(b.ctx, other.ID, teammem.SessionNotesPutParams{ClaudeCodeSessionID: sessA, SpaceID: team.ID, Content: "x"})
	wantCode(t, err, teammem.EInvalid)
	_, err = teammem.SessionMaterial(b.ctx, b.store, other.ID, mustPublic(t, sessC))
	wantCode(t, err, teammem.ENotFound)
}

func sessionIDs(list []teammem.Session) string {
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ClaudeCodeSessionID
	}
	return strings.Join(ids, ",")
}

func mustPublic(t *testing.T, cc string) string {
	t.Helper()
	return must[string](t)(teammem.SessionPublicID(cc))
}
