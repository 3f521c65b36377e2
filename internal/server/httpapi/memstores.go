package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// Memory stores (design §4.5): every space served as a store at
// /v1/memory_stores/{store_id}, in two dialects on the same routes, each a
// thin decode → core → encode layer over s.write:
//   - Anthropic's public Memory Stores API (memstores_api.go), as the
//     official SDKs send it: ?beta=true and an anthropic-beta header;
//   - Claude Code's memory-service dialect (memstores_cli.go): the not_exists
//     create precondition, the NDJSON export, the exact refusal messages
//     its client maps to per-file notices.
//
// Both answer errors in Anthropic's envelope, which the Claude Code client
// parses too. Their memory shapes are the same: the client's schemas are
// loose and ignore the public API's extra fields.

// memstoreDialect names the dialect of a request for metrics and audit: the
// public API when the client says it speaks the beta (?beta=true, which the
// SDKs always add, or an anthropic-beta header naming a memory or managed
// agents beta), else Claude Code's memory service, whose client sends
// neither (reference §3). Features only one dialect has (the export, the
// not_exists precondition) count as Claude Code's whatever the headers say.
func memstoreDialect(r *http.Request) string {
	if r.URL.Query().Get("beta") == "true" {
		return apiMemoryStores
	}
	for _, v := range r.Header.Values("anthropic-beta") {
		if strings.Contains(v, "agent-memory") || strings.Contains(v, "managed-agents") {
			return apiMemoryStores
		}
	}
	return apiClaudeCodeMemory
}

// isStorePath reports whether path is under the routes that answer in
// Anthropic's error envelope: memory stores and sessions.
func isStorePath(path string) bool {
	for _, prefix := range []string{"/v1/memory_stores", "/v1/sessions"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok && (rest == "" || rest[0] == '/') {
			return true
		}
	}
	return false
}

