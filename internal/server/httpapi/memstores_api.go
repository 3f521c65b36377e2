package httpapi

import (
	"net/http"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// The store and version routes of Anthropic's public Memory Stores API:
// stores list/create/get/update/delete/archive, versions list/get/redact.
// Claude Code's client never calls them (reference §4.1).

// storeObject is a memory store (type "memory_store").
type storeObject struct {
	ID          string            `json:"id"`
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	ArchivedAt  *time.Time        `json:"archived_at"`
	CreatedAt   time.Time         `json:"created_at"`
	UpdatedAt   time.Time         `json:"updated_at"`
}

// storeOf encodes a store. A repo's spaces take their name from the repo
// and carry it, with the scope, as read-only metadata.
func storeOf(m teammem.MemoryStore) storeObject {
	o := storeObject{ID: m.ID(), Type: "memory_store", Name: m.Name, Description: m.Description, Metadata: m.Metadata,
		ArchivedAt: m.ArchivedAt, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	if !m.API {
		o.Name = m.Repo.Slug
		if m.Space.Scope == teammem.ScopePersonal {
			o.Name += " (personal)"
		}
		o.Metadata = map[string]string{"teammem_repo": m.Repo.Slug, "teammem_scope": string(m.Space.Scope)}
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	return o
}

// storePage is a page of stores.
type storePage struct {
	Data     []storeObject `json:"data"`
	NextPage *string       `json:"next_page"`
}

// queryTime parses an optional RFC 3339 query parameter.
func queryTime(r *http.Request, name string) (*time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, teammem.Errorf(teammem.EInvalid, "%s must be an RFC 3339 date-time", name)
	}
	return &t, nil
}

// queryRowID parses a page cursor that is a row id.
func queryRowID(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("page")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, teammem.Errorf(teammem.EInvalid, "page is not a cursor this server gave out")
	}
	return n, nil
}

// listStores serves GET /v1/memory_stores.
func (s *Server) listStores(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	f := teammem.MemoryStoreFilter{UserID: p.User.ID, IncludeArchived: r.URL.Query().Get("include_archived") == "true"}
	var err error
	if f.Limit, err = queryInt(r, "limit", 20, 1, 100); err != nil {
		return err
	}
	if f.AfterSpaceID, err = queryRowID(r); err != nil {
		return err
	}
	if f.CreatedGTE, err = queryTime(r, "created_at[gte]"); err != nil {
		return err
	}
	if f.CreatedLTE, err = queryTime(r, "created_at[lte]"); err != nil {
		return err
	}
	if teammem.Authorize(p, teammem.ActPersonalRead, false) != nil {
		f.UserID = -1 // viewers see no personal spaces
	}
	want := f.Limit
	f.Limit++
	list, err := s.store.MemoryStoreList(r.Context(), p.Org.ID, f)
	if err != nil {
		return err
	}
	page := storePage{Data: []storeObject{}}
	for i, m := range list {
		if i == want {
			next := strconv.FormatInt(list[i-1].Space.ID, 10)
			page.NextPage = &next
			break
		}
		page.Data = append(page.Data, storeOf(m))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// storeFields is the body of a store create or update. A null metadata
// value deletes that key on update.
type storeFields struct {
	Name        *string            `json:"name"`
	Description *string            `json:"description"`
	Metadata    map[string]*string `json:"metadata"`
}

// checkStoreText applies the API's rules to a name, description or
// metadata pair: valid UTF-8 whose length the SDKs document in characters,
// counted here as code points (a name of 255 "€" is 765 bytes and fine).
func checkStoreText(field, v string, min, max int) error {
	if n := utf8.RuneCountInString(v); !utf8.ValidString(v) || n < min || n > max {
		return teammem.Errorf(teammem.EInvalid, "%s must be %d to %d characters of UTF-8", field, min, max)
	}
	for _, c := range v {
		if unicode.IsControl(c) && (field == "name" || c != '\n' && c != '\t' && c != '\r') {
			return teammem.Errorf(teammem.EInvalid, "%s must not contain control characters", field)
		}
	}
	return nil
}

// apply checks the fields and merges them into cur (an update) or a new
// store (cur nil).
func (b storeFields) apply(s *Server, org teammem.Org, cur map[string]string) (teammem.MemoryStoreUpdateParams, error) {
	var up teammem.MemoryStoreUpdateParams
	if b.Name != nil {
		if err := checkStoreText("name", *b.Name, 1, 255); err != nil {
			return up, err
		}
		up.Name = b.Name
	}
	if b.Description != nil {
		if err := checkStoreText("description", *b.Description, 0, 1024); err != nil {
			return up, err
		}
		up.Description = b.Description
	}
	if b.Metadata != nil {
		meta := map[string]string{}
		for k, v := range cur {
			meta[k] = v
		}
		for k, v := range b.Metadata {
			if v == nil {
				delete(meta, k)
				continue
			}
			if err := checkStoreText("metadata key", k, 1, 64); err != nil {
				return up, err
			}
			if err := checkStoreText("metadata value", *v, 0, 512); err != nil {
				return up, err
			}
			meta[k] = *v
		}
		if len(meta) > 16 {
			return up, teammem.Errorf(teammem.EInvalid, "metadata holds at most 16 pairs")
		}
		up.Metadata = meta
	}
	// What the store keeps besides memories is shown to every reader of
	// the org: no secrets there either.
	for _, v := range storeTexts(up) {
		if found := s.scanText(org, v); found != nil {
			return up, found
		}
	}
	return up, nil
}

func storeTexts(up teammem.MemoryStoreUpdateParams) []string {
	var out []string
	if up.Name != nil {
		out = append(out, *up.Name)
	}
	if up.Description != nil {
		out = append(out, *up.Description)
	}
	for k, v := range up.Metadata {
		out = append(out, k, v)
	}
	return out
}

// scanText refuses a store field that holds a secret, with the message
// Claude Code's client knows.
func (s *Server) scanText(org teammem.Org, v string) error {
	if s.writer.Scanner == nil || v == "" {
		return nil
	}
	if len(s.writer.Scanner.ScanEntry(org, "store", teammem.NameScanText(v))) > 0 {
		return teammem.Errorf(teammem.EInvalid, teammem.MsgContentSecret)
	}
	return nil
}

// createStore serves POST /v1/memory_stores: an org store without a repo.
// A create spends a write token, as a memory write does, and an org holds
// at most MaxStoresPerOrg stores.
func (s *Server) createStore(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamWrite, true); err != nil {
		return err
	}
	if err := s.limiter.allowWrite(p, s.now()); err != nil {
		return err
	}
	var body storeFields
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return teammem.Errorf(teammem.EInvalid, "name is required")
	}
	up, err := body.apply(s, p.Org, nil)
	if err != nil {
		return err
	}
	found, err := s.reviewStoreFields(r, p, "", teammem.OpStoreCreate, up, "")
	if err != nil {
		return err
	}
	cp := teammem.MemoryStoreCreateParams{Name: *up.Name, Metadata: up.Metadata, MaxStores: s.maxStoresPerOrg()}
	if up.Description != nil {
		cp.Description = *up.Description
	}
	m, err := s.store.MemoryStoreCreate(r.Context(), p.Org.ID, cp)
	if err != nil {
		return err
	}
	s.audit(r.Context(), p, "memory_store.create", "", m.ID(), nil)
	s.auditStoreFindings(r, p, m.ID(), found)
	writeJSON(w, http.StatusOK, storeOf(m))
	return nil
}

// maxStoresPerOrg is the store cap in effect.
func (s *Server) maxStoresPerOrg() int {
	if s.cfg.MaxStoresPerOrg > 0 {
		return s.cfg.MaxStoresPerOrg
	}
	return teammem.DefaultMaxStoresPerOrg
}

// getStore serves GET /v1/memory_stores/{store_id}.
func (s *Server) getStore(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, storeOf(sr.store))
	return nil
}

