package httpapi

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// The memory routes both dialects share: list (E3/E3'), get (E4), create
// (E5), update (E6) and delete (E7), each decode → s.storeWrite or a read →
// encode.

// memoryWrite is the body of a create or an update.
type memoryWrite struct {
	Path         *string       `json:"path"`
	Content      *string       `json:"content"`
	Precondition *precondition `json:"precondition"`
}

// precondition is a write's condition: {"type":"not_exists"} (Claude Code's
// create) or {"type":"content_sha256","content_sha256":"<hex>"}.
type precondition struct {
	Type          string `json:"type"`
	ContentSHA256 string `json:"content_sha256"`
}

// base returns the write base a precondition asks for (nil: none).
func (p *precondition) base() (*string, error) {
	if p == nil {
		return nil, nil
	}
	switch p.Type {
	case "not_exists":
		return new(string), nil
	case "content_sha256":
		if !isSHA256Hex(p.ContentSHA256) {
			return nil, teammem.Errorf(teammem.EInvalid, "precondition.content_sha256 must be 64 hex digits")
		}
		b := teammem.ChecksumOfSHA256(p.ContentSHA256)
		return &b, nil
	}
	return nil, teammem.Errorf(teammem.EInvalid, "precondition.type must be not_exists or content_sha256")
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// checkContent applies the dialect's content rules.
func checkContent(c *string) error {
	switch {
	case c == nil:
		return teammem.Errorf(teammem.EInvalid, "content is required")
	case len(*c) > teammem.MaxMemoryBytes:
		return teammem.Errorf(teammem.EInvalid, teammem.MsgContentTooLarge)
	}
	return nil
}

// memoryView reads ?view= (basic or full), def when absent.
func memoryView(r *http.Request, def string) (full bool, err error) {
	switch v := r.URL.Query().Get("view"); v {
	case "":
		return def == "full", nil
	case "basic", "full":
		return v == "full", nil
	}
	return false, teammem.Errorf(teammem.EInvalid, "view must be basic or full")
}

// writeViewDefault is the view a create or update answers in without
// ?view=: basic on the public API, as the SDKs declare (content null, sha
// and size set), full in Claude Code's dialect, whose client has always
// got the content back.
func writeViewDefault(sr *storeReq) string {
	if sr.api == apiMemoryStores {
		return "basic"
	}
	return "full"
}

// createMemory serves POST …/memories (E5).
func (s *Server) createMemory(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, true)
	if err != nil {
		return err
	}
	var body memoryWrite
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Path == nil {
		return teammem.Errorf(teammem.EInvalid, "path is required")
	}
	key, err := teammem.MemoryKey(*body.Path)
	if err != nil {
		return err
	}
	if err := checkContent(body.Content); err != nil {
		return err
	}
	if body.Precondition != nil && body.Precondition.Type == "not_exists" {
		sr.api = apiClaudeCodeMemory
	}
	full, err := memoryView(r, writeViewDefault(sr))
	if err != nil {
		return err
	}
	// A create never overwrites, with or without Claude Code's not_exists:
	// the public API names no other way to create.
	up := teammem.Upsert{Key: key, Content: *body.Content, Base: new(string)}
	if body.Precondition != nil && body.Precondition.Type != "not_exists" {
		return teammem.Errorf(teammem.EInvalid, "a create takes only the not_exists precondition")
	}
	if _, err := s.storeWrite(r, sr, teammem.WriteRequest{Upserts: []teammem.Upsert{up}}); err != nil {
		return s.createConflict(r.Context(), sr, key, err)
	}
	return s.writeMemoryAt(w, r, sr, key, full)
}

// writeMemoryAt answers a write with the memory now at key.
func (s *Server) writeMemoryAt(w http.ResponseWriter, r *http.Request, sr *storeReq, key string, full bool) error {
	e, err := s.store.EntryGet(r.Context(), sr.p.Org.ID, sr.store.Space.ID, key)
	if err != nil {
		return err
	}
	return s.writeMemory(w, r, sr, e.MemoryID, full)
}

