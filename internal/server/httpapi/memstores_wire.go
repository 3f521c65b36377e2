package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// The wire of the memory store dialects: Anthropic's error envelope and the
// store, memory and version objects, field for field as the official SDK
// (v2.15.0) decodes them.

// storeErrorBody is Anthropic's error envelope.
type storeErrorBody struct {
	Type  string         `json:"type"` // always "error"
	Error map[string]any `json:"error"`
}

// storeErrorTypes maps domain codes to the envelope's status and type. Size
// refusals are 400s: Claude Code's client maps a 400 invalid_request_error
// by its message to a per-file or per-store reason (reference §8).
var storeErrorTypes = map[string]struct {
	status int
	typ    string
}{
	teammem.EInvalid:            {http.StatusBadRequest, "invalid_request_error"},
	teammem.EUnauthorized:       {http.StatusUnauthorized, "authentication_error"},
	teammem.EForbidden:          {http.StatusForbidden, "permission_error"},
	teammem.ENotFound:           {http.StatusNotFound, "not_found_error"},
	teammem.EGone:               {http.StatusNotFound, "not_found_error"},
	teammem.EConflict:           {http.StatusConflict, "memory_path_conflict_error"},
	teammem.EPreconditionFailed: {http.StatusConflict, "memory_precondition_failed_error"},
	teammem.ETooLarge:           {http.StatusBadRequest, "invalid_request_error"},
	teammem.ESecretDetected:     {http.StatusBadRequest, "invalid_request_error"},
	teammem.ERateLimited:        {http.StatusTooManyRequests, "rate_limit_error"},
	teammem.EUnavailable:        {http.StatusServiceUnavailable, "overloaded_error"},
	teammem.EInternal:           {http.StatusInternalServerError, "api_error"},
}

// storeRefusals is the memory stores' table of refusal reasons. message
// rewrites the write path's refusal (storeWriteError) into the text Claude
// Code's client maps to a per-file or per-store reason (reference §8); nil
// keeps the refusal's own. status and typ, when set, replace those of its
// code in the envelope.
var storeRefusals = map[teammem.Reason]struct {
	message func(*teammem.Error) string
	status  int
	typ     string
}{
	teammem.ReasonTooManyEntries: {message: constMessage(teammem.MsgStoreFullCount)},
	teammem.ReasonEntryTooLarge:  {message: entryTooLargeMessage},
	teammem.ReasonBodyTooLarge:   {status: http.StatusRequestEntityTooLarge, typ: "request_too_large"},
	teammem.ReasonSecretDetected: {message: constMessage(teammem.MsgContentSecret)},
	// poisoning: reject reads as a held write does: the safety check
	// refused this file (content_screened), not the store.
	teammem.ReasonPoisoningDetected: {message: constMessage(teammem.ScreenedMessage)},
	teammem.ReasonHeldForReview:     {}, // already ScreenedMessage
	teammem.ReasonArchived:          {}, // already MsgArchived
	teammem.ReasonTooManyStores:     {},
	teammem.ReasonTooManyKeys:       {},
}

func constMessage(m string) func(*teammem.Error) string {
	return func(*teammem.Error) string { return m }
}

// entryTooLargeMessage names the org's own entry cap when it is below the
// stores' fixed one, whose message Claude Code's client knows.
func entryTooLargeMessage(te *teammem.Error) string {
	if max, _ := te.Details["max_entry_bytes"].(int); max > 0 && max < teammem.MaxMemoryBytes {
		return fmt.Sprintf("content must be at most %d bytes", max)
	}
	return teammem.MsgContentTooLarge
}

