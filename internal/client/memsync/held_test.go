package memsync

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestBatchHeldAndSession: a 202 is a HeldError carrying the proposal, and
// the session id rides on the write.
func TestBatchHeldAndSession(t *testing.T) {
	var session string
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session = r.Header.Get(SessionHeader)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(wire.HeldWrite{Status: wire.HeldStatus,
			Proposal: teammem.Proposal{ID: 7, Reason: teammem.HeldTeamWrites}, SkippedSecrets: []teammem.SkippedSecret{}, SkippedTombstoned: []string{}})
	}))
	c, _ := newTestClient(t, srv)
	c.SessionID = "5d0c2a9e-6b1f-4e3a-8c7d-2f4e6a8b0c1d"
	empty := ""
	_, err := c.Batch(t.Context(), teammem.ScopeTeam, []BatchUpsert{{Key: "a.md", Content: "x", Base: &empty}}, nil)
	var held *HeldError
	if !errors.As(err, &held) || held.Proposal.ID != 7 {
		t.Fatalf("err = %v, want a HeldError for proposal 7", err)
	}
	if session != c.SessionID {
		t.Fatalf("session header = %q", session)
	}
}

// TestSkipHeld: a held file is not sent again while unchanged, goes again
// once edited, and is forgotten once the server's copy caught up.
func TestSkipHeld(t *testing.T) {
	sum := teammem.EntryChecksum
	ss := &ScopeState{Base: map[string]string{"gone.md": sum("old")}, Held: map[string]HeldFile{
		"same.md": {Checksum: sum("held"), Proposal: 1}, "edited.md": {Checksum: sum("held"), Proposal: 1},
		"gone.md": {Proposal: 2}, "approved.md": {Checksum: sum("done"), Proposal: 3}}}
	ss.Base["approved.md"] = sum("done")
	empty := ""
	p := pushPlan{content: map[string]string{"same.md": "held", "edited.md": "new", "approved.md": "done"},
		upserts: []BatchUpsert{{Key: "same.md", Content: "held", Base: &empty}, {Key: "edited.md", Content: "new", Base: &empty}},
		deletes: []BatchDelete{{Key: "gone.md"}}}
	rep := &Report{}
	skipHeld(ss, &p, rep)
	if len(p.upserts) != 1 || p.upserts[0].Key != "edited.md" || len(p.deletes) != 0 {
		t.Fatalf("plan after skipHeld: %+v", p)
	}
	if _, ok := ss.Held["edited.md"]; ok {
		t.Error("an edited held file is still held")
	}
	if _, ok := ss.Held["approved.md"]; ok {
		t.Error("a file whose server copy caught up is still held")
	}
	if len(rep.HeldForReview) != 2 {
		t.Errorf("report held = %v, want same.md and gone.md", rep.HeldForReview)
	}
}
