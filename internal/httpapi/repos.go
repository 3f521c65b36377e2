package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/events"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

const apiV1 = "v1"

// repoRoutes registers repos, spaces, entries and events under /v1. A repo
// is addressed as {owner}/{name}; a "host/owner/name" repo sends its owner
// part escaped, as host%2Fowner.
func (s *Server) repoRoutes(r chi.Router) {
	r.Get("/repos/{owner}/{name}", s.handle(s.getRepo))
	r.Get("/repos/{owner}/{name}/events", s.handle(s.streamEvents))
	r.Route("/repos/{owner}/{name}/{scope}", func(r chi.Router) {
		r.Get("/", s.handle(s.getSpace))
		r.Delete("/", s.handle(s.deleteSpace))
		r.Post("/batch", s.handle(s.postBatch))
		r.Get("/changes", s.handle(s.getChanges))
		r.Get("/MEMORY.md", s.handle(s.getIndex))
		r.Get("/export", s.handle(s.getExport))
		r.Get("/entries/*", s.handle(s.getEntry))
		r.Put("/entries/*", s.handle(s.putEntry))
		r.Delete("/entries/*", s.handle(s.deleteEntry))
		r.Post("/entries/*", s.handle(s.postEntry))
	})
}

// repoSlug returns the repo slug of a /v1 request: owner and name unescaped.
func repoSlug(r *http.Request) (string, error) {
	owner, err1 := pathParam(r, chi.URLParam(r, "owner"))
	name, err2 := pathParam(r, chi.URLParam(r, "name"))
	if err1 != nil || err2 != nil {
		return "", teammem.Errorf(teammem.EInvalid, "repo path is not validly escaped")
	}
	slug := owner + "/" + name
	return slug, teammem.ValidateRepoSlug(slug)
}

// spaceReq is a resolved /v1 space request.
type spaceReq struct {
	p     teammem.Principal
	slug  string
	scope teammem.Scope
	repo  teammem.Repo
	space teammem.Space // zero ID when the space was never written
}

// resolveSpace authorises the request for the space in its path and loads
// the repo and space. write says whether the request changes the space. A
// repo or space that does not exist yet comes back with ID 0; a write
// creates them only once it has something to commit (see s.write).
func (s *Server) resolveSpace(r *http.Request, write bool) (*spaceReq, error) {
	p := principal(r)
	slug, err := repoSlug(r)
	if err != nil {
		return nil, err
	}
	scope := teammem.Scope(chi.URLParam(r, "scope"))
	if !scope.Valid() {
		return nil, teammem.Errorf(teammem.ENotFound, "scope must be team or personal")
	}
	if err := authorize(p, scopeAction(scope, write), write); err != nil {
		return nil, err
	}
	return s.loadSpace(r.Context(), p, slug, scope, write)
}

// loadSpace loads a repo's space for p, as resolveSpace describes. Reads
// take the head from the cache when it is fresh; writes always read it.
func (s *Server) loadSpace(ctx context.Context, p teammem.Principal, slug string, scope teammem.Scope, write bool) (*spaceReq, error) {
	sr := &spaceReq{p: p, slug: slug, scope: scope}
	hk := headKey{org: p.Org.ID, repo: slug, scope: scope}
	if scope == teammem.ScopePersonal {
		hk.user = p.User.ID
	}
	now := time.Now()
	if h, ok := s.cache.head(hk, now); ok && (!write || h.space.ID != 0) {
		// A write needs only the repo and space ids (which never change):
		// SpaceApply reads the head itself under the lock.
		sr.repo, sr.space = h.repo, h.space
		return sr, nil
	}
	repo, err := s.store.RepoGet(ctx, p.Org.ID, slug)
	switch {
	case teammem.ErrorCode(err) == teammem.ENotFound && write && p.Org.Limits(s.cfg.Defaults).AutoCreateRepos:
		sr.repo = teammem.Repo{OrgID: p.Org.ID, Slug: slug}
		sr.space = emptySpace(sr.ref(), sr.repo)
		return sr, nil
	case teammem.ErrorCode(err) == teammem.ENotFound && write:
		return nil, teammem.Errorf(teammem.ENotFound, "repo %q does not exist and the organization does not create repos automatically", slug)
	case teammem.ErrorCode(err) == teammem.ENotFound:
		return nil, teammem.Errorf(teammem.ENotFound, "repo %q not found", slug)
	case err != nil:
		return nil, err
	}
	sr.repo = repo
	sr.space, err = s.store.SpaceGet(ctx, p.Org.ID, sr.ref())
	if teammem.ErrorCode(err) == teammem.ENotFound {
		sr.space, err = emptySpace(sr.ref(), sr.repo), nil
	}
	if err == nil {
		s.cache.putHead(hk, sr.repo, sr.space, now)
	}
	return sr, err
}