// writeMemory answers with one memory by id.
func (s *Server) writeMemory(w http.ResponseWriter, r *http.Request, sr *storeReq, id string, full bool) error {
	e, err := s.store.MemoryGet(r.Context(), sr.p.Org.ID, sr.store.Space.ID, id)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return teammem.Errorf(teammem.ENotFound, "memory %s not found", truncateID(id))
	} else if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, memoryOf(sr, e, full))
	return nil
}

// memoryByID loads the live memory the path names.
func (s *Server) memoryByID(r *http.Request, sr *storeReq) (teammem.Entry, error) {
	id := chi.URLParam(r, "memory_id")
	if !teammem.ValidMemoryID(id) {
		return teammem.Entry{}, teammem.Errorf(teammem.ENotFound, "memory %s not found", truncateID(id))
	}
	e, err := s.store.MemoryGet(r.Context(), sr.p.Org.ID, sr.store.Space.ID, id)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return e, teammem.Errorf(teammem.ENotFound, "memory %s not found", id)
	}
	return e, err
}

// getMemory serves GET …/memories/{memory_id} (E4): full content unless
// ?view=basic.
func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, false)
	if err != nil {
		return err
	}
	full, err := memoryView(r, "full")
	if err != nil {
		return err
	}
	e, err := s.memoryByID(r, sr)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, memoryOf(sr, e, full))
	return nil
}

// updateMemory serves POST …/memories/{memory_id} (E6): new content, a new
// path (a rename keeps the id), or both, under an optional content_sha256
// precondition (409 when it fails).
func (s *Server) updateMemory(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, true)
	if err != nil {
		return err
	}
	var body memoryWrite
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	full, err := memoryView(r, writeViewDefault(sr))
	if err != nil {
		return err
	}
	base, err := body.Precondition.base()
	if err != nil {
		return err
	}
	if base != nil && *base == "" {
		return teammem.Errorf(teammem.EInvalid, "an update takes only the content_sha256 precondition")
	}
	if body.Content != nil {
		if err := checkContent(body.Content); err != nil {
			return err
		}
	}
	e, err := s.memoryByID(r, sr)
	if err != nil {
		return err
	}
	if base == nil {
		must := "*" // the memory must still exist, whatever its content
		base = &must
	}
	newKey := e.Key
	if body.Path != nil {
		if newKey, err = teammem.MemoryKey(*body.Path); err != nil {
			return err
		}
	}
	if body.Content == nil && newKey == e.Key {
		return s.writeMemory(w, r, sr, e.MemoryID, full) // nothing to change
	}
	content := e.Content
	if body.Content != nil {
		content = *body.Content
	}
	req := teammem.WriteRequest{Upserts: []teammem.Upsert{{Key: newKey, Content: content, Base: base}}}
	if newKey != e.Key {
		// A rename: the old key goes (under the precondition), the new one
		// must be free and takes the memory's id, in one version.
		req.Upserts[0].Base, req.Upserts[0].MemoryID = new(string), e.MemoryID
		req.Deletes = []teammem.Delete{{Key: e.Key, Base: base}}
	}
	if _, err := s.storeWrite(r, sr, req); err != nil {
		if teammem.ErrorCode(err) == teammem.EConflict {
			if cur, ok := s.alreadyApplied(r, sr, e.MemoryID, newKey, content); ok {
				writeJSON(w, http.StatusOK, memoryOf(sr, cur, full))
				return nil
			}
			return s.updateConflict(r, sr, e, newKey, err)
		}
		return s.createConflict(r.Context(), sr, newKey, err)
	}
	return s.writeMemory(w, r, sr, e.MemoryID, full)
}

// alreadyApplied reports whether an update refused by its precondition
// asked for nothing new: the memory, read again, already has exactly the
// requested content at the requested path. The SDKs declare that such an
// update succeeds although the hashes differ (a retried write whose first
// answer was lost); it writes no version. Claude Code's dialect keeps its
// 409, which its client resolves by re-fetching.
func (s *Server) alreadyApplied(r *http.Request, sr *storeReq, id, key, content string) (teammem.Entry, bool) {
	if sr.api != apiMemoryStores {
		return teammem.Entry{}, false
	}
	cur, err := s.store.MemoryGet(r.Context(), sr.p.Org.ID, sr.store.Space.ID, id)
	if err != nil || cur.Key != key || cur.Content != content {
		return teammem.Entry{}, false
	}
	return cur, true
}

