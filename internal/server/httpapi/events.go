package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/teammem"
)

// Server-sent events (GET /v1/repos/{owner}/{name}/events): one "change"
// event per committed change of a space the caller may read, carrying
// {scope, version, checksum}. Event ids have the form "t<team version>.p<personal
// version>": a client that reconnects with Last-Event-ID is sent, at once, one
// event for every space that moved past what that id says it had seen.
// Heartbeat comments keep idle connections open; at each heartbeat the heads
// are re-read too, so a notification lost between replicas costs at most one
// heartbeat of delay.

// eventData is the JSON payload of a change event.
type eventData struct {
	Scope    teammem.Scope `json:"scope"`
	Version  int64         `json:"version"`
	Checksum string        `json:"checksum"`
}

// streamState is what a stream has told its client so far.
type streamState struct {
	team, personal int64
}

func (st streamState) id() string { return fmt.Sprintf("t%d.p%d", st.team, st.personal) }

// parseEventID reads a Last-Event-ID; ok is false for anything malformed.
func parseEventID(v string) (st streamState, ok bool) {
	t, p, found := strings.Cut(v, ".")
	if !found || !strings.HasPrefix(t, "t") || !strings.HasPrefix(p, "p") {
		return st, false
	}
	var err1, err2 error
	st.team, err1 = strconv.ParseInt(t[1:], 10, 64)
	st.personal, err2 = strconv.ParseInt(p[1:], 10, 64)
	return st, err1 == nil && err2 == nil && st.team >= 0 && st.personal >= 0
}

func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	slug, err := s.repoSlug(r)
	if err != nil {
		return err
	}
	release, err := s.streams.acquire(p.Key.ID, s.cfg.MaxStreamsPerKey)
	if err != nil {
		return err
	}
	defer release()
	g := &streamGuard{hash: keyHash(apiKeyFrom(r)), p: p, personal: teammem.Authorize(p, teammem.ActPersonalRead, false) == nil}
	sub, cancel := s.events.Subscribe(p.Org.ID, slug)
	defer cancel()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	// Start from what the client says it saw, or from the current heads.
	st, resumed := parseEventID(r.Header.Get("Last-Event-ID"))
	heads, err := s.heads(r, g.p, slug, g.personal)
	if err != nil {
		return err // after the headers: logged, and the client reconnects
	}
	if !resumed {
		st = streamState{team: heads[teammem.ScopeTeam].Version, personal: heads[teammem.ScopePersonal].Version} // missing heads read as 0
		fmt.Fprintf(w, "retry: 2000\nid: %s\n: connected\n\n", st.id())
	} else {
		fmt.Fprint(w, "retry: 2000\n: resumed\n\n")
		s.catchUp(w, &st, heads)
	}
	// A stream has no end of its own: the client leaving (a failed flush,
	// the request's context done) or the server closing it ends it as it
	// should, with the 200 it was sent; only a failure is returned.
	if rc.Flush() != nil {
		return nil
	}
	tick := time.NewTicker(s.cfg.Heartbeat)
	defer tick.Stop()
	recheck := time.NewTicker(s.cfg.StreamRecheck)
	defer recheck.Stop()
	for {
		// Every branch that may announce a change first asks g whether the
		// key may still read: a revoked key hears of no change after it.
		select {
		case <-r.Context().Done():
			return nil
		case <-s.streamsDone:
			return nil
		case <-recheck.C:
			// The database itself, past the cache: a key revoked on another
			// replica whose invalidation was lost is seen here.
			if !s.streamAllowed(w, r, g, true) {
				return nil
			}
			continue
		case e := <-sub:
			// Drop the cached head before the client hears of the change, so
			// its next pull from this replica is never a stale 304.
			s.cache.apply(e)
			if e.Kind == events.KindReset {
				// Notifications may have been lost (the listener reconnected):
				// re-read the heads and announce whatever moved.
				if !s.streamAllowed(w, r, g, false) {
					return nil
				}
				if heads, err := s.heads(r, g.p, slug, g.personal); err == nil {
					s.catchUp(w, &st, heads)
				}
				break
			}
			if !visible(e, g.p, g.personal) {
				continue
			}
			if !s.streamAllowed(w, r, g, false) {
				return nil
			}
			if !visible(e, g.p, g.personal) { // the role may have changed
				continue
			}
			sp := teammem.Space{Scope: teammem.Scope(e.Scope), Version: e.Version, Checksum: e.Checksum}
			s.catchUp(w, &st, map[teammem.Scope]teammem.Space{sp.Scope: sp})
		case <-tick.C:
			if !s.streamAllowed(w, r, g, false) {
				return nil
			}
			if heads, err := s.heads(r, g.p, slug, g.personal); err == nil {
				s.catchUp(w, &st, heads)
			}
			fmt.Fprint(w, ": heartbeat\n\n")
		}
		if rc.Flush() != nil {
			return nil
		}
	}
}

// visible reports whether the caller may see an event: team events for
// readers of the team, personal events only for the space's owner.
func visible(e events.Event, p teammem.Principal, personal bool) bool {
	if e.Scope == string(teammem.ScopeTeam) {
		return true
	}
	return personal && e.UserID == p.User.ID
}

// catchUp writes one change event for every space whose head is newer than
// what the stream has announced.
func (s *Server) catchUp(w http.ResponseWriter, st *streamState, heads map[teammem.Scope]teammem.Space) {
	for _, scope := range []teammem.Scope{teammem.ScopeTeam, teammem.ScopePersonal} {
		sp, ok := heads[scope]
		if !ok {
			continue
		}
		seen := &st.team
		if scope == teammem.ScopePersonal {
			seen = &st.personal
		}
		if sp.Version <= *seen {
			continue
		}
		*seen = sp.Version
		fmt.Fprintf(w, "id: %s\nevent: change\ndata: {\"scope\":%q,\"version\":%d,\"checksum\":%q}\n\n", st.id(), sp.Scope, sp.Version, sp.Checksum)
	}
}

// heads reads the current heads of the spaces the caller may read.
func (s *Server) heads(r *http.Request, p teammem.Principal, slug string, personal bool) (map[teammem.Scope]teammem.Space, error) {
	out := map[teammem.Scope]teammem.Space{}
	repo, err := s.store.RepoGet(r.Context(), p.Org.ID, slug)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return out, nil // nothing written yet: every head is version 0
	} else if err != nil {
		return nil, err
	}
	refs := []teammem.SpaceRef{{RepoID: repo.ID, Scope: teammem.ScopeTeam}}
	if personal {
		refs = append(refs, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: p.User.ID})
	}
	for _, ref := range refs {
		sp, err := s.store.SpaceGet(r.Context(), p.Org.ID, ref)
		if teammem.ErrorCode(err) == teammem.ENotFound {
			sp, err = teammem.EmptySpace(ref, repo), nil
		}
		if err != nil {
			return nil, err
		}
		out[ref.Scope] = sp
	}
	return out, nil
}
