package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// pathParam decodes a path parameter. chi matches on the raw (escaped)
// path only when the request's escaping was not the default one (for
// instance a %2F inside a segment); otherwise parameters arrive decoded.
func pathParam(r *http.Request, v string) (string, error) {
	if r.URL.RawPath == "" {
		return v, nil
	}
	return url.PathUnescape(v)
}

// entryKey returns the key in the path of an entry route (keyRoutes).
func entryKey(r *http.Request) (string, error) {
	key, err := pathParam(r, chi.URLParam(r, keyParam))
	if err != nil {
		return "", teammem.Errorf(teammem.EInvalid, "entry key is not validly escaped")
	}
	return key, teammem.ValidateKey(key)
}

// getEntry serves GET .../entries/{key}: the raw content with the entry
// checksum as ETag.
func (s *Server) getEntry(w http.ResponseWriter, r *http.Request) error {
	key, err := entryKey(r)
	if err != nil {
		return err
	}
	sr, err := s.resolveSpace(r, false)
	if err != nil {
		return err
	}
	if sr.space.ID == 0 {
		return teammem.Errorf(teammem.ENotFound, "entry %q not found", key)
	}
	e, err := s.store.EntryGet(r.Context(), sr.p.Org.ID, sr.space.ID, key)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return teammem.Errorf(teammem.ENotFound, "entry %q not found", key)
	} else if err != nil {
		return err
	}
	w.Header().Set("ETag", `"`+e.Checksum+`"`)
	w.Header().Set("X-Teammem-Version", strconv.FormatInt(e.Version, 10))
	if ifNoneMatch(r, e.Checksum) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(e.Content)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, e.Content)
	return nil
}

// putEntry serves PUT .../entries/{key}: the body is the file's bytes.
// If-Match names the checksum the writer saw; If-None-Match: * creates only.
func (s *Server) putEntry(w http.ResponseWriter, r *http.Request) error {
	key, err := entryKey(r)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	up := teammem.Upsert{Key: key, Content: string(body)}
	if v := r.Header.Get("If-Match"); v != "" {
		base := teammem.NormalizeETag(v)
		up.Base = &base
	} else if strings.TrimSpace(r.Header.Get("If-None-Match")) == "*" {
		up.Base = new(string)
	}
	call, err := s.v1Call(r, teammem.WriteRequest{Upserts: []teammem.Upsert{up}})
	if err != nil {
		return err
	}
	res, err := s.write(r.Context(), call)
	if err != nil {
		return asPrecondition(err)
	}
	if writeHeld(w, res) {
		return nil
	}
	resp := wire.EntryWriteResult{WriteResult: writeResultOf(res), Key: key}
	for _, f := range res.SkippedSecrets {
		if f.KeyChecksum != "" {
			resp.Key = f.Path // the key holds the secret: never repeated
		}
	}
	if len(res.SkippedSecrets) == 0 && len(res.SkippedTombstoned) == 0 {
		resp.EntryChecksum = teammem.EntryChecksum(up.Content)
		w.Header().Set("ETag", `"`+resp.EntryChecksum+`"`)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// asPrecondition turns a single entry's base conflict into the 412 that
// If-Match semantics call for, keeping the current state in the details.
func asPrecondition(err error) error {
	var te *teammem.Error
	if !errors.As(err, &te) || te.Code != teammem.EConflict {
		return err
	}
	conflicts, _ := te.Details["conflicts"].([]teammem.Conflict)
	details := map[string]any{}
	if len(conflicts) == 1 {
		details["checksum"] = conflicts[0].Checksum
		details["content"] = conflicts[0].Content
		details["deleted"] = conflicts[0].Deleted
	}
	return teammem.Errorf(teammem.EPreconditionFailed, "the entry changed: its checksum no longer matches the precondition").WithDetails(details)
}

// deleteEntry serves DELETE .../entries/{key}: the entry becomes a tombstone.
func (s *Server) deleteEntry(w http.ResponseWriter, r *http.Request) error {
	key, err := entryKey(r)
	if err != nil {
		return err
	}
	del := teammem.Delete{Key: key}
	if v := r.Header.Get("If-Match"); v != "" {
		base := teammem.NormalizeETag(v)
		del.Base = &base
	}
	call, err := s.v1Call(r, teammem.WriteRequest{Deletes: []teammem.Delete{del}})
	if err != nil {
		return err
	}
	res, err := s.write(r.Context(), call)
	if err != nil {
		return asPrecondition(err)
	}
	if writeHeld(w, res) {
		return nil
	}
	if len(res.Deleted) == 0 {
		return teammem.Errorf(teammem.ENotFound, "entry %q not found", key)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// getHistory serves GET .../entries/{key}/history.
func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) error {
	key, err := entryKey(r)
	if err != nil {
		return err
	}
	sr, err := s.resolveSpace(r, false)
	if err != nil {
		return err
	}
	var versions []teammem.EntryVersion
	if sr.space.ID != 0 {
		if versions, err = s.store.EntryHistory(r.Context(), sr.p.Org.ID, sr.space.ID, key); err != nil {
			return err
		}
	}
	if len(versions) == 0 {
		return teammem.Errorf(teammem.ENotFound, "entry %q has no history", key)
	}
	writeJSON(w, http.StatusOK, wire.History{Key: key, Versions: versions})
	return nil
}

// restoreEntry serves POST .../entries/{key}/restore {"version": N}: that
// version's content is written back as a new version.
func (s *Server) restoreEntry(w http.ResponseWriter, r *http.Request) error {
	key, err := entryKey(r)
	if err != nil {
		return err
	}
	var body wire.RestoreRequest
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Version < 1 {
		return teammem.Errorf(teammem.EInvalid, `restore needs {"version": N} with N >= 1`)
	}
	sr, err := s.resolveSpace(r, true)
	if err != nil {
		return err
	}
	if sr.scope == teammem.ScopeTeam {
		if err := teammem.Authorize(sr.p, teammem.ActTeamModerate, true); err != nil {
			return err
		}
	}
	v, err := s.store.EntryVersionGet(r.Context(), sr.p.Org.ID, sr.space.ID, key, body.Version)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return teammem.Errorf(teammem.ENotFound, "entry %q has no version %d", key, body.Version)
	} else if err != nil {
		return err
	}
	up, err := teammem.RestoreUpsert(v) // refuses deletions and redacted versions
	if err != nil {
		return err
	}
	call := writeCall(r, sr.p, apiV1, sr.slug, sr.scope, teammem.WriteRequest{Restore: true, Upserts: []teammem.Upsert{up}})
	call.Moderate = true
	call.Audit = []teammem.AuditEvent{{Action: "entry.restore", Target: key, Details: map[string]any{"scope": sr.scope, "version": body.Version}}}
	res, err := s.write(r.Context(), call)
	if err != nil {
		return err
	}
	resp := wire.EntryWriteResult{WriteResult: writeResultOf(res), Key: key}
	if len(res.Written) == 1 {
		resp.EntryChecksum = v.Checksum
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
