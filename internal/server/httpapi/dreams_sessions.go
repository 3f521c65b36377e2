package httpapi

import (
	"context"

	"github.com/teammem/teammem/internal/teammem"
)

// sessionVisible reports whether p may see the session id names, for a
// dream's sessions input. This stub knows no sessions yet, so every
// sessions input is a 404; the sessions mapping (issue 24, A4) replaces
// this file.
func (s *Server) sessionVisible(ctx context.Context, p teammem.Principal, id string) (bool, error) {
	return false, nil
}