// ensure creates the request's repo and space when they do not exist yet.
func (s *Server) ensure(sr *spaceReq) func(ctx context.Context) (teammem.Space, error) {
	return func(ctx context.Context) (teammem.Space, error) {
		repo, err := s.store.RepoEnsure(ctx, sr.p.Org.ID, sr.slug)
		if err != nil {
			return teammem.Space{}, err
		}
		sr.repo = repo
		return s.store.SpaceEnsure(ctx, sr.p.Org.ID, sr.ref())
	}
}

func (sr *spaceReq) ref() teammem.SpaceRef {
	ref := teammem.SpaceRef{RepoID: sr.repo.ID, Scope: sr.scope}
	if sr.scope == teammem.ScopePersonal {
		ref.UserID = sr.p.User.ID
	}
	return ref
}

// emptySpace is the head of a space that was never written.
func emptySpace(ref teammem.SpaceRef, repo teammem.Repo) teammem.Space {
	return teammem.Space{OrgID: repo.OrgID, RepoID: repo.ID, Scope: ref.Scope, UserID: ref.UserID,
		Checksum: teammem.EmptySpaceChecksum, UpdatedAt: repo.CreatedAt}
}

func scopeAction(scope teammem.Scope, write bool) action {
	switch {
	case scope == teammem.ScopeTeam && write:
		return actTeamWrite
	case scope == teammem.ScopeTeam:
		return actTeamRead
	case write:
		return actPersonalWrite
	default:
		return actPersonalRead
	}
}

// write runs one write through the shared path: rate limit, the domain
// writer, metrics and audit, and the change event.
func (s *Server) write(ctx context.Context, sr *spaceReq, actor teammem.Actor, api string, req teammem.WriteRequest) (teammem.WriteResult, error) {
	announced := false
	res, err := func() (teammem.WriteResult, error) {
		if err := s.limiter.allowWrite(sr.p, s.now()); err != nil {
			return teammem.WriteResult{}, err
		}
		wctx := ctx
		if n, ok := s.events.(notifier); ok {
			// On Postgres the store sends the change event in the write's
			// own transaction.
			wctx = teammem.WithAnnouncer(ctx, func(head teammem.Space) (teammem.Announcement, bool) {
				ch, payload, err := n.Notification(spaceEvent(sr.slug, head))
				announced = err == nil
				return teammem.Announcement{Channel: ch, Payload: payload}, announced
			})
		}
		return s.writer.Write(wctx, sr.p.Org, sr.space, s.ensure(sr), actor, req)
	}()
	s.recordWrite(ctx, sr.p, api, sr.slug, res, err)
	if err == nil && !res.Noop() {
		// The committed head is the newest there is: cache it, so the next
		// pull or push of this space on this replica reads nothing.
		s.cache.putHead(headKey{org: sr.p.Org.ID, repo: sr.slug, scope: res.Space.Scope, user: res.Space.UserID}, sr.repo, res.Space, time.Now())
		if !announced {
			s.publish(ctx, sr.slug, res.Space)
		}
	}
	return res, err
}

// notifier is a broker whose events a store can send inside a write's
// transaction (events.Postgres).
type notifier interface {
	Notification(e events.Event) (channel, payload string, err error)
}

// spaceEvent is the change event of a space's new head.
func spaceEvent(repo string, sp teammem.Space) events.Event {
	return events.Event{OrgID: sp.OrgID, Repo: repo, Scope: string(sp.Scope), UserID: sp.UserID, Version: sp.Version, Checksum: sp.Checksum}
}

// publish announces a new space head; a failure only delays clients until
// their next poll, so it is logged, not returned.
func (s *Server) publish(ctx context.Context, repo string, sp teammem.Space) {
	err := s.events.Publish(context.WithoutCancel(ctx), spaceEvent(repo, sp))
	if err != nil {
		s.log.WarnContext(ctx, "publishing a change event failed", "error", err.Error())
	}
}

// headOf is a space's head on the wire.
func headOf(sp teammem.Space) wire.SpaceHead {
	return wire.SpaceHead{Scope: sp.Scope, SpaceID: sp.UID, Version: sp.Version, Checksum: sp.Checksum, EntryCount: sp.EntryCount,
		TotalBytes: sp.TotalBytes, UpdatedAt: sp.UpdatedAt}
}

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := authorize(p, actTeamRead, false); err != nil {
		return err
	}
	slug, err := repoSlug(r)
	if err != nil {
		return err
	}
	repo, err := s.store.RepoGet(r.Context(), p.Org.ID, slug)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return teammem.Errorf(teammem.ENotFound, "repo %q not found", slug)
	} else if err != nil {
		return err
	}
	personal := authorize(p, actPersonalRead, false) == nil
	heads, err := s.heads(r, p, slug, personal)
	if err != nil {
		return err
	}
	resp := wire.Repo{Repo: repo.Slug, CreatedAt: repo.CreatedAt, Team: headOf(heads[teammem.ScopeTeam])}
	if personal {
		h := headOf(heads[teammem.ScopePersonal])
		resp.Personal = &h
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
