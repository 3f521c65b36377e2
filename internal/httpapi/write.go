package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/teammem/teammem/internal/events"
	"github.com/teammem/teammem/internal/teammem"
)

// The dialect labels of writes, for metrics and audit.
const (
	apiV1         = "v1"
	apiClaudeCode = "claude_code"
)

// writeCall is the teammem.WriteCall of a request: its caller and client,
// and the space its path names.
func writeCall(r *http.Request, p teammem.Principal, api, repo string, scope teammem.Scope, req teammem.WriteRequest) teammem.WriteCall {
	return teammem.WriteCall{Principal: p, Repo: repo, Scope: scope, ClientID: clientID(r), API: api, Request: req}
}

// The Server is the teammem.WriteEnv of its Writer: spaces come from its
// head cache, limits from its limiter, and committed heads go back into
// the cache and out to the event broker.

// FindSpace loads a repo's space for a write of p (see loadSpace).
func (s *Server) FindSpace(ctx context.Context, p teammem.Principal, repo string, scope teammem.Scope) (teammem.Repo, teammem.Space, error) {
	sr, err := s.loadSpace(ctx, p, repo, scope, true)
	if err != nil {
		return teammem.Repo{}, teammem.Space{}, err
	}
	return sr.repo, sr.space, nil
}

// Admit applies the write rate limit of p's key.
func (s *Server) Admit(p teammem.Principal) error { return s.limiter.allow(p.Key.ID, time.Now()) }

// Announcement is the broker's notification of a committed head, when the
// broker can have the store send it (events.Postgres).
func (s *Server) Announcement(repo string, head teammem.Space) (teammem.Announcement, bool) {
	n, ok := s.events.(notifier)
	if !ok {
		return teammem.Announcement{}, false
	}
	ch, payload, err := n.Notification(spaceEvent(repo, head))
	return teammem.Announcement{Channel: ch, Payload: payload}, err == nil
}

// Committed caches the committed head, so the next pull or push of the
// space on this replica reads nothing, and publishes it unless the store
// already announced it.
func (s *Server) Committed(ctx context.Context, call teammem.WriteCall, repo teammem.Repo, head teammem.Space, announced bool) {
	hk := headKey{org: call.Principal.Org.ID, repo: call.Repo, scope: head.Scope, user: head.UserID}
	s.cache.putHead(hk, repo, head, time.Now())
	if !announced {
		s.publish(ctx, call.Repo, head)
	}
}

// Observe records a write's outcome as metrics, and a refused one in the
// audit log (a committed write's audit rows commit with it).
func (s *Server) Observe(ctx context.Context, call teammem.WriteCall, res teammem.WriteResult, err error) {
	s.recordWrite(ctx, call.Principal, call.API, call.Repo, res, err)
}

// notifier is a broker whose events a store can send inside a write's
// transaction (events.Postgres).
type notifier interface {
	Notification(e events.Event) (channel, payload string, err error)
}
