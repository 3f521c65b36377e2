package httpapi

import (
	"net/http"
	"strconv"

	"github.com/teammem/teammem/internal/teammem"
)

// Audit log paging.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 1000
	maxAuditAction    = 64 // bytes of an action filter
)

// auditResponse is the body of GET /v1/org/audit: events newest first and
// the before value of the next page, null on the last page.
type auditResponse struct {
	Events []teammem.AuditEvent `json:"events"`
	// NextBefore is set when the page is full: pass it as before for the
	// next, older page. A full last page leads to one empty page.
	NextBefore *int64 `json:"next_before"`
}

// listAudit serves GET /v1/org/audit?actor=&repo=&action=&before=&limit=.
func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := authorize(p, actAuditRead, false); err != nil {
		return err
	}
	f, err := auditFilter(r)
	if err != nil {
		return err
	}
	if actor := r.URL.Query().Get("actor"); actor != "" {
		if err := teammem.ValidateHandle(actor); err != nil {
			return err
		}
		u, err := s.store.UserGetByHandle(r.Context(), p.Org.ID, actor)
		if teammem.ErrorCode(err) == teammem.ENotFound {
			writeJSON(w, http.StatusOK, auditResponse{Events: []teammem.AuditEvent{}})
			return nil // nobody by that handle did anything here
		}
		if err != nil {
			return err
		}
		f.ActorID = u.ID
	}
	events, err := s.store.AuditList(r.Context(), p.Org.ID, f)
	if err != nil {
		return err
	}
	resp := auditResponse{Events: nonNil(events)}
	if len(events) == f.Limit {
		next := events[len(events)-1].ID
		resp.NextBefore = &next
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// auditFilter reads the repo, action, before and limit parameters.
func auditFilter(r *http.Request) (teammem.AuditFilter, error) {
	q := r.URL.Query()
	f := teammem.AuditFilter{Repo: q.Get("repo"), Action: q.Get("action"), Limit: defaultAuditLimit}
	if f.Repo != "" {
		if err := teammem.ValidateRepoSlug(f.Repo); err != nil {
			return f, err
		}
	}
	if len(f.Action) > maxAuditAction {
		return f, teammem.Errorf(teammem.EInvalid, "action must be at most %d bytes", maxAuditAction)
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return f, teammem.Errorf(teammem.EInvalid, "before must be an event id (a positive integer)")
		}
		f.BeforeID = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditLimit {
			return f, teammem.Errorf(teammem.EInvalid, "limit must be between 1 and %d", maxAuditLimit)
		}
		f.Limit = n
	}
	return f, nil
}
