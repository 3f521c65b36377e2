package httpapi

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// The Dreams API (issue 24): create, get, list, cancel and archive, as the
// official SDKs call them. The routes keep the dream rows; running them is
// the DreamRunner's (Config.Dreams).

// msgNoDreamModel answers a create on a server without a model.
const msgNoDreamModel = "dreams need a model: set TEAMMEM_LLM_PROVIDER, TEAMMEM_LLM_MODEL (and the provider's key) on the server"

// createDream serves POST /v1/dreams.
func (s *Server) createDream(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	spec, err := teammem.ParseDreamCreate(body)
	if err != nil {
		return err
	}
	if err := s.checkDreamModel(spec.Model); err != nil {
		return err
	}
	if err := teammem.DreamInstructionsCheck(s.writer.Scanner, principal(r).Org, spec.Instructions); err != nil {
		return err
	}
	sr, err := s.resolveStoreID(r, teammem.StoreIDPrefix+spec.InputStoreUID, spec.Behavior == teammem.DreamUpdateExisting)
	if err != nil {
		return err
	}
	if err := s.checkDreamInput(sr); err != nil {
		return err
	}
	for _, id := range spec.SessionIDs {
		ok, err := s.sessionVisible(r.Context(), sr.p, id)
		if err != nil {
			return err
		}
		if !ok {
			return teammem.Errorf(teammem.ENotFound, "session %s not found", truncateID(id))
		}
	}
	d := teammem.Dream{ID: teammem.NewDreamID(), OrgID: sr.p.Org.ID, InputSpaceID: sr.store.Space.ID, InputStoreUID: sr.store.Space.UID,
		InputOwnerID: sr.store.Space.UserID, Model: spec.Model, ModelSpeed: spec.ModelSpeed, Instructions: spec.Instructions,
		Behavior: spec.Behavior, CreatedAt: s.now().UTC().Truncate(time.Microsecond), CreatorUserID: sr.p.User.ID, CreatorKeyID: sr.p.Key.ID}
	if spec.HasSessions {
		d.SessionIDs = spec.SessionIDs
	}
	d, err = s.store.DreamCreate(r.Context(), sr.p.Org.ID, d)
	if err != nil {
		return err
	}
	s.DreamCreated(sr.p.Org)
	s.audit(r.Context(), sr.p, "dream.created", sr.store.Repo.Slug, d.ID, map[string]any{"api": "dream",
		"input": d.InputStoreID(), "output_behavior": d.Behavior, "model": d.Model, "sessions": len(d.SessionIDs)})
	if err := s.cfg.Dreams.Enqueue(r.Context(), d); err != nil {
		// The row is the truth: the runner's scan of pending dreams
		// enqueues it again, so the caller still gets its dream.
		s.log.ErrorContext(r.Context(), "enqueue dream failed", "dream", d.ID, "error", err.Error())
	}
	writeJSON(w, http.StatusOK, dreamOf(d))
	return nil
}

// DreamCreated counts a dream created in org in
// teammem_dreams_created_total: the API's creates, and the nightly dreams
// the job queue creates (jobs.NightlyConfig.Created).
func (s *Server) DreamCreated(org teammem.Org) {
	s.metrics.Dreams.Created.WithLabelValues(org.Slug).Inc()
}

// checkDreamModel refuses a model the operator did not allow, or any model
// on a server that has none.
func (s *Server) checkDreamModel(model string) error {
	var allowed []string
	if s.cfg.Dreams != nil {
		allowed = s.cfg.Dreams.Models()
	}
	if len(allowed) == 0 {
		return teammem.Errorf(teammem.EInvalid, "%s", msgNoDreamModel)
	}
	if !slices.Contains(allowed, model) {
		return teammem.Errorf(teammem.EInvalid, "model %q is not one this server runs dreams with: use one of %s (TEAMMEM_DREAM_MODELS)",
			truncateID(model), strings.Join(allowed, ", "))
	}
	return nil
}

