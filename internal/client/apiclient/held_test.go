package apiclient

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
	_, err := c.Batch(t.Context(), teammem.ScopeTeam, []wire.BatchUpsert{{Key: "a.md", Content: "x", Base: &empty}}, nil)
	var held *HeldError
	if !errors.As(err, &held) || held.Proposal.ID != 7 {
		t.Fatalf("err = %v, want a HeldError for proposal 7", err)
	}
	if session != c.SessionID {
		t.Fatalf("session header = %q", session)
	}
}