// apiStore resolves a store whose fields may change: one made through the
// API, not archived.
func (s *Server) apiStore(r *http.Request, moderate bool) (*storeReq, error) {
	sr, err := s.resolveStore(r, true)
	if err != nil {
		return nil, err
	}
	if moderate {
		if err := teammem.Authorize(sr.p, teammem.ActTeamModerate, true); err != nil {
			return nil, err
		}
	}
	if !sr.store.API {
		return nil, teammem.Errorf(teammem.EInvalid, "the store of a repository's space cannot be changed, archived or deleted through this API")
	}
	return sr, nil
}

// updateStore serves POST /v1/memory_stores/{store_id}.
func (s *Server) updateStore(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.apiStore(r, false)
	if err != nil {
		return err
	}
	var body storeFields
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if sr.store.Archived() {
		return teammem.StoreArchived()
	}
	up, err := body.apply(s, sr.p.Org, sr.store.Metadata)
	if err != nil {
		return err
	}
	found, err := s.reviewStoreFields(r, sr.p, sr.store.Repo.Slug, teammem.OpStoreFields, up, sr.store.FieldsChecksum())
	if err != nil {
		return err
	}
	m, err := s.store.MemoryStoreUpdate(r.Context(), sr.p.Org.ID, sr.store.Space.ID, up)
	if err != nil {
		s.forgetIfArchived(sr, err)
		return err
	}
	s.storeChanged(r.Context(), sr.store)
	s.auditStoreFindings(r, sr.p, m.ID(), found)
	writeJSON(w, http.StatusOK, storeOf(m))
	return nil
}

