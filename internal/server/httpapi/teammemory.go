package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// The Claude Code team memory endpoint (design §4.1, reference §3.4): a
// stock client pointed at this server with TEAM_MEMORY_SYNC_URL pulls with
// ETags, probes hashes on conflict and pushes upserts with If-Match.

// teamMemoryResponse is the 200 body of a full GET.
type teamMemoryResponse struct {
	OrganizationID string            `json:"organizationId"`
	Repo           string            `json:"repo"`
	Version        int64             `json:"version"`
	LastModified   string            `json:"lastModified"`
	Checksum       string            `json:"checksum"`
	Content        teamMemoryContent `json:"content"`
}

type teamMemoryContent struct {
	Entries        map[string]string `json:"entries"`
	EntryChecksums map[string]string `json:"entryChecksums"`
}

// teamMemoryHashes is the 200 body of GET ?view=hashes: top-level checksums.
type teamMemoryHashes struct {
	OrganizationID string            `json:"organizationId"`
	Repo           string            `json:"repo"`
	Version        int64             `json:"version"`
	LastModified   string            `json:"lastModified"`
	Checksum       string            `json:"checksum"`
	EntryChecksums map[string]string `json:"entryChecksums"`
}

// teamMemoryPutRequest is the PUT body: only the changed entries.
type teamMemoryPutRequest struct {
	Entries map[string]string `json:"entries"`
}

// teamMemoryPutResponse is the 200 body of a PUT. The stock client reads
// checksum and lastModified; the rest reports what happened.
type teamMemoryPutResponse struct {
	OrganizationID    string                  `json:"organizationId"`
	Repo              string                  `json:"repo"`
	Version           int64                   `json:"version"`
	LastModified      string                  `json:"lastModified"`
	Checksum          string                  `json:"checksum"`
	FilesUploaded     int                     `json:"filesUploaded"`
	SkippedSecrets    []teammem.SkippedSecret `json:"skippedSecrets"`
	SkippedTombstoned []string                `json:"skippedTombstoned"`
	// HeldForReview lists the entries held as proposal ProposalID for an
	// admin's review (team_writes: review, or poisoning: review). The
	// stock client has no per-file notice: it takes the 200 as success,
	// keeps its files and does not send them again until they change
	// (or a pull tells it the server lacks them, when the same proposal
	// is found again rather than made twice).
	HeldForReview []string `json:"heldForReview,omitempty"`
	ProposalID    int64    `json:"proposalId,omitempty"`
	// Findings are the poisoning checks' findings on what was written.
	Findings []teammem.PoisonFinding `json:"findings,omitempty"`
}

func lastModified(s teammem.Space) string { return s.UpdatedAt.UTC().Format(time.RFC3339Nano) }

