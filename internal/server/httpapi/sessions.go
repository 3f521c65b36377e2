package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// Sessions teammem knows (issue 24): GET /v1/sessions and
// /v1/sessions/{session_id} answer the closest honest subset of the SDKs'
// BetaManagedAgentsSession; PUT /v1/sessions/{session_id}/notes (a teammem
// extension) stores a session's session-memory notes for a repo. A key sees
// a session only when the session wrote to, or uploaded notes for, a space
// the key may read; any other session is a 404, as a missing one is.

// sessionObject is a session on the wire. Only what teammem knows is
// filled; the SDK's agent, environment_id, resources, stats, usage,
// outcome_evaluations and budget are left out (teammem runs no agents).
type sessionObject struct {
	ID   string `json:"id"`
	Type string `json:"type"` // "session"
	// Status is "terminated" once the session uploaded its notes (the
	// client does at the session's end), else "idle": teammem never sees a
	// Claude Code session run, only what it left.
	Status     string            `json:"status"`
	Title      *string           `json:"title"`
	Metadata   map[string]string `json:"metadata"`
	ArchivedAt *time.Time        `json:"archived_at"`
	VaultIDs   []string          `json:"vault_ids"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
	// Teammem is the teammem extension: what the session left where.
	Teammem sessionExtension `json:"teammem"`
}

// sessionExtension is the "teammem" member of a session.
type sessionExtension struct {
	ClaudeCodeSessionID string               `json:"claude_code_session_id"`
	Spaces              []sessionSpaceObject `json:"spaces"`
	NotesUploaded       bool                 `json:"notes_uploaded"`
	NotesSizeBytes      int64                `json:"notes_size_bytes"`
}

// sessionSpaceObject is one space (memory store) a session touched.
type sessionSpaceObject struct {
	Repo           *string       `json:"repo"` // null for a store created through the API
	Scope          teammem.Scope `json:"scope"`
	MemoryStoreID  string        `json:"memory_store_id"`
	Writes         int           `json:"writes"`
	NotesSizeBytes int64         `json:"notes_size_bytes"`
}

// sessionPage is a page of sessions, as the SDKs' bidirectional cursor
// pages read it (teammem pages only forward: prev_page is always null).
type sessionPage struct {
	Data     []sessionObject `json:"data"`
	NextPage *string         `json:"next_page"`
	PrevPage *string         `json:"prev_page"`
}

func sessionOf(ss teammem.Session) sessionObject {
	o := sessionObject{ID: ss.ID, Type: "session", Status: "idle", VaultIDs: []string{}, CreatedAt: ss.FirstSeen, UpdatedAt: ss.LastSeen,
		Metadata: map[string]string{"claude_code_session_id": ss.ClaudeCodeSessionID},
		Teammem: sessionExtension{ClaudeCodeSessionID: ss.ClaudeCodeSessionID, Spaces: []sessionSpaceObject{},
			NotesUploaded: ss.NotesUploaded, NotesSizeBytes: ss.NotesSize}}
	if ss.NotesUploaded {
		o.Status = "terminated"
	}
	if repos := ss.Repos(); len(repos) > 0 {
		o.Metadata["repos"] = strings.Join(repos, ",")
	}
	for _, sp := range ss.Spaces {
		so := sessionSpaceObject{Scope: sp.Scope, MemoryStoreID: sp.StoreID, Writes: sp.Writes, NotesSizeBytes: sp.NotesSize}
		if !sp.Store {
			repo := sp.Repo
			so.Repo = &repo
		}
		o.Teammem.Spaces = append(o.Teammem.Spaces, so)
	}
	return o
}

// sessionCursor encodes the position after s as a page token.
func sessionCursor(s teammem.Session) string {
	return strconv.FormatInt(s.FirstSeen.UnixMicro(), 10) + "." + strings.TrimPrefix(s.ID, teammem.SessionIDPrefix)
}

// parseSessionCursor reads a page token sessionCursor gave out.
func parseSessionCursor(v string) (teammem.SessionCursor, error) {
	bad := teammem.Errorf(teammem.EInvalid, "page is not a cursor this server gave out")
	at, hex, ok := strings.Cut(v, ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || n < 0 {
		return teammem.SessionCursor{}, bad
	}
	cc, err := teammem.SessionClaudeCodeID(teammem.SessionIDPrefix + hex)
	if err != nil {
		return teammem.SessionCursor{}, bad
	}
	return teammem.SessionCursor{FirstSeen: time.UnixMicro(n).UTC(), ClaudeCodeSessionID: cc}, nil
}

// listSessions serves GET /v1/sessions: the sessions the key may see,
// newest first (created_at, then id).
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	f := teammem.SessionVisibility(p)
	var err error
	if f.Limit, err = queryInt(r, "limit", 20, 1, 100); err != nil {
		return err
	}
	if v := r.URL.Query().Get("page"); v != "" {
		if f.Before, err = parseSessionCursor(v); err != nil {
			return err
		}
	}
	want := f.Limit
	f.Limit++
	list, err := s.store.SessionsList(r.Context(), p.Org.ID, f)
	if err != nil {
		return err
	}
	page := sessionPage{Data: []sessionObject{}}
	for i, ss := range list {
		if i == want {
			next := sessionCursor(list[i-1])
			page.NextPage = &next
			break
		}
		page.Data = append(page.Data, sessionOf(ss))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// getSession serves GET /v1/sessions/{session_id}.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	ss, err := teammem.SessionGet(r.Context(), s.store, p.Org.ID, chi.URLParam(r, "session_id"), teammem.SessionVisibility(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionOf(ss))
	return nil
}

// sessionVisible reports whether p may see the session id (a sesn_ id)
// names: false for a malformed id, an unknown session and one that left
// nothing in a space p may read alike. The Dreams API asks it of every
// session a dream's inputs name.
func (s *Server) sessionVisible(ctx context.Context, p teammem.Principal, id string) (bool, error) {
	_, err := teammem.SessionGet(ctx, s.store, p.Org.ID, id, teammem.SessionVisibility(p))
	switch teammem.ErrorCode(err) {
	case "":
		return true, nil
	case teammem.ENotFound:
		return false, nil
	}
	return false, fmt.Errorf("session %s: %w", id, err)
}
