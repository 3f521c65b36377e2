package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// maxAuditAction is the most bytes of an action filter. The page sizes
// are the stores' (teammem.DefaultListLimit, teammem.MaxListLimit).
const maxAuditAction = 64

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
	if err := teammem.Authorize(p, teammem.ActAuditRead, false); err != nil {
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
	f := teammem.AuditFilter{Repo: q.Get("repo"), Action: q.Get("action"), Limit: teammem.DefaultListLimit}
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
		if err != nil || n < 1 || n > teammem.MaxListLimit {
			return f, teammem.Errorf(teammem.EInvalid, "limit must be between 1 and %d", teammem.MaxListLimit)
		}
		f.Limit = n
	}
	return f, nil
}

// readAuditWindow is how long an audited read is not audited again for the
// same key, action, repo and target: reads are not writes, and a key that
// exports in a loop must not grow the audit log by a row a request.
const readAuditWindow = time.Hour

// maxAuditDedup bounds the reads remembered per replica; past it some are
// forgotten early (an extra row later, never a missing first one).
const maxAuditDedup = 50_000

// auditDedup remembers when each (key, action, repo, target) read was last
// audited on this replica. Behind N replicas a read is audited up to N
// times an hour.
type auditDedup struct {
	mu    sync.Mutex
	last  map[auditedRead]time.Time
	swept time.Time
}

type auditedRead struct{ key, action, repo, target string }

func newAuditDedup() *auditDedup { return &auditDedup{last: map[auditedRead]time.Time{}} }

// first reports whether read is due an audit row at now, and if so
// remembers it.
func (d *auditDedup) first(read auditedRead, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.swept) > time.Minute || len(d.last) >= maxAuditDedup {
		for k, at := range d.last {
			if now.Sub(at) >= readAuditWindow || len(d.last) >= maxAuditDedup {
				delete(d.last, k)
			}
		}
		d.swept = now
	}
	if at, ok := d.last[read]; ok && now.Sub(at) < readAuditWindow {
		return false
	}
	d.last[read] = now
	return true
}

// auditRead records a read in the audit log (exports, admin reads) at most
// once per readAuditWindow per key, action, repo and target. Writes go
// through audit, every time.
func (s *Server) auditRead(ctx context.Context, p teammem.Principal, action, repo, target string, details map[string]any) {
	if !s.audited.first(auditedRead{key: p.Key.ID, action: action, repo: repo, target: target}, s.now()) {
		return
	}
	s.audit(ctx, p, action, repo, target, details)
}
