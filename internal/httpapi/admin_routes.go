package httpapi

import "github.com/go-chi/chi/v5"

// orgRoutes registers the org admin plane and telemetry under /v1 (the
// caller holds a valid key). Every handler asks authorize (policy.go).
func (s *Server) orgRoutes(r chi.Router) {
	r.Get("/me", s.handle(s.getMe))
	r.Get("/repos", s.handle(s.listRepos))

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
}

// serverAdminRoutes registers the server operators' routes under /v1 (the
// caller holds TEAMMEM_ADMIN_KEY).
func (s *Server) serverAdminRoutes(r chi.Router) {
	r.Get("/admin/orgs", s.handle(s.adminListOrgs))
	r.Post("/admin/orgs", s.handle(s.adminCreateOrg))
	r.Patch("/admin/orgs/{slug}", s.handle(s.adminPatchOrg))
}