// writeStoreError writes err in Anthropic's envelope. A 429 or 503 always
// carries Retry-After, so the Claude Code client backs off instead of
// counting a permanent failure; every other 4xx says x-should-retry:
// false, the hint the official SDKs read before retrying (they would
// otherwise retry a 409 as they do a 429).
func (s *Server) writeStoreError(w http.ResponseWriter, r *http.Request, err error) {
	err = asTooLarge(s.withhold(r, err))
	code := teammem.ErrorCode(err)
	t, ok := storeErrorTypes[code]
	if !ok {
		t, code = storeErrorTypes[teammem.EInternal], teammem.EInternal
	}
	details := teammem.ErrorDetails(err)
	if _, ok := details["conflicting_path"]; code == teammem.EConflict && !ok {
		t.typ = "conflict_error" // a conflict that is not about a path (a redaction of live content)
	}
	if t.status == http.StatusConflict && memstoreDialect(r) == apiClaudeCodeMemory {
		// Claude Code's memory service keeps the one 409 type it always
		// had (reference claude-code-memory-stores §4.2): its client reads
		// the status and conflicting_*, not the SDKs' finer types.
		t.typ = "conflict_error"
	}
	if sr := storeRefusals[teammem.ErrorReason(err)]; sr.status != 0 {
		t.status, t.typ = sr.status, sr.typ
	}
	if code == teammem.EInternal || code == teammem.EUnavailable {
		s.logFailure(r, code, err)
	}
	switch code {
	case teammem.EUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="teammem"`)
	case teammem.ERateLimited:
		ra := "1"
		if v, ok := details["retry_after_seconds"]; ok {
			ra = jsonString(v)
		}
		w.Header().Set("Retry-After", ra)
	case teammem.EUnavailable:
		w.Header().Set("Retry-After", "5")
	}
	if retryable := t.status == http.StatusTooManyRequests || t.status >= 500; !retryable {
		w.Header().Set("X-Should-Retry", "false")
	}
	body := map[string]any{"type": t.typ, "message": teammem.ErrorMessage(err)}
	for _, k := range []string{"conflicting_path", "conflicting_memory_id", "rule_ids", "changed_paths", "proposal_id"} {
		if v, ok := details[k]; ok {
			body[k] = v
		}
	}
	writeJSON(w, t.status, storeErrorBody{Type: "error", Error: body})
}

// msgNoWorkspaces refuses the SDKs' workspace_id (the
// anthropic-workspace-id header).
const msgNoWorkspaces = "teammem has no workspaces: leave out workspace_id (the anthropic-workspace-id header); a key's organization is its scope"

// requireStoreKey is requireKey for the store routes: refusals in
// Anthropic's envelope, and a request naming a workspace is refused.
func (s *Server) requireStoreKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := reqContextOf(r.Context()); c != nil && c.inProcess {
			next.ServeHTTP(w, r) // the console's own call, as its signed-in key (requireKey)
			return
		}
		p, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, err, s.writeStoreError)
			return
		}
		if c := reqContextOf(r.Context()); c != nil {
			c.caller = p
		}
		s.metrics.InitOrg(p.Org.Slug)
		if r.Header.Get("anthropic-workspace-id") != "" {
			// The SDKs' workspace_id: teammem has no workspaces, and
			// silently ignoring a scope the caller asked for could read
			// or write a store it did not mean.
			s.writeStoreError(w, r, teammem.Errorf(teammem.EInvalid, "%s", msgNoWorkspaces))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// memoryObject is a memory (type "memory"); Content is null in the basic
// view.
type memoryObject struct {
	Type             string    `json:"type"`
	ID               string    `json:"id"`
	Path             string    `json:"path"`
	Content          *string   `json:"content"`
	ContentSHA256    string    `json:"content_sha256"`
	ContentSizeBytes int       `json:"content_size_bytes"`
	MemoryStoreID    string    `json:"memory_store_id"`
	MemoryVersionID  string    `json:"memory_version_id"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// memoryPrefix is a directory in a depth-limited listing.
type memoryPrefix struct {
	Type string `json:"type"` // "memory_prefix"
	Path string `json:"path"`
}

// memoryOf encodes an entry. created_at is when the memory id was first
// written, so edits and renames keep it; a store that never recorded it
// (a zero time) falls back to the last change.
func memoryOf(sr *storeReq, e teammem.Entry, full bool) memoryObject {
	created := e.MemoryCreatedAt
	if created.IsZero() || created.Unix() == 0 {
		created = e.UpdatedAt
	}
	m := memoryObject{Type: "memory", ID: e.MemoryID, Path: teammem.MemoryPath(e.Key), ContentSHA256: teammem.ContentSHA256(e.Checksum),
		ContentSizeBytes: e.Size, MemoryStoreID: sr.store.ID(), CreatedAt: created, UpdatedAt: e.UpdatedAt}
	if e.VersionRowID != 0 {
		m.MemoryVersionID = teammem.VersionID(e.VersionRowID)
	}
	if full {
		c := e.Content
		m.Content = &c
	}
	return m
}

// memoryPage is a page of a listing, the PageCursor shape.
type memoryPage struct {
	Data     []any   `json:"data"`
	NextPage *string `json:"next_page"`
}

// deletedObject answers a delete.
type deletedObject struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}
