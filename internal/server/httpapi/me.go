package httpapi

import (
	"net/http"

	"github.com/teammem/teammem/internal/wire"
)

// getMe serves GET /v1/me: who the key belongs to, described by its
// metadata, never its secret. Every usable key may ask who it is.
func (s *Server) getMe(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	writeJSON(w, http.StatusOK, wire.Me{Org: orgView(p.Org), User: p.User, Key: p.Key})
	return nil
}