// getTeamMemory serves GET /api/claude_code/team_memory.
func (s *Server) getTeamMemory(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	outcome := "error"
	defer func() { s.metrics.Pulls.WithLabelValues(p.Org.Slug, apiClaudeCode, outcome).Inc() }()
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	q := r.URL.Query()
	slug := q.Get("repo")
	hashes := q.Get("view") == "hashes"
	if v := q.Get("view"); v != "" && !hashes {
		return teammem.Errorf(teammem.EInvalid, "view must be \"hashes\" or absent")
	}
	var sp teammem.Space
	err := teammem.ValidateRepoSlug(slug)
	if err != nil {
		err = s.slugError(p.Org, slug, err)
	} else {
		var sr *spaceReq
		if sr, err = s.loadSpace(r.Context(), p, slug, teammem.ScopeTeam, false); err == nil {
			sp = sr.space
		}
	}
	if err == nil && sp.Empty() {
		err = teammem.Errorf(teammem.ENotFound, "no team memory for repo %q", slug)
	}
	if err != nil {
		if teammem.ErrorCode(err) == teammem.ENotFound {
			outcome = "empty"
		}
		return err
	}
	// The canonical key set directly: Header.Set would canonicalize "ETag"
	// into a new string on every pull.
	w.Header()["Etag"] = []string{`"` + sp.Checksum + `"`}
	if !hashes && ifNoneMatch(r, sp.Checksum) {
		outcome = "not_modified"
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	body, ok := s.cache.body(bodyKey{space: sp.ID, version: sp.Version, hashes: hashes, repo: slug})
	if !ok {
		// The head and entries come from one snapshot; the body is cached
		// under the version it describes, which may be newer than the head
		// this replica had cached.
		if sp, body, err = s.pullBody(r.Context(), p, slug, sp.ID, hashes); err != nil {
			return err
		}
		s.cache.putBody(bodyKey{space: sp.ID, version: sp.Version, hashes: hashes, repo: slug}, body)
		w.Header().Set("ETag", `"`+sp.Checksum+`"`)
	}
	outcome = "ok"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// pullBody encodes the 200 body of a full pull or a hashes probe.
func (s *Server) pullBody(ctx context.Context, p teammem.Principal, slug string, spaceID int64, hashes bool) (teammem.Space, []byte, error) {
	sp, entries, err := s.store.SpaceSnapshot(ctx, p.Org.ID, spaceID, !hashes)
	if err != nil {
		return sp, nil, err
	}
	sums := make(map[string]string, len(entries))
	for _, e := range entries {
		sums[e.Key] = e.Checksum
	}
	var v any = teamMemoryHashes{OrganizationID: p.Org.Slug, Repo: slug, Version: sp.Version,
		LastModified: lastModified(sp), Checksum: sp.Checksum, EntryChecksums: sums}
	if !hashes {
		contents := make(map[string]string, len(entries))
		for _, e := range entries {
			contents[e.Key] = e.Content
		}
		v = teamMemoryResponse{OrganizationID: p.Org.Slug, Repo: slug, Version: sp.Version,
			LastModified: lastModified(sp), Checksum: sp.Checksum, Content: teamMemoryContent{Entries: contents, EntryChecksums: sums}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return sp, nil, err
	}
	return sp, buf.Bytes(), nil
}

// ifNoneMatch reports whether the request's If-None-Match names checksum
// (quotes optional, a list or "*" allowed).
func ifNoneMatch(r *http.Request, checksum string) bool {
	for _, v := range r.Header.Values("If-None-Match") {
		for _, part := range splitETags(v) {
			if part == "*" || teammem.NormalizeETag(part) == checksum {
				return true
			}
		}
	}
	return false
}

func splitETags(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.Trim(part, " \t"); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// putTeamMemory serves PUT /api/claude_code/team_memory: an atomic upsert.
func (s *Server) putTeamMemory(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	slug := r.URL.Query().Get("repo")
	req, err := decodeTeamMemoryPut(r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if !errors.As(err, &tooLarge) { // limitBody counts those
			s.recordWrite(r.Context(), p, apiClaudeCode, slug, teammem.WriteResult{}, err)
		}
		return err
	}
	res, err := s.write(r.Context(), writeCall(r, p, apiClaudeCode, slug, teammem.ScopeTeam, req))
	if err != nil {
		return err
	}
	w.Header().Set("ETag", `"`+res.Space.Checksum+`"`)
	body := teamMemoryPutResponse{OrganizationID: p.Org.Slug, Repo: slug, Version: res.Space.Version,
		LastModified: lastModified(res.Space), Checksum: res.Space.Checksum, FilesUploaded: len(res.Written),
		SkippedSecrets: nonNil(res.SkippedSecrets), SkippedTombstoned: nonNil(res.SkippedTombstoned), Findings: res.Findings}
	if res.Held() {
		body.HeldForReview, body.ProposalID = res.Proposal.Keys(), res.Proposal.ID
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// decodeTeamMemoryPut reads a Claude Code PUT body {"entries": {...}} with
// its If-Match.
func decodeTeamMemoryPut(r *http.Request) (teammem.WriteRequest, error) {
	var body teamMemoryPutRequest
	if err := decodeJSON(r, &body); err != nil {
		return teammem.WriteRequest{}, err
	}
	if body.Entries == nil {
		return teammem.WriteRequest{}, teammem.Errorf(teammem.EInvalid, `request body must be {"entries": {"<key>": "<content>", ...}}`)
	}
	req := teammem.WriteRequest{IfMatch: r.Header.Get("If-Match")}
	for k, v := range body.Entries {
		req.Upserts = append(req.Upserts, teammem.Upsert{Key: k, Content: v})
	}
	return req, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