// checkDreamInput applies the org's settings and limits to the input
// store: team_dream off refuses a repo's team store, and a store over the
// org's caps is too large to dream over.
func (s *Server) checkDreamInput(sr *storeReq) error {
	m, org := sr.store, sr.p.Org
	if !m.API && m.Space.Scope == teammem.ScopeTeam && org.Settings.TeamDreamFor(m.Repo.Slug) == teammem.TeamDreamOff {
		return teammem.TeamDreamOffError(m.Repo.Slug)
	}
	l := org.Limits(s.cfg.Defaults)
	if m.Space.EntryCount > l.MaxEntries {
		return teammem.Errorf(teammem.EInvalid, "memory store %s holds %d memories, more than a dream reads (the org's max_entries, %d)",
			m.ID(), m.Space.EntryCount, l.MaxEntries)
	}
	if maxBytes := int64(l.MaxEntries) * int64(l.MaxEntryBytes); m.Space.TotalBytes > maxBytes {
		return teammem.Errorf(teammem.EInvalid, "memory store %s holds %d bytes, more than a dream reads (max_entries × max_entry_bytes, %d)",
			m.ID(), m.Space.TotalBytes, maxBytes)
	}
	return nil
}

// resolveDream loads the dream the path names, as the caller may see it:
// a dream of a store it cannot read does not exist for it (404).
func (s *Server) resolveDream(r *http.Request) (teammem.Principal, teammem.Dream, error) {
	p := principal(r)
	id := chi.URLParam(r, "dream_id")
	notFound := teammem.Errorf(teammem.ENotFound, "dream %s not found", truncateID(id))
	if !teammem.ValidDreamID(id) {
		return p, teammem.Dream{}, notFound
	}
	d, err := s.store.DreamGet(r.Context(), p.Org.ID, id)
	switch {
	case teammem.ErrorCode(err) == teammem.ENotFound:
		return p, d, notFound
	case err != nil:
		return p, d, err
	case !dreamVisible(p, d):
		return p, teammem.Dream{}, notFound
	}
	return p, d, nil
}

// dreamScope is the scope of a dream's input store.
func dreamScope(d teammem.Dream) teammem.Scope {
	if d.InputOwnerID != 0 {
		return teammem.ScopePersonal
	}
	return teammem.ScopeTeam
}

// dreamVisible reports whether p may see d: it may read d's input store
// (resolveStore's rules: another user's personal store is invisible).
func dreamVisible(p teammem.Principal, d teammem.Dream) bool {
	if d.InputOwnerID != 0 && d.InputOwnerID != p.User.ID {
		return false
	}
	return teammem.Authorize(p, teammem.ScopeAction(dreamScope(d), false), false) == nil
}

// getDream serves GET /v1/dreams/{dream_id}.
func (s *Server) getDream(w http.ResponseWriter, r *http.Request) error {
	_, d, err := s.resolveDream(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dreamOf(d))
	return nil
}

// changeDream is cancel or archive: a change of the dream row, which needs
// a key that may change things (not read-only). It is audited as action
// when it changed the dream.
func (s *Server) changeDream(w http.ResponseWriter, r *http.Request, action string,
	change func(p teammem.Principal, d teammem.Dream) (teammem.Dream, bool, error)) error {
	p, d, err := s.resolveDream(r)
	if err != nil {
		return err
	}
	if err := teammem.Authorize(p, teammem.ScopeAction(dreamScope(d), false), true); err != nil {
		return err
	}
	d, changed, err := change(p, d)
	if err != nil {
		return err
	}
	if changed {
		s.audit(r.Context(), p, action, "", d.ID, map[string]any{"api": "dream", "input": d.InputStoreID(), "status": d.Status})
	}
	writeJSON(w, http.StatusOK, dreamOf(d))
	return nil
}

// cancelDream serves POST /v1/dreams/{dream_id}/cancel.
func (s *Server) cancelDream(w http.ResponseWriter, r *http.Request) error {
	return s.changeDream(w, r, "dream.canceled", func(p teammem.Principal, d teammem.Dream) (teammem.Dream, bool, error) {
		was := d.Status
		d, err := s.store.DreamCancel(r.Context(), p.Org.ID, d.ID, s.now())
		return d, err == nil && was != teammem.DreamCanceled, err
	})
}

// archiveDream serves POST /v1/dreams/{dream_id}/archive.
func (s *Server) archiveDream(w http.ResponseWriter, r *http.Request) error {
	return s.changeDream(w, r, "dream.archived", func(p teammem.Principal, d teammem.Dream) (teammem.Dream, bool, error) {
		was := d.ArchivedAt
		d, err := s.store.DreamArchive(r.Context(), p.Org.ID, d.ID, s.now())
		return d, err == nil && was == nil, err
	})
}
