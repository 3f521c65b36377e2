package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// sessionNotesBody is the body of PUT /v1/sessions/{session_id}/notes.
type sessionNotesBody struct {
	Repo    *string `json:"repo"`
	Content *string `json:"content"`
}

// putSessionNotes serves PUT /v1/sessions/{session_id}/notes (a teammem
// extension): the session-memory notes of a session for a repo, stored
// with the repo's team space once they pass SessionNotesCheck (the org's
// secret scanner, the size cap), replacing the session's earlier notes
// for that repo. The key must be one that may write the team space. The
// answer is the session as the key now sees it.
func (s *Server) putSessionNotes(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamWrite, true); err != nil {
		return err
	}
	id := chi.URLParam(r, "session_id")
	cc, err := teammem.SessionClaudeCodeID(id)
	if err != nil {
		return err
	}
	var body sessionNotesBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Repo == nil || body.Content == nil {
		return teammem.Errorf(teammem.EInvalid, "repo and content are required")
	}
	if err := teammem.ValidateRepoSlug(*body.Repo); err != nil {
		return s.slugError(p.Org, *body.Repo, err)
	}
	if err := teammem.SessionNotesCheck(s.writer.Scanner, p.Org, *body.Content); err != nil {
		return err
	}
	if err := s.limiter.allowWrite(p, s.now()); err != nil {
		return err
	}
	t, err := s.writer.Ensure(r.Context(), teammem.WriteCall{Principal: p, Repo: *body.Repo, Scope: teammem.ScopeTeam,
		ClientID: clientID(r), API: "v1", SessionID: cc})
	if err != nil {
		return err
	}
	n, err := s.store.SessionNotesPut(r.Context(), p.Org.ID, teammem.SessionNotesPutParams{ClaudeCodeSessionID: cc,
		SpaceID: t.Space.ID, UploaderID: p.User.ID, KeyID: p.Key.ID, Content: *body.Content})
	if err != nil {
		return err
	}
	s.audit(r.Context(), p, "session.notes_put", *body.Repo, id, map[string]any{"size": n.Size, "checksum": n.Checksum})
	ss, err := teammem.SessionGet(r.Context(), s.store, p.Org.ID, id, teammem.SessionVisibility(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionOf(ss))
	return nil
}
