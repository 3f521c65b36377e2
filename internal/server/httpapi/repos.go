package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// repoSlug returns the repo slug of a /v1 request: owner and name
// unescaped. A refusal never repeats a slug that holds a secret.
func (s *Server) repoSlug(r *http.Request) (string, error) {
	owner, err1 := pathParam(r, chi.URLParam(r, "owner"))
	name, err2 := pathParam(r, chi.URLParam(r, "name"))
	if err1 != nil || err2 != nil {
		return "", teammem.Errorf(teammem.EInvalid, "repo path is not validly escaped")
	}
	slug := owner + "/" + name
	if err := teammem.ValidateRepoSlug(slug); err != nil {
		return slug, s.slugError(principal(r).Org, slug, err)
	}
	return slug, nil
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
	slug, err := s.repoSlug(r)
	if err != nil {
		return nil, err
	}
	scope := teammem.Scope(chi.URLParam(r, "scope"))
	if !scope.Valid() {
		return nil, teammem.Errorf(teammem.ENotFound, "scope must be team or personal")
	}
	if err := teammem.Authorize(p, teammem.ScopeAction(scope, write), write); err != nil {
		return nil, err
	}
	return s.loadSpace(r.Context(), p, slug, scope, write)
}

// spaceHeadKey names the cached head of p's space of repo slug in scope
// (personal: p's own).
func spaceHeadKey(p teammem.Principal, slug string, scope teammem.Scope) headKey {
	hk := headKey{org: p.Org.ID, repo: slug, scope: scope}
	if scope == teammem.ScopePersonal {
		hk.user = p.User.ID
	}
	return hk
}

// loadSpace loads a repo's space for p, as resolveSpace describes. Reads
// take the head from the cache when it is fresh; writes always read it.
func (s *Server) loadSpace(ctx context.Context, p teammem.Principal, slug string, scope teammem.Scope, write bool) (*spaceReq, error) {
	// A slug must be a repo's, checked here whichever dialect brought it:
	// the hidden repo of an API store ("@memstore/…") is reachable only
	// through its store, under that store's own limits. The head cache
	// holds stores' heads under their hidden slugs (s.write), which no
	// valid slug starts like; every other slug it holds was validated
	// when it was read from the database below, so a cached head costs
	// no second validation.
	if strings.HasPrefix(slug, "@") {
		return nil, s.slugError(p.Org, slug, teammem.ValidateRepoSlug(slug))
	}
	sr := &spaceReq{p: p, slug: slug, scope: scope}
	hk := spaceHeadKey(p, slug, scope)
	now := time.Now()
	if h, ok := s.cache.head(hk, now); ok && (!write || h.space.ID != 0) {
		// A write needs only the repo and space ids (which never change):
		// SpaceApply reads the head itself under the lock.
		sr.repo, sr.space = h.repo, h.space
		return sr, nil
	}
	if err := teammem.ValidateRepoSlug(slug); err != nil {
		return nil, s.slugError(p.Org, slug, err)
	}
	repo, err := s.store.RepoGet(ctx, p.Org.ID, slug)
	if err == nil && repo.Store {
		err = teammem.Errorf(teammem.ENotFound, "repo not found") // unreachable with a valid slug; never a store's
	}
	if teammem.ErrorCode(err) == teammem.ENotFound {
		// The refusals below name the slug: not one that holds a secret.
		// A write is refused for it, a read finds nothing.
		if serr := s.refuseSecret(p.Org, "repo", slug); serr != nil {
			if !write {
				serr = teammem.Errorf(teammem.ENotFound, "repo not found")
			}
			return nil, serr
		}
	}
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

// slugError is err, the refusal of slug, or the refusal of the secret it
// holds (which err would repeat).
func (s *Server) slugError(org teammem.Org, slug string, err error) error {
	if serr := s.refuseSecret(org, "repo", slug); serr != nil {
		return serr
	}
	return err
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

// headOf is a space's head on the wire.
func headOf(sp teammem.Space) wire.SpaceHead {
	return wire.SpaceHead{Scope: sp.Scope, SpaceID: sp.UID, Version: sp.Version, Checksum: sp.Checksum, EntryCount: sp.EntryCount,
		TotalBytes: sp.TotalBytes, UpdatedAt: sp.UpdatedAt}
}

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	slug, err := s.repoSlug(r)
	if err != nil {
		return err
	}
	repo, err := s.store.RepoGet(r.Context(), p.Org.ID, slug)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		if s.refuseSecret(p.Org, "repo", slug) != nil {
			return teammem.Errorf(teammem.ENotFound, "repo not found") // never repeating a secret
		}
		return teammem.Errorf(teammem.ENotFound, "repo %q not found", slug)
	} else if err != nil {
		return err
	}
	personal := teammem.Authorize(p, teammem.ActPersonalRead, false) == nil
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
