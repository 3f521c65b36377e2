package httpapi

import (
	"net/http"

	"github.com/teammem/teammem/internal/teammem"
)

// meResponse is the body of GET /v1/me: who the key belongs to. The key is
// described by its metadata, never its secret.
type meResponse struct {
	Org  teammem.Org    `json:"org"`
	User teammem.User   `json:"user"`
	Key  teammem.APIKey `json:"key"`
}

// getMe serves GET /v1/me. Every usable key may ask who it is.
func (s *Server) getMe(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	writeJSON(w, http.StatusOK, meResponse{Org: orgView(p.Org), User: p.User, Key: p.Key})
	return nil
}