// updateConflict says which condition of an update failed: the memory's own
// content (its precondition) or, for a rename, the new path being taken.
func (s *Server) updateConflict(r *http.Request, sr *storeReq, e teammem.Entry, newKey string, err error) error {
	conflicts, _ := teammem.ErrorDetails(err)["conflicts"].([]teammem.Conflict)
	for _, c := range conflicts {
		if c.Key == newKey && newKey != e.Key {
			return s.conflictAt(r.Context(), sr, newKey, "a memory already exists at path "+teammem.MemoryPath(newKey))
		}
	}
	return preconditionFailed(e.Key, "the memory's content_sha256 does not match the precondition")
}

// deleteMemory serves DELETE …/memories/{memory_id} (E7), under
// ?expected_content_sha256= when given (409 when it no longer holds).
func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, true)
	if err != nil {
		return err
	}
	base := "*"
	if v := r.URL.Query().Get("expected_content_sha256"); v != "" {
		if !isSHA256Hex(v) {
			return teammem.Errorf(teammem.EInvalid, "expected_content_sha256 must be 64 hex digits")
		}
		base = teammem.ChecksumOfSHA256(v)
	}
	e, err := s.memoryByID(r, sr)
	if err != nil {
		return err
	}
	if _, err := s.storeWrite(r, sr, teammem.WriteRequest{Deletes: []teammem.Delete{{Key: e.Key, Base: &base}}}); err != nil {
		if teammem.ErrorCode(err) == teammem.EConflict {
			return preconditionFailed(e.Key, "the memory's content_sha256 does not match expected_content_sha256")
		}
		return err
	}
	writeJSON(w, http.StatusOK, deletedObject{ID: e.MemoryID, Type: "memory_deleted"})
	return nil
}

// listCursor is where a listing resumes: after a key, skipping the subtree
// of the last prefix item returned.
type listCursor struct{ after, skip string }

func (c listCursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.after + "\x00" + c.skip))
}

// decodeCursor reads a page cursor. What it names must be what encode
// could have written: a key (or nothing) and a directory prefix (or
// nothing), so a forged cursor is refused rather than run as a query.
func decodeCursor(v string) (listCursor, error) {
	bad := teammem.Errorf(teammem.EInvalid, "page is not a cursor this server gave out")
	b, err := base64.RawURLEncoding.DecodeString(v)
	after, skip, ok := strings.Cut(string(b), "\x00")
	if err != nil || !ok {
		return listCursor{}, bad
	}
	if after != "" && teammem.ValidateKey(after) != nil {
		return listCursor{}, bad
	}
	if dir, isDir := strings.CutSuffix(skip, "/"); skip != "" && (!isDir || teammem.ValidateKey(dir) != nil) {
		return listCursor{}, bad
	}
	return listCursor{after: after, skip: skip}, nil
}

// listQuery is a decoded listing request.
type listQuery struct {
	prefix string // key prefix: "" or ending in '/'
	depth  int
	limit  int
	full   bool
	cursor listCursor
}

func parseListQuery(r *http.Request) (listQuery, error) {
	var q listQuery
	var err error
	if q.full, err = memoryView(r, "basic"); err != nil {
		return q, err
	}
	max := 100
	if q.full {
		max = 20
	}
	if q.limit, err = queryInt(r, "limit", 20, 1, max); err != nil {
		return q, err
	}
	if q.depth, err = queryInt(r, "depth", 0, 0, teammem.MaxMemoryPathDepth); err != nil {
		return q, err
	}
	if v := r.URL.Query().Get("path_prefix"); v != "" && v != "/" {
		if !strings.HasSuffix(v, "/") {
			return q, teammem.Errorf(teammem.EInvalid, "path_prefix must end with /")
		}
		if _, err := teammem.MemoryKey(strings.TrimSuffix(v, "/")); err != nil {
			return q, err
		}
		q.prefix = v[1:]
	}
	if v := r.URL.Query().Get("order_by"); v != "" && v != "path" {
		return q, teammem.Errorf(teammem.EInvalid, "order_by must be path")
	}
	if v := r.URL.Query().Get("order"); v != "" && v != "asc" {
		return q, teammem.Errorf(teammem.EInvalid, "order must be asc")
	}
	if v := r.URL.Query().Get("page"); v != "" {
		if q.cursor, err = decodeCursor(v); err != nil {
			return q, err
		}
	}
	return q, nil
}

