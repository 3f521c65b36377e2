package httpapi

import (
	"context"
	"net/http"

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

// loadSpace loads a repo's space for p, as resolveSpace describes, through
// the Writer's Targets, which writes find their space through too: reads
// take the head from the store's head cache when it is fresh.
func (s *Server) loadSpace(ctx context.Context, p teammem.Principal, slug string, scope teammem.Scope, write bool) (*spaceReq, error) {
	t, err := s.writer.Targets().Find(ctx, p, slug, scope, write)
	if err != nil {
		return nil, err
	}
	return &spaceReq{p: p, slug: slug, scope: scope, repo: t.Repo, space: t.Space}, nil
}

// slugError is err, the refusal of slug, or the refusal of the secret it
// holds (which err would repeat).
func (s *Server) slugError(org teammem.Org, slug string, err error) error {
	return teammem.SlugError(s.writer.Scanner, org, slug, err)
}

func (sr *spaceReq) ref() teammem.SpaceRef {
	ref := teammem.SpaceRef{RepoID: sr.repo.ID, Scope: sr.scope}
	if sr.scope == teammem.ScopePersonal {
		ref.UserID = sr.p.User.ID
	}
	return ref
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
