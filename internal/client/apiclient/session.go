package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/teammem/teammem/internal/teammem"
)

// Session is the part of the server's session object (GET or PUT under
// /v1/sessions) the client reads.
type Session struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Teammem struct {
		ClaudeCodeSessionID string `json:"claude_code_session_id"`
		NotesUploaded       bool   `json:"notes_uploaded"`
		NotesSizeBytes      int64  `json:"notes_size_bytes"`
	} `json:"teammem"`
}

// SessionNotesPut uploads the session-memory notes of the Claude Code
// session ccSessionID (a UUID) for the client's repo (PUT
// /v1/sessions/{sesn_id}/notes), replacing the notes it uploaded before.
// The server refuses content holding a secret (400, the rule ids in the
// message) or over teammem.SessionNotesMaxBytes; the caller checks both
// first. An id that is no UUID is an error before any request.
func (c *Client) SessionNotesPut(ctx context.Context, ccSessionID, content string) (Session, error) {
	id, err := teammem.SessionPublicID(ccSessionID)
	if err != nil {
		return Session{}, err
	}
	body, err := json.Marshal(map[string]string{"repo": c.Repo, "content": content})
	if err != nil {
		return Session{}, err
	}
	var s Session
	_, err = c.call(ctx, request{method: http.MethodPut, path: "/v1/sessions/" + url.PathEscape(id) + "/notes", body: body,
		header: http.Header{"Content-Type": {"application/json"}}}, &s)
	return s, err
}
