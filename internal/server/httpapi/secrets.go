package httpapi

import (
	"github.com/teammem/teammem/internal/teammem"
)

// refuseSecret is teammem.RefuseSecret with the server's scanner.
func (s *Server) refuseSecret(org teammem.Org, field, value string) error {
	return teammem.RefuseSecret(s.writer.Scanner, org, field, value)
}