// archiveStore serves POST /v1/memory_stores/{store_id}/archive: the store
// becomes read-only for good, which no one can undo, so it takes what a
// delete takes: moderation (admins and owners).
func (s *Server) archiveStore(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.apiStore(r, true)
	if err != nil {
		return err
	}
	at := s.now().UTC()
	m, err := s.store.MemoryStoreUpdate(r.Context(), sr.p.Org.ID, sr.store.Space.ID, teammem.MemoryStoreUpdateParams{ArchivedAt: &at})
	if err != nil {
		return err
	}
	s.storeChanged(r.Context(), sr.store)
	s.audit(r.Context(), sr.p, "memory_store.archive", "", m.ID(), nil)
	writeJSON(w, http.StatusOK, storeOf(m))
	return nil
}

// deleteStore serves DELETE /v1/memory_stores/{store_id}: the store, its
// memories and their history go (admins and owners).
func (s *Server) deleteStore(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.apiStore(r, true)
	if err != nil {
		return err
	}
	if err := s.store.MemoryStoreDelete(r.Context(), sr.p.Org.ID, sr.store.Space.ID); err != nil {
		return err
	}
	s.storeChanged(r.Context(), sr.store)
	s.audit(r.Context(), sr.p, "memory_store.delete", "", sr.store.ID(), nil)
	writeJSON(w, http.StatusOK, deletedObject{ID: sr.store.ID(), Type: "memory_store_deleted"})
	return nil
}

// actor is who made or redacted a version, named by the prefixed ids the
// SDKs document (teammem.APIKeyActorID, teammem.UserActorID).
type actor struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id,omitempty"`
	APIKeyID  string `json:"api_key_id,omitempty"`
	UserID    string `json:"user_id,omitempty"`
}

// versionObject is a memory version (type "memory_version").
type versionObject struct {
	ID               string     `json:"id"`
	Type             string     `json:"type"`
	MemoryID         string     `json:"memory_id"`
	MemoryStoreID    string     `json:"memory_store_id"`
	Operation        string     `json:"operation"`
	Content          *string    `json:"content"`
	ContentSHA256    *string    `json:"content_sha256"`
	ContentSizeBytes *int       `json:"content_size_bytes"`
	Path             *string    `json:"path"`
	CreatedAt        time.Time  `json:"created_at"`
	CreatedBy        actor      `json:"created_by"`
	RedactedAt       *time.Time `json:"redacted_at"`
	RedactedBy       *actor     `json:"redacted_by"`
}

func versionOf(sr *storeReq, v teammem.EntryVersion, full bool) versionObject {
	o := versionObject{ID: teammem.VersionID(v.ID), Type: "memory_version", MemoryID: v.MemoryID, MemoryStoreID: sr.store.ID(),
		Operation: "modified", CreatedAt: v.CreatedAt, RedactedAt: v.RedactedAt}
	switch {
	case v.Op == teammem.OpDelete:
		o.Operation = "deleted"
	case v.Created:
		o.Operation = "created"
	}
	switch {
	case v.SessionID != "":
		o.CreatedBy = actor{Type: "session_actor", SessionID: v.SessionID}
	case v.KeyID != "":
		o.CreatedBy = actor{Type: "api_actor", APIKeyID: teammem.APIKeyActorID(v.KeyID)}
	default:
		o.CreatedBy = actor{Type: "user_actor", UserID: teammem.UserActorID(v.AuthorID)}
	}
	if v.Redacted() {
		o.RedactedBy = &actor{Type: "user_actor", UserID: teammem.UserActorID(v.RedactedByID)}
		return o // content, path and hashes are gone
	}
	path := teammem.MemoryPath(v.Key)
	o.Path = &path
	if v.Op != teammem.OpDelete {
		sum, size := teammem.ContentSHA256(v.Checksum), v.Size
		o.ContentSHA256, o.ContentSizeBytes = &sum, &size
		if full {
			c := v.Content
			o.Content = &c
		}
	}
	return o
}

