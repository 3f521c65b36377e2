package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// routes lists every route of every dialect in one place: health, the
// Claude Code endpoint, the server operators' plane, the org admin plane,
// telemetry and the /v1 repos, spaces and entries. A test checks that it
// matches api/openapi.yaml. Every handler asks authorize (policy.go) or
// writes through s.writer, which does.
func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.NotFound(s.handle(noRoute))
	r.MethodNotAllowed(s.methodNotAllowed)
	r.Get("/healthz", s.handle(s.healthz))
	r.Get("/readyz", s.handle(s.readyz))
	// The web console (HTML, not part of the API spec): its pages call the
	// /v1 routes below in process (internal/server/console).
	if ui := s.newConsole(); ui != nil {
		r.Get("/ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusMovedPermanently) })
		r.Mount("/ui/", ui)
	}
	if s.cfg.MetricsToken != "" {
		r.Method(http.MethodGet, "/metrics", s.metricsOnAPI())
	}
	// Claude Code (legacy team memory protocol).
	r.Group(func(r chi.Router) {
		r.Use(s.requireKey, s.limitReads, s.limitBody)
		r.Get("/api/claude_code/team_memory", s.handle(s.getTeamMemory))
		r.Put("/api/claude_code/team_memory", s.handle(s.putTeamMemory))
	})
	// Remote MCP (mcp.go): the Streamable HTTP transport, authenticated by
	// key, and the protected resource metadata its 401 points to.
	r.Get("/.well-known/oauth-protected-resource", s.mcpMetadata)
	r.Get(mcpMetadataPath, s.mcpMetadata)
	r.Group(func(r chi.Router) {
		r.Use(s.requireMCPKey, s.limitReads, s.limitBody)
		r.Method(http.MethodGet, "/mcp", s.mcp)
		r.Method(http.MethodPost, "/mcp", s.mcp)
		r.Method(http.MethodDelete, "/mcp", s.mcp)
	})
	r.Route("/v1", func(r chi.Router) {
		// Server operators (TEAMMEM_ADMIN_KEY).
		r.Group(func(r chi.Router) {
			r.Use(s.requireAdminKey, s.limitBody)
			r.Get("/admin/orgs", s.handle(s.adminListOrgs))
			r.Post("/admin/orgs", s.handle(s.adminCreateOrg))
			r.Patch("/admin/orgs/{slug}", s.handle(s.adminPatchOrg))
		})
		r.Group(func(r chi.Router) {
			r.Use(s.requireKey, s.limitReads, s.limitBody)
			// The caller, the org admin plane and telemetry.
			r.Get("/me", s.handle(s.getMe))
			r.Get("/repos", s.handle(s.listRepos))
			r.Get("/search", s.handle(s.getSearch))
			r.Get("/org", s.handle(s.getOrg))
			r.Patch("/org", s.handle(s.patchOrg))
			r.Get("/org/users", s.handle(s.listUsers))
			r.Post("/org/users", s.handle(s.createUser))
			r.Patch("/org/users/{handle}", s.handle(s.patchUser))
			r.Get("/org/keys", s.handle(s.listKeys))
			r.Post("/org/keys", s.handle(s.createKey))
			r.Delete("/org/keys/{id}", s.handle(s.revokeKey))
			r.Get("/org/audit", s.handle(s.listAudit))
			r.Post("/telemetry/events", s.handle(s.postTelemetry(s.clientMetrics())))
			// Proposals: team writes held for review.
			r.Get("/proposals", s.handle(s.listProposals))
			r.Get("/proposals/{id}", s.handle(s.getProposal))
			r.Post("/proposals/{id}/approve", s.handle(s.approveProposal))
			r.Post("/proposals/{id}/reject", s.handle(s.rejectProposal))
			// Repos, spaces and entries. A repo is {owner}/{name}; a
			// "host/owner/name" repo sends its owner part escaped, as
			// host%2Fowner.
			r.Get("/repos/{owner}/{name}", s.handle(s.getRepo))
			r.Get("/repos/{owner}/{name}/events", s.handle(s.streamEvents))
			r.Route("/repos/{owner}/{name}/{scope}", func(r chi.Router) {
				r.Get("/", s.handle(s.getSpace))
				r.Delete("/", s.handle(s.deleteSpace))
				r.Post("/batch", s.handle(s.postBatch))
				r.Get("/changes", s.handle(s.getChanges))
				r.Get("/MEMORY.md", s.handle(s.getIndex))
				r.Get("/export", s.handle(s.getExport))
				// Entries: a key spans the rest of the path, slashes and
				// all, up to a route's tail (keyroutes.go). A key whose
				// last segment is "history" is thus the history of the
				// key before it, as api/openapi.yaml says.
				r.Mount("/entries/", s.keyRoutes(func(k *keyRoutes) {
					k.Get("/{key}/history", s.handle(s.getHistory))
					k.Get("/*", s.handle(s.getEntry))
					k.Put("/*", s.handle(s.putEntry))
					k.Delete("/*", s.handle(s.deleteEntry))
					k.Post("/{key}/restore", s.handle(s.restoreEntry))
					k.Post("/{key}/history/{version}/redact", s.handle(s.redactVersion))
				}))
				r.Post("/memory_store", s.handle(s.ensureMemoryStore))
			})
		})
		// Memory stores: Anthropic's public Memory Stores API and Claude
		// Code's memory-service dialect on the same routes (memstores.go),
		// errors in Anthropic's envelope.
		r.Group(func(r chi.Router) {
			r.Use(s.requireStoreKey, s.limitReads, s.limitBody)
			r.Get("/memory_stores", s.storeHandle(s.listStores))
			r.Post("/memory_stores", s.storeHandle(s.createStore))
			r.Get("/memory_stores/{store_id}", s.storeHandle(s.getStore))
			r.Post("/memory_stores/{store_id}", s.storeHandle(s.updateStore))
			r.Delete("/memory_stores/{store_id}", s.storeHandle(s.deleteStore))
			r.Post("/memory_stores/{store_id}/archive", s.storeHandle(s.archiveStore))
			r.Get("/memory_stores/{store_id}/memories", s.storeHandle(s.listMemories))
			r.Post("/memory_stores/{store_id}/memories", s.storeHandle(s.createMemory))
			r.Get("/memory_stores/{store_id}/memories/export", s.storeHandle(s.exportMemories))
			r.Get("/memory_stores/{store_id}/memories/{memory_id}", s.storeHandle(s.getMemory))
			r.Post("/memory_stores/{store_id}/memories/{memory_id}", s.storeHandle(s.updateMemory))
			r.Delete("/memory_stores/{store_id}/memories/{memory_id}", s.storeHandle(s.deleteMemory))
			r.Get("/memory_stores/{store_id}/memory_versions", s.storeHandle(s.listVersions))
			r.Get("/memory_stores/{store_id}/memory_versions/{version_id}", s.storeHandle(s.getVersion))
			r.Post("/memory_stores/{store_id}/memory_versions/{version_id}/redact", s.storeHandle(s.redactMemoryVersion))
			// Sessions teammem knows (sessions.go), in the same envelope.
			r.Get("/sessions", s.storeHandle(s.listSessions))
			r.Get("/sessions/{session_id}", s.storeHandle(s.getSession))
			r.Put("/sessions/{session_id}/notes", s.storeHandle(s.putSessionNotes))
		})
		// Dreams: Anthropic's Dreams API (dreams.go), errors in the same
		// envelope.
		r.Group(func(r chi.Router) {
			r.Use(s.requireStoreKey, s.limitReads, s.limitBody)
			r.Post("/dreams", s.storeHandle(s.createDream))
			r.Get("/dreams", s.storeHandle(s.listDreams))
			r.Get("/dreams/{dream_id}", s.storeHandle(s.getDream))
			r.Post("/dreams/{dream_id}/archive", s.storeHandle(s.archiveDream))
			r.Post("/dreams/{dream_id}/cancel", s.storeHandle(s.cancelDream))
			r.Get("/dreams/{dream_id}/diff", s.storeHandle(s.dreamDiff))
			r.Post("/dreams/{dream_id}/apply", s.storeHandle(s.applyDream))
			r.Post("/dreams/{dream_id}/discard", s.storeHandle(s.discardDream))
		})
	})
	return r
}

// noRoute answers a path no route serves.
func noRoute(w http.ResponseWriter, r *http.Request) error {
	return teammem.Errorf(teammem.ENotFound, "no such route")
}

// methodNotAllowed answers a method no route serves on a path another
// method's route does, with the Allow header of those methods.
func (s *Server) methodNotAllowed(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Allow", allowedMethods(s.router, req))
	if isStorePath(req.URL.Path) {
		writeJSON(w, http.StatusMethodNotAllowed, storeErrorBody{Type: "error",
			Error: map[string]any{"type": "invalid_request_error", "message": "method not allowed on this route"}})
		return
	}
	writeJSON(w, http.StatusMethodNotAllowed, wire.ErrorBody{Error: wire.ErrorObject{Type: teammem.EInvalid, Message: "method not allowed on this route"}})
}

// keyRoutes returns the routes of a space's entries that add lists, with
// the API's answers to a path or a method none of them serves.
func (s *Server) keyRoutes(add func(*keyRoutes)) *keyRoutes {
	k := &keyRoutes{notFound: s.handle(noRoute), methodNotAllowed: http.HandlerFunc(s.methodNotAllowed)}
	add(k)
	return k
}