// isStoreMemoryWrite reports whether a request writes memories of a store
// (a create, update or delete under …/memories) or creates a store, which
// takes a write token (on the one write path, or in createStore) instead
// of a read token.
func isStoreMemoryWrite(method, path string) bool {
	if method == http.MethodPost && path == "/v1/memory_stores" {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/v1/memory_stores/")
	if !ok || method == http.MethodGet || method == http.MethodHead {
		return false
	}
	_, sub, _ := strings.Cut(rest, "/")
	return sub == "memories" || strings.HasPrefix(sub, "memories/")
}

// storeReq is a resolved request on one store.
type storeReq struct {
	p     teammem.Principal
	store teammem.MemoryStore
	api   string
}

// resolveStore loads the store the path names and authorizes the caller:
// a key sees its org's team spaces and API stores and its own personal
// spaces; anything else does not exist as far as it can tell.
func (s *Server) resolveStore(r *http.Request, write bool) (*storeReq, error) {
	return s.resolveStoreID(r, chi.URLParam(r, "store_id"), write)
}

// resolveStoreID is resolveStore for a store id given other than in the
// path (a dream's input).
func (s *Server) resolveStoreID(r *http.Request, id string, write bool) (*storeReq, error) {
	p := principal(r)
	notFound := teammem.Errorf(teammem.ENotFound, "memory store %s not found", truncateID(id))
	uid, ok := teammem.StoreUID(id)
	if !ok {
		return nil, notFound
	}
	m, err := s.memoryStore(r.Context(), p.Org.ID, uid)
	switch {
	case teammem.ErrorCode(err) == teammem.ENotFound:
		return nil, notFound
	case err != nil:
		return nil, err
	case m.Space.Scope == teammem.ScopePersonal && m.Space.UserID != p.User.ID:
		return nil, notFound
	}
	if err := teammem.Authorize(p, teammem.ScopeAction(m.Space.Scope, false), false); err != nil {
		return nil, notFound // a viewer cannot see personal stores at all
	}
	if write {
		if err := teammem.Authorize(p, teammem.ScopeAction(m.Space.Scope, true), true); err != nil {
			return nil, err
		}
	}
	return &storeReq{p: p, store: m, api: memstoreDialect(r)}, nil
}

// truncateID bounds an id echoed in a message.
func truncateID(id string) string {
	if len(id) > 80 {
		id = id[:80] + "…"
	}
	return strings.ToValidUTF8(id, "?")
}

// storeWrite commits req to the store through the one write path, with
// the dialect's rules around it: archived stores refuse every write but a
// delete (the SDKs declare their memories can still be deleted); a
// secret the org's policy would skip is refused instead (a client told
// "saved" would never retry, nor warn its user); a write held for review,
// or refused by poisoning: reject, answers 400 "content rejected by safety
// check" (teammem.ScreenedMessage), which Claude Code's client turns into a
// per-file notice rather than suppressing the store.
//
// The archived check here only spares a scan: the one that counts runs in
// the commit, under the space's lock that archiving takes too, since the
// store was loaded before and may have been archived since.
func (s *Server) storeWrite(r *http.Request, sr *storeReq, req teammem.WriteRequest) (teammem.WriteResult, error) {
	if sr.store.Archived() && len(req.Upserts) > 0 {
		return teammem.WriteResult{}, teammem.StoreArchived()
	}
	req.Explicit, req.RefuseSecrets = true, true
	call := writeCall(r, sr.p, sr.api, sr.store.Repo.Slug, sr.store.Space.Scope, req)
	call.Store = &sr.store
	res, err := s.write(r.Context(), call)
	if err != nil {
		s.forgetIfArchived(sr, err)
		return res, storeWriteError(err)
	}
	if res.Proposal != nil {
		// Held for review: the memory stores have no 202. Claude Code's
		// client maps this message to a per-file notice (content_screened)
		// and keeps its other files syncing; the SDKs raise a 400.
		return res, res.Proposal.HeldError()
	}
	if len(res.SkippedSecrets) > 0 {
		return res, teammem.Errorf(teammem.ESecretDetected, teammem.MsgContentSecret).
			WithDetails(map[string]any{"rule_ids": teammem.RuleIDs(res.SkippedSecrets)})
	}
	return res, nil
}

// forgetIfArchived drops a cached store that a refusal says was archived
// since it was cached (elsewhere, or by a request that raced this one).
func (s *Server) forgetIfArchived(sr *storeReq, err error) {
	if teammem.ErrorReason(err) == teammem.ReasonArchived {
		s.cache.dropStore(sr.store)
	}
}

// storeWriteError turns the write path's refusals into the messages the
// Claude Code client maps (reference §8), by the stores' table of reasons.
func storeWriteError(err error) error {
	var te *teammem.Error
	if !errors.As(err, &te) {
		return err
	}
	msg := storeRefusals[te.Reason].message
	if msg == nil {
		return err
	}
	c := *te
	c.Message = msg(te)
	return &c
}

// conflictAt is the 409 of a write whose path is taken, naming the memory
// that holds it as the SDKs and Claude Code's client read it:
// error.conflicting_path and error.conflicting_memory_id (the SDKs'
// memory_path_conflict_error). key may be a directory ("notes/"): then the
// first memory below it is named, the one that blocks the write.
func (s *Server) conflictAt(ctx context.Context, sr *storeReq, key, msg string) error {
	details := map[string]any{"conflicting_path": teammem.MemoryPath(key)}
	if e, ok := s.blockingMemory(ctx, sr, key); ok {
		details["conflicting_path"], details["conflicting_memory_id"] = teammem.MemoryPath(e.Key), e.MemoryID
	}
	return teammem.Errorf(teammem.EConflict, "%s", msg).WithDetails(details)
}

// blockingMemory finds the live memory at key, else the first one below it.
func (s *Server) blockingMemory(ctx context.Context, sr *storeReq, key string) (teammem.Entry, bool) {
	if e, err := s.store.EntryGet(ctx, sr.p.Org.ID, sr.store.Space.ID, strings.TrimSuffix(key, "/")); err == nil {
		return e, true
	}
	below, err := s.store.MemoriesList(ctx, sr.p.Org.ID, sr.store.Space.ID, teammem.MemoryFilter{
		Prefix: strings.TrimSuffix(key, "/") + "/", Limit: 1})
	if err != nil || len(below) == 0 {
		return teammem.Entry{}, false
	}
	return below[0], true
}

// preconditionFailed is the 409 of a write whose precondition
// (content_sha256 or expected_content_sha256) no longer holds: the SDKs'
// memory_precondition_failed_error, which carries no state of the memory.
// It keeps conflicting_path for Claude Code's client, which reads it on
// any 409.
func preconditionFailed(key, msg string) error {
	return teammem.Errorf(teammem.EPreconditionFailed, "%s", msg).
		WithDetails(map[string]any{"conflicting_path": teammem.MemoryPath(key)})
}

// createConflict explains a failed create: the path exists (a 409 naming
// it), or a file-vs-directory clash with another path (a 409 naming the
// memory above or below it, which the client reads as a clash it cannot
// adopt).
func (s *Server) createConflict(ctx context.Context, sr *storeReq, key string, err error) error {
	var te *teammem.Error
	if !errors.As(err, &te) {
		return err
	}
	switch {
	case te.Code == teammem.EConflict:
		return s.conflictAt(ctx, sr, key, "a memory already exists at path "+teammem.MemoryPath(key))
	case te.Code == teammem.EInvalid && te.Details["conflicts_with"] != nil:
		other, _ := te.Details["conflicts_with"].(string)
		return s.conflictAt(ctx, sr, other, "path "+teammem.MemoryPath(key)+" clashes with "+teammem.MemoryPath(other)+" (a file and a directory cannot share a path)")
	}
	return err
}

// queryInt parses an optional integer query parameter within [min, max].
func queryInt(r *http.Request, name string, def, min, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, teammem.Errorf(teammem.EInvalid, "%s must be an integer from %d to %d", name, min, max)
	}
	return n, nil
}

// ensureMemoryStore serves POST /v1/repos/{owner}/{name}/{scope}/memory_store:
// the repo and space exist afterwards (by the rules of a first push: the org
// may create repos, the role must allow writing the scope, personal is the
// caller's own), and the answer is the space as a memory store, with its
// repo, scope and the store path a Claude Code client is configured with.
func (s *Server) ensureMemoryStore(w http.ResponseWriter, r *http.Request) error {
	call, err := s.v1Call(r, teammem.WriteRequest{})
	if err != nil {
		return err
	}
	if err := teammem.Authorize(call.Principal, teammem.ScopeAction(call.Scope, true), true); err != nil {
		return err
	}
	t, err := s.writer.Ensure(r.Context(), call)
	if err != nil {
		return err
	}
	m, err := s.store.MemoryStoreGet(r.Context(), call.Principal.Org.ID, t.Space.UID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, repoStoreObject{storeObject: storeOf(m), Repo: call.Repo, Scope: call.Scope,
		Path: "/v1/memory_stores/" + m.ID()})
	return nil
}

// repoStoreObject is a repo space's memory store with where it lives.
type repoStoreObject struct {
	storeObject
	Repo  string        `json:"repo"`
	Scope teammem.Scope `json:"scope"`
	Path  string        `json:"path"`
}