// versionPage is a page of versions.
type versionPage struct {
	Data     []versionObject `json:"data"`
	NextPage *string         `json:"next_page"`
}

// listVersions serves GET …/memory_versions, newest first.
func (s *Server) listVersions(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, false)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := teammem.MemoryVersionFilter{MemoryID: q.Get("memory_id"), Operation: q.Get("operation"), SessionID: q.Get("session_id"),
		KeyID: teammem.KeyIDOf(q.Get("api_key_id"))}
	switch f.Operation {
	case "", "created", "modified", "deleted":
	default:
		return teammem.Errorf(teammem.EInvalid, "operation must be created, modified or deleted")
	}
	if f.WithContent, err = memoryView(r, "basic"); err != nil {
		return err
	}
	if f.Limit, err = queryInt(r, "limit", 20, 1, 100); err != nil {
		return err
	}
	if f.BeforeID, err = queryRowID(r); err != nil {
		return err
	}
	if f.CreatedGTE, err = queryTime(r, "created_at[gte]"); err != nil {
		return err
	}
	if f.CreatedLTE, err = queryTime(r, "created_at[lte]"); err != nil {
		return err
	}
	page := versionPage{Data: []versionObject{}}
	if q.Get("service_account_id") != "" { // teammem has no service accounts
		writeJSON(w, http.StatusOK, page)
		return nil
	}
	want := f.Limit
	f.Limit++
	list, err := s.store.MemoryVersionsList(r.Context(), sr.p.Org.ID, sr.store.Space.ID, f)
	if err != nil {
		return err
	}
	for i, v := range list {
		if i == want {
			next := strconv.FormatInt(list[i-1].ID, 10)
			page.NextPage = &next
			break
		}
		page.Data = append(page.Data, versionOf(sr, v, f.WithContent))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// versionByID loads the version the path names, which must belong to the
// store it was addressed through.
func (s *Server) versionByID(r *http.Request, sr *storeReq) (teammem.EntryVersion, error) {
	id := chi.URLParam(r, "version_id")
	notFound := teammem.Errorf(teammem.ENotFound, "memory version %s not found", truncateID(id))
	row, ok := teammem.VersionRowID(id)
	if !ok {
		return teammem.EntryVersion{}, notFound
	}
	v, err := s.store.MemoryVersionGet(r.Context(), sr.p.Org.ID, sr.store.Space.ID, row)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return v, notFound
	}
	return v, err
}

// getVersion serves GET …/memory_versions/{version_id}.
func (s *Server) getVersion(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, false)
	if err != nil {
		return err
	}
	full, err := memoryView(r, "full")
	if err != nil {
		return err
	}
	v, err := s.versionByID(r, sr)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, versionOf(sr, v, full))
	return nil
}

// redactMemoryVersion serves POST …/memory_versions/{version_id}/redact:
// the version's content, path and hashes are erased from the database for
// good (the /v1 history redaction: moderation on team stores).
func (s *Server) redactMemoryVersion(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, true)
	if err != nil {
		return err
	}
	if sr.store.Space.Scope == teammem.ScopeTeam {
		if err := teammem.Authorize(sr.p, teammem.ActTeamModerate, true); err != nil {
			return err
		}
	}
	v, err := s.versionByID(r, sr)
	if err != nil {
		return err
	}
	if _, _, err := s.store.VersionRedact(r.Context(), sr.p.Org.ID, sr.store.Space.ID, teammem.VersionRedactParams{
		Key: v.Key, Version: v.Version, By: sr.p.User.ID, At: s.now().UTC()}); err != nil {
		return err
	}
	s.audit(r.Context(), sr.p, "entry.redact", sr.store.Repo.Slug, v.Key, map[string]any{"version": v.Version, "api": sr.api})
	if v, err = s.versionByID(r, sr); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, versionOf(sr, v, true))
	return nil
}
