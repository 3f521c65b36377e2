package httpapi

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"github.com/go-chi/chi/v5"
	"net/http"
	"strconv"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// getSpace serves GET .../{scope}: a snapshot, 304 when If-None-Match names
// the current checksum.
func (s *Server) getSpace(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveSpace(r, false)
	if err != nil {
		return err
	}
	view := r.URL.Query().Get("view")
	if view != "" && view != "hashes" && view != "head" {
		return teammem.Errorf(teammem.EInvalid, "view must be hashes, head or absent")
	}
	outcome := "ok"
	defer func() { s.metrics.Pulls.WithLabelValues(sr.p.Org.Slug, apiV1, outcome).Inc() }()
	w.Header().Set("ETag", `"`+sr.space.Checksum+`"`)
	if ifNoneMatch(r, sr.space.Checksum) {
		outcome = "not_modified"
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	resp := wire.Snapshot{Repo: sr.slug, SpaceHead: headOf(sr.space), MaxEntryBytes: s.maxEntryBytes(sr.p.Org)}
	if sr.space.ID != 0 && sr.space.UID != "" {
		resp.MemoryStoreID = teammem.StoreID(sr.space)
	}
	if sr.space.Empty() {
		outcome = "empty"
	}
	if view != "head" {
		list := []wire.Entry{}
		if sr.space.ID != 0 {
			// Head and entries from one snapshot, so they always agree.
			sp, entries, err := s.store.SpaceSnapshot(r.Context(), sr.p.Org.ID, sr.space.ID, view == "")
			if err != nil {
				outcome = "error"
				return err
			}
			resp.SpaceHead = headOf(sp)
			w.Header().Set("ETag", `"`+sp.Checksum+`"`)
			for _, e := range entries {
				se := wire.Entry{Key: e.Key, Checksum: e.Checksum, Size: e.Size, Version: e.Version, Author: e.Author, UpdatedAt: e.UpdatedAt}
				if view == "" {
					se.Content = &e.Content
				}
				list = append(list, se)
			}
		}
		resp.Entries = &list
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// writeResultOf is the wire report of a committed write.
func writeResultOf(res teammem.WriteResult) wire.WriteResult {
	return wire.WriteResult{SpaceHead: headOf(res.Space), Written: nonNil(res.Written), Deleted: nonNil(res.Deleted),
		SkippedSecrets: nonNil(res.SkippedSecrets), SkippedTombstoned: nonNil(res.SkippedTombstoned), Findings: nonNil(res.Findings)}
}

// writeHeld answers a /v1 write that was held for review with 202 and the
// proposal, and reports whether it did.
func writeHeld(w http.ResponseWriter, res teammem.WriteResult) bool {
	if !res.Held() {
		return false
	}
	p := *res.Proposal
	p.Findings = nonNil(p.Findings)
	writeJSON(w, http.StatusAccepted, wire.HeldWrite{Status: wire.HeldStatus, Proposal: p,
		SkippedSecrets: nonNil(res.SkippedSecrets), SkippedTombstoned: nonNil(res.SkippedTombstoned)})
	return true
}

// maxEntryBytes is the entry cap in effect for org, announced to clients so
// they refuse oversized entries before writing them.
func (s *Server) maxEntryBytes(org teammem.Org) int {
	return org.Limits(s.cfg.Defaults).MaxEntryBytes
}

// postBatch serves POST .../batch: upserts and deletes applied atomically.
func (s *Server) postBatch(w http.ResponseWriter, r *http.Request) error {
	var body wire.BatchRequest
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	req := teammem.WriteRequest{IfMatch: body.IfMatch}
	for _, u := range body.Upserts {
		if u.MissingContent() {
			return teammem.Errorf(teammem.EInvalid, "upsert of %q has no content", u.Key)
		}
		req.Upserts = append(req.Upserts, teammem.Upsert{Key: u.Key, Content: u.Content, Base: u.Base, Recreates: u.Recreates, Overlap: u.Overlap})
	}
	for _, d := range body.Deletes {
		req.Deletes = append(req.Deletes, teammem.Delete{Key: d.Key, Base: d.Base})
	}
	if len(req.Upserts)+len(req.Deletes) == 0 {
		return teammem.Errorf(teammem.EInvalid, "a batch needs at least one upsert or delete")
	}
	call, err := s.v1Call(r, req)
	if err != nil {
		return err
	}
	res, err := s.write(r.Context(), call)
	if err != nil || writeHeld(w, res) {
		return err
	}
	writeJSON(w, http.StatusOK, writeResultOf(res))
	return nil
}

// v1Call is the write call of a /v1 request on the space its path names.
func (s *Server) v1Call(r *http.Request, req teammem.WriteRequest) (teammem.WriteCall, error) {
	slug, err := s.repoSlug(r)
	if err != nil {
		return teammem.WriteCall{}, err
	}
	scope := teammem.Scope(chi.URLParam(r, "scope"))
	if !scope.Valid() {
		return teammem.WriteCall{}, teammem.Errorf(teammem.ENotFound, "scope must be team or personal")
	}
	return writeCall(r, principal(r), apiV1, slug, scope, req), nil
}

// deleteSpace serves DELETE .../{scope}: every live entry becomes a
// tombstone in one version (for team spaces an admin's moderation). With
// ?purge=history every recorded version of the space goes too.
func (s *Server) deleteSpace(w http.ResponseWriter, r *http.Request) error {
	purge, err := purgeParam(r)
	if err != nil {
		return err
	}
	call, err := s.v1Call(r, teammem.WriteRequest{IfMatch: r.Header.Get("If-Match"), DeleteAll: true})
	if err != nil {
		return err
	}
	call.Moderate = true
	call.Audit = []teammem.AuditEvent{{Action: "space.delete", Target: string(call.Scope)}}
	res, err := s.write(r.Context(), call)
	if err != nil {
		return err
	}
	if res.Space.RepoID == 0 { // nothing to delete: the repo does not exist
		return teammem.Errorf(teammem.ENotFound, "repo %q not found", call.Repo)
	}
	if purge {
		// The purge is its own step after the deletes commit; its audit
		// row says how many versions it erased.
		details := map[string]any{}
		err := s.purgeHistory(r.Context(), call.Principal, res.Space.ID, details)
		s.audit(r.Context(), call.Principal, "space.history_purge", call.Repo, string(call.Scope), details)
		if err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, writeResultOf(res))
	return nil
}

// getChanges serves GET .../changes?since=N: the upserts (with content) and
// deletions after version N; 410 when tombstones needed for that were purged.
func (s *Server) getChanges(w http.ResponseWriter, r *http.Request) error {
	since, err := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	if err != nil || since < 0 {
		return teammem.Errorf(teammem.EInvalid, "since must be a version number (0 or more)")
	}
	sr, err := s.resolveSpace(r, false)
	if err != nil {
		return err
	}
	sp := sr.space
	if sp.ID != 0 { // the purge horizon is not cached: read the head itself
		if sp, err = s.store.SpaceGet(r.Context(), sr.p.Org.ID, sr.ref()); err != nil {
			return err
		}
	}
	switch {
	case since > sp.Version:
		return teammem.Errorf(teammem.EGone, "version %d is ahead of the space (at %d): the space was reset; do a full pull", since, sp.Version).
			WithDetails(map[string]any{"version": sp.Version})
	case since < sp.PurgedThrough:
		return teammem.Errorf(teammem.EGone, "deletions before version %d were forgotten; do a full pull", sp.PurgedThrough).
			WithDetails(map[string]any{"version": sp.Version, "purged_through": sp.PurgedThrough})
	}
	resp := wire.ChangeList{SpaceHead: headOf(sp), Since: since, MaxEntryBytes: s.maxEntryBytes(sr.p.Org), Changes: []wire.Change{}}
	if sp.ID != 0 && since < sp.Version {
		entries, err := s.store.ChangesList(r.Context(), sr.p.Org.ID, sp.ID, since)
		if err != nil {
			return err
		}
		for _, e := range entries {
			c := wire.Change{Key: e.Key, Op: wire.OpUpsert, Checksum: e.Checksum, Version: e.Version, Author: e.Author, UpdatedAt: e.UpdatedAt}
			if e.Deleted {
				c.Op = wire.OpDelete
			} else {
				content := e.Content
				c.Content, c.Overlap = &content, e.Overlap
			}
			resp.Changes = append(resp.Changes, c)
		}
	}
	s.metrics.Pulls.WithLabelValues(sr.p.Org.Slug, apiV1, "ok").Inc()
	w.Header().Set("ETag", `"`+sp.Checksum+`"`)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// getExport serves GET .../export: a tar.gz of the live files.
func (s *Server) getExport(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveSpace(r, false)
	if err != nil {
		return err
	}
	entries, err := s.liveEntries(r.Context(), sr, true)
	if err != nil {
		return err
	}
	s.auditRead(r.Context(), sr.p, "space.export", sr.slug, string(sr.scope), map[string]any{"entries": len(entries)})
	name := "teammem-" + string(sr.scope) + ".tar.gz"
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("ETag", `"`+sr.space.Checksum+`"`)
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Key, Mode: 0o644, Size: int64(len(e.Content)), ModTime: e.UpdatedAt, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("export: %w", err) // the status is sent: the adapter records, never answers
		}
		if _, err := tw.Write([]byte(e.Content)); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// getIndex serves GET .../MEMORY.md: the stored index truncated as Claude
// Code loads it, or one rendered from the topic files' frontmatter.
func (s *Server) getIndex(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveSpace(r, false)
	if err != nil {
		return err
	}
	switch r.URL.Query().Get("lint") {
	case "":
	case "1", "true":
		return s.getIndexLint(w, r, sr)
	default:
		return teammem.Errorf(teammem.EInvalid, `lint must be "1" or absent`)
	}
	idx, err := s.spaceIndex(r.Context(), sr)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("ETag", `"`+idx.checksum+`"`)
	if idx.rendered {
		w.Header().Set("X-Teammem-Index", "rendered")
	} else {
		w.Header().Set("X-Teammem-Index", "stored")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(idx.text))
	return nil
}

// liveEntries lists the space's live entries; a space never written has none.
func (s *Server) liveEntries(ctx context.Context, sr *spaceReq, withContent bool) ([]teammem.Entry, error) {
	if sr.space.ID == 0 {
		return nil, nil
	}
	return s.store.EntriesList(ctx, sr.p.Org.ID, sr.space.ID, withContent)
}