// listMemories serves GET …/memories (E3/E3'): a page in path order, with
// memory_prefix items for what lies deeper than depth (when not 0).
func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, false)
	if err != nil {
		return err
	}
	q, err := parseListQuery(r)
	if err != nil {
		return err
	}
	// A page of a store at a version never changes: served from the body
	// cache when this replica built it before (Claude Code's client lists
	// every store on every sync, and most syncs change nothing).
	key := bodyKey{space: sr.store.Space.ID, version: sr.store.Space.Version, repo: q.cacheKey()}
	if body, ok := s.cache.body(key); ok {
		writeJSONBytes(w, http.StatusOK, body)
		return nil
	}
	page, err := s.memoryPage(r, sr, q)
	if err != nil {
		return err
	}
	body, err := marshalJSON(page)
	if err != nil {
		return err
	}
	// The page was read between two reads of the head: the same version
	// both times means no write committed in between, so the page is that
	// version's and may be cached under it.
	if again, err := s.store.MemoryStoreGet(r.Context(), sr.p.Org.ID, sr.store.Space.UID); err == nil && again.Space.Version == key.version {
		s.cache.putBody(key, body)
	}
	writeJSONBytes(w, http.StatusOK, body)
	return nil
}

// cacheKey names a listing request in the body cache (bodyKey.repo, which
// no slug can collide with: it starts with a NUL).
func (q listQuery) cacheKey() string {
	return fmt.Sprintf("\x00memories\x00%s\x00%d\x00%d\x00%t\x00%s\x00%s", q.prefix, q.depth, q.limit, q.full, q.cursor.after, q.cursor.skip)
}

// memoryPage reads one page of a listing.
func (s *Server) memoryPage(r *http.Request, sr *storeReq, q listQuery) (memoryPage, error) {
	page := memoryPage{Data: make([]any, 0, q.limit)}
	cur := q.cursor
	batch := q.limit + 1
	for done := false; !done; {
		entries, err := s.store.MemoriesList(r.Context(), sr.p.Org.ID, sr.store.Space.ID, teammem.MemoryFilter{
			Prefix: q.prefix, AfterKey: cur.after, Limit: batch, WithContent: q.full})
		if err != nil {
			return page, err
		}
		done = len(entries) < batch
		for _, e := range entries {
			if cur.skip != "" && strings.HasPrefix(e.Key, cur.skip) {
				cur.after = e.Key
				continue
			}
			if len(page.Data) == q.limit {
				next := cur.encode()
				page.NextPage, done = &next, true
				break
			}
			cur.after, cur.skip = e.Key, ""
			if dir, ok := deeperThan(e.Key[len(q.prefix):], q.depth); ok {
				cur.skip = q.prefix + dir
				page.Data = append(page.Data, memoryPrefix{Type: "memory_prefix", Path: teammem.MemoryPath(cur.skip)})
				continue
			}
			page.Data = append(page.Data, memoryOf(sr, e, q.full))
		}
	}
	return page, nil
}

// deeperThan returns the first depth segments of rel plus "/" when rel lies
// deeper than depth segments (depth 0: never).
func deeperThan(rel string, depth int) (string, bool) {
	if depth == 0 {
		return "", false
	}
	i := 0
	for n := 0; n < depth; n++ {
		j := strings.IndexByte(rel[i:], '/')
		if j < 0 {
			return "", false
		}
		i += j + 1
	}
	return rel[:i], true
}
